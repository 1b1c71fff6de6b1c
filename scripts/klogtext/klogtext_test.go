package klogtext

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04:05.000000", s, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		name   string
		line   string
		want   Record
		wantOK bool
	}{
		{
			name:   "a chapter's failure line, with a JSON list",
			line:   `I1127 01:34:44.104248   27500 scheduling_queue.go:412] "Pod moved to an internal scheduling queue" pod="ch08/wants-b" event="ScheduleAttemptFailure" queue="Unschedulable" schedulingCycle=1 unschedulablePlugins=["NodeAffinity"]`,
			want:   Record{Severity: 'I', Time: at("2026-11-27 01:34:44.104248"), Source: "scheduling_queue.go:412", Msg: "Pod moved to an internal scheduling queue", Fields: map[string]string{"pod": "ch08/wants-b", "event": "ScheduleAttemptFailure", "queue": "Unschedulable", "schedulingCycle": "1", "unschedulablePlugins": `["NodeAffinity"]`}},
			wantOK: true,
		},
		{
			name:   "upstream's key with a space, and a JSON set with a space inside a string",
			line:   `I1127 01:34:44.104248   27500 scheduling_queue.go:901] "Pod moved to an internal scheduling queue" pod="default/p" schedulingCycle=3 unschedulable plugins={"Node Affinity":{},"X":{}} hint=1`,
			want:   Record{Severity: 'I', Time: at("2026-11-27 01:34:44.104248"), Source: "scheduling_queue.go:901", Msg: "Pod moved to an internal scheduling queue", Fields: map[string]string{"pod": "default/p", "schedulingCycle": "3", "unschedulable plugins": `{"Node Affinity":{},"X":{}}`, "hint": "1"}},
			wantOK: true,
		},
		{
			name:   "an escaped quote in a value, and an error",
			line:   `E0101 00:00:00.000001       1 schedule_one.go:9] "Error scheduling pod; retrying" err="node \"n1\" not found" pod="a/b"`,
			want:   Record{Severity: 'E', Time: at("2026-01-01 00:00:00.000001"), Source: "schedule_one.go:9", Msg: "Error scheduling pod; retrying", Fields: map[string]string{"err": `node "n1" not found`, "pod": "a/b"}},
			wantOK: true,
		},
		{
			name:   "no pairs",
			line:   `I1127 01:34:44.104248   27500 main.go:1] "Starting"`,
			want:   Record{Severity: 'I', Time: at("2026-11-27 01:34:44.104248"), Source: "main.go:1", Msg: "Starting", Fields: map[string]string{}},
			wantOK: true,
		},
		{name: "an unstructured line", line: `I1127 01:34:44.104248   27500 main.go:1] Starting the scheduler`},
		{name: "a continuation line", line: "\tline two of a multi-line value"},
		{name: "not klog", line: "panic: oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Parse(tt.line, 2026)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`["NodeAffinity","TaintToleration"]`, []string{"NodeAffinity", "TaintToleration"}},
		{`{"TaintToleration":{},"NodeAffinity":{}}`, []string{"NodeAffinity", "TaintToleration"}},
		{`NodeAffinity`, []string{"NodeAffinity"}},
		{`[]`, []string{}},
		{``, nil},
		{`null`, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Strings(tt.in)); diff != "" {
			t.Errorf("Strings(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
