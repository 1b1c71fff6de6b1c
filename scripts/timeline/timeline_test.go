package timeline

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A chapter 07 log, cut down: pod a fails, waits in the pool, an event
// moves it to backoffQ, its backoff ends and it is bound; pod b is bound at
// once; the other lines are not about the queue.
const log07 = `I1122 04:54:28.000000   21114 scheduling_queue.go:202] "Pod moved to an internal scheduling queue" pod="ns/a" event="UnscheduledPodAdd" queue="Active"
I1122 04:54:28.100000   21114 schedule_one.go:67] "Attempting to schedule pod" pod="ns/a" attempt=1
I1122 04:54:28.200000   21114 schedule_one.go:386] "Scheduling decision" pod="ns/a" attempt=1 result="unschedulable" reason="Unschedulable" message="0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
I1122 04:54:28.200000   21114 scheduling_queue.go:271] "Pod moved to an internal scheduling queue" pod="ns/a" event="ScheduleAttemptFailure" queue="Unschedulable" unschedulablePlugins=["NodeAffinity"]
I1122 04:54:28.500000   21114 eventhandlers.go:90] "Update event for node" node="n"
I1122 04:54:29.000000   21114 backoff_queue.go:82] "Pod moved to an internal scheduling queue" pod="ns/a" event="NodeUpdateNodeLabel" queue="Backoff" backoff="200ms"
I1122 04:54:29.200000   21114 scheduling_queue.go:202] "Pod moved to an internal scheduling queue" pod="ns/a" event="BackoffComplete" queue="Active"
I1122 04:54:29.250000   21114 schedule_one.go:67] "Attempting to schedule pod" pod="ns/a" attempt=2
I1122 04:54:29.300000   21114 schedule_one.go:128] "Scheduling decision" pod="ns/a" attempt=2 result="scheduled" node="n" evaluatedNodes=1 feasibleNodes=1
I1122 04:54:29.400000   21114 scheduling_queue.go:202] "Pod moved to an internal scheduling queue" pod="other/b" event="UnscheduledPodAdd" queue="Active"
I1122 04:54:29.500000   21114 schedule_one.go:67] "Attempting to schedule pod" pod="other/b" attempt=1
I1122 04:54:29.600000   21114 schedule_one.go:128] "Scheduling decision" pod="other/b" attempt=1 result="scheduled" node="n" evaluatedNodes=1 feasibleNodes=1
`

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestParse(t *testing.T) {
	tl, err := Parse(strings.NewReader(log07))
	if err != nil {
		t.Fatal(err)
	}
	want := []*Pod{
		{
			Name: "ns/a",
			Segments: []Segment{
				{State: Active, Start: 0, End: ms(100), Event: "UnscheduledPodAdd"},
				{State: InFlight, Start: ms(100), End: ms(200)},
				{State: Unschedulable, Start: ms(200), End: ms(1000), Event: "ScheduleAttemptFailure"},
				{State: Backoff, Start: ms(1000), End: ms(1200), Event: "NodeUpdateNodeLabel"},
				{State: Active, Start: ms(1200), End: ms(1250), Event: "BackoffComplete"},
				{State: InFlight, Start: ms(1250), End: ms(1300)},
			},
			Attempts: []Attempt{{At: ms(200), Result: "unschedulable"}, {At: ms(1300), Result: "scheduled"}},
			Bound:    ms(1300),
		},
		{
			Name: "other/b",
			Segments: []Segment{
				{State: Active, Start: ms(1400), End: ms(1500), Event: "UnscheduledPodAdd"},
				{State: InFlight, Start: ms(1500), End: ms(1600)},
			},
			Attempts: []Attempt{{At: ms(1600), Result: "scheduled"}},
			Bound:    ms(1600),
		},
	}
	if diff := cmp.Diff(want, tl.Pods); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Marker{{At: ms(500), Label: "node updated n"}}, tl.Markers); diff != "" {
		t.Errorf("markers (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(tl.Markers, tl.Filter("ns/").Markers); diff != "" {
		t.Errorf("markers after Filter (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[State]time.Duration{Active: ms(150), InFlight: ms(150), Unschedulable: ms(800), Backoff: ms(200)}, tl.Pods[0].Totals()); diff != "" {
		t.Errorf("totals of a (-want, +got):\n%s", diff)
	}
}

// TestParseOpenEnds: a pod never bound keeps its last state to the end of
// the log; a chapter without queue moves (01-05) still gets its attempts.
func TestParseOpenEnds(t *testing.T) {
	log := `I1122 10:00:00.000000       1 scheduling_queue.go:1] "Pod moved to an internal scheduling queue" pod="ns/p" event="ScheduleAttemptFailure" queue="Unschedulable"
I1122 10:00:01.000000       1 schedule_one.go:1] "Scheduling decision" pod="ns/q" attempt=1 result="error" reason="SchedulerError" message="x"
I1122 10:00:03.000000       1 eventhandlers.go:1] "Add event for node" node="n"
`
	tl, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := []*Pod{
		{Name: "ns/p", Segments: []Segment{{State: Unschedulable, Start: 0, End: 3 * time.Second, Event: "ScheduleAttemptFailure"}}, Bound: -1},
		{Name: "ns/q", Attempts: []Attempt{{At: time.Second, Result: "error"}}, Bound: -1},
	}
	if diff := cmp.Diff(want, tl.Pods); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

func TestFilter(t *testing.T) {
	tl, err := Parse(strings.NewReader(log07))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range tl.Filter("other/").Pods {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff([]string{"other/b"}, got); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

// TestWriteSVG checks what the drawing holds: a row label per pod, a bar
// per segment, a mark per attempt, a dot per binding, and the stamp.
func TestWriteSVG(t *testing.T) {
	tl, err := Parse(strings.NewReader(log07))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tl.WriteSVG(&buf, "07-backoff: a <test>", "made on a test machine"); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	counts := map[string]int{
		"row labels":    strings.Count(svg, `dominant-baseline="middle"`),
		"bars":          strings.Count(svg, "</title></rect>"),
		"attempt marks": strings.Count(svg, "<title>attempt: "),
		"bound dots":    strings.Count(svg, "<title>bound at "),
		"event markers": strings.Count(svg, "<title>node updated n at 0.50s</title></line>"),
	}
	want := map[string]int{"row labels": 2, "bars": 8, "attempt marks": 3, "bound dots": 2, "event markers": 1}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
	for _, s := range []string{"07-backoff: a &lt;test&gt;", "made on a test machine", "backoffQ", "unschedulable pool", "</svg>"} {
		if !strings.Contains(svg, s) {
			t.Errorf("the SVG lacks %q", s)
		}
	}
}

func TestTickStep(t *testing.T) {
	tests := []struct {
		span, want time.Duration
	}{
		{time.Second, time.Second},
		{10 * time.Second, time.Second},
		{11 * time.Second, 2 * time.Second},
		{45 * time.Second, 5 * time.Second},
		{10 * time.Minute, time.Minute},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tickStep(tt.span)); diff != "" {
			t.Errorf("tickStep(%v) (-want, +got):\n%s", tt.span, diff)
		}
	}
}
