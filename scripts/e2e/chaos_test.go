package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadChaosLog reads a -v=3 log as the chapters write it: the deletion
// a node's first delete line gives, other namespaces are ignored, and the
// scheduler's and DefaultBinder's bind lines count once per cycle.
func TestReadChaosLog(t *testing.T) {
	log := strings.Join([]string{
		`I1122 07:10:57.455200   24389 schedule_one.go:69] "Attempting to schedule pod" pod="chaos-08/p1" attempt=1`,
		`I1122 07:10:57.460000   24389 schedule_one.go:69] "Attempting to schedule pod" pod="other/p9" attempt=1`,
		`I1122 07:10:57.471087   24389 eventhandlers.go:179] "Delete event for node" node="n1"`,
		`I1122 07:10:57.472570   24389 schedule_one.go:150] "Attempting to bind pod to node" pod="chaos-08/p1" node="n1"`,
		`I1122 07:10:57.472593   24389 default_binder.go:70] "Attempting to bind pod to node" pod="chaos-08/p1" node="n1"`,
		`I1122 07:10:57.480000   24389 default_binder.go:70] "Attempting to bind pod to node" pod="other/p9" node="n1"`,
		`W1122 07:10:58.000000   24389 reflector.go:1] "Delete event for node" node="n1"`,
		`some line without a header`,
		`I1122 07:10:59.000000   24389 schedule_one.go:69] "Attempting to schedule pod" pod="chaos-08/p1" attempt=2`,
		`I1122 07:10:59.100000   24389 schedule_one.go:150] "Attempting to bind pod to node" pod="chaos-08/p1" node="n2"`,
		`I1122 07:10:59.100100   24389 default_binder.go:70] "Attempting to bind pod to node" pod="chaos-08/p1" node="n2"`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "s.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	seen, binds, err := readChaosLog(path, "chaos-08", nil)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { return klogTimeLocal("I" + s) }
	if diff := cmp.Diff(map[string]time.Time{"n1": at("1122 07:10:57.471087")}, seen); diff != "" {
		t.Errorf("deletions seen (-want +got):\n%s", diff)
	}
	want := []logBind{
		{Pod: "p1", Node: "n1", Cycle: at("1122 07:10:57.455200"), At: at("1122 07:10:57.472570")},
		{Pod: "p1", Node: "n2", Cycle: at("1122 07:10:59.000000"), At: at("1122 07:10:59.100000")},
	}
	if diff := cmp.Diff(want, binds); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
}

// TestReadChaosLogPodGroupCycles reads kube-scheduler's lines (-v=3) of a
// gang's cycles: the second cycle, which retries the member whose Binding
// failed, is not the cycle of a member that still waited to bind from the
// first; a chapter's log, without member lines, gives a group's cycle to
// every member.
func TestReadChaosLogPodGroupCycles(t *testing.T) {
	at := func(s string) time.Time { return klogTimeLocal("I1127 13:42:" + s) }
	groupOf := map[string]string{"g-0": "g", "g-1": "g", "g-2": "g"}
	tests := []struct {
		name string
		log  []string
		want []logBind
	}{
		{
			name: "kube-scheduler: a retry cycle for one member",
			log: []string{
				`I1127 13:42:24.754340   1 schedule_one_podgroup.go:126] "Attempting to schedule pod group" podGroupType="podgroup" podGroup="ns/g"`,
				`I1127 13:42:24.754436   1 schedule_one_podgroup.go:661] "Attempting to schedule a pod belonging to a pod group" podGroupType="podgroup" podGroup="ns/g" pod="ns/g-2"`,
				`I1127 13:42:24.755619   1 schedule_one_podgroup.go:661] "Attempting to schedule a pod belonging to a pod group" podGroupType="podgroup" podGroup="ns/g" pod="ns/g-0"`,
				`I1127 13:42:24.756521   1 schedule_one_podgroup.go:661] "Attempting to schedule a pod belonging to a pod group" podGroupType="podgroup" podGroup="ns/g" pod="ns/g-1"`,
				`I1127 13:42:24.760000   1 default_binder.go:70] "Attempting to bind pod to node" logger="Bind.DefaultBinder" podGroupType="podgroup" podGroup="ns/g" pod="ns/g-2" node="n2"`,
				`I1127 13:42:24.761516   1 default_binder.go:70] "Attempting to bind pod to node" logger="Bind.DefaultBinder" podGroupType="podgroup" podGroup="ns/g" pod="ns/g-1" node="n0"`,
				`I1127 13:42:25.095769   1 schedule_one_podgroup.go:126] "Attempting to schedule pod group" podGroupType="podgroup" podGroup="ns/g"`,
				`I1127 13:42:25.096000   1 schedule_one_podgroup.go:661] "Attempting to schedule a pod belonging to a pod group" podGroupType="podgroup" podGroup="ns/g" pod="ns/g-1"`,
				`I1127 13:42:25.215737   1 default_binder.go:70] "Attempting to bind pod to node" logger="Bind.DefaultBinder" podGroupType="podgroup" podGroup="ns/g" pod="ns/g-0" node="n2"`,
				`I1127 13:42:25.300000   1 default_binder.go:70] "Attempting to bind pod to node" logger="Bind.DefaultBinder" podGroupType="podgroup" podGroup="ns/g" pod="ns/g-1" node="n1"`,
			},
			want: []logBind{
				{Pod: "g-2", Node: "n2", Cycle: at("24.754340"), At: at("24.760000")},
				{Pod: "g-1", Node: "n0", Cycle: at("24.754340"), At: at("24.761516")},
				{Pod: "g-0", Node: "n2", Cycle: at("24.754340"), At: at("25.215737")},
				{Pod: "g-1", Node: "n1", Cycle: at("25.095769"), At: at("25.300000")},
			},
		},
		{
			name: "a chapter: no member lines",
			log: []string{
				`I1127 13:42:24.754340   1 schedule_one_podgroup.go:60] "Attempting to schedule pod group" podGroup="ns/g"`,
				`I1127 13:42:24.760000   1 default_binder.go:70] "Attempting to bind pod to node" pod="ns/g-0" node="n0"`,
				`I1127 13:42:24.761000   1 default_binder.go:70] "Attempting to bind pod to node" pod="ns/g-1" node="n1"`,
				`I1127 13:42:24.762000   1 default_binder.go:70] "Attempting to bind pod to node" pod="ns/g-2" node="n2"`,
			},
			want: []logBind{
				{Pod: "g-0", Node: "n0", Cycle: at("24.754340"), At: at("24.760000")},
				{Pod: "g-1", Node: "n1", Cycle: at("24.754340"), At: at("24.761000")},
				{Pod: "g-2", Node: "n2", Cycle: at("24.754340"), At: at("24.762000")},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.log")
			if err := os.WriteFile(path, []byte(strings.Join(tt.log, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			_, binds, err := readChaosLog(path, "ns", groupOf)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, binds); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMayHaveLanded: a pod bound without an accepted Binding is explained
// only by a Binding to that node that ended in a server error.
func TestMayHaveLanded(t *testing.T) {
	bindings := []binding{
		{Pod: "a", Node: "n1", Code: 504},
		{Pod: "a", Node: "n2", Code: 409},
		{Pod: "b", Node: "n1", Code: 409},
	}
	tests := []struct {
		pod, node string
		want      bool
	}{
		{pod: "a", node: "n1", want: true},
		{pod: "a", node: "n2", want: false},
		{pod: "b", node: "n1", want: false},
		{pod: "c", node: "n1", want: false},
	}
	for _, tt := range tests {
		if got := mayHaveLanded(bindings, tt.pod, tt.node); got != tt.want {
			t.Errorf("mayHaveLanded(%s, %s) = %v, want %v", tt.pod, tt.node, got, tt.want)
		}
	}
}

func TestLateBinds(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	seen := map[string]time.Time{"gone": ms(10)}
	tests := []struct {
		name           string
		bind           logBind
		wantViolations []string
		wantInFlight   int
	}{
		{"node never deleted", logBind{Pod: "p", Node: "kept", Cycle: ms(20), At: ms(30)}, nil, 0},
		{"issued before the deletion was seen", logBind{Pod: "p", Node: "gone", Cycle: ms(0), At: ms(5)}, nil, 0},
		{"issued after, by a cycle that started before", logBind{Pod: "p", Node: "gone", Cycle: ms(5), At: ms(11)}, nil, 1},
		{"chosen by a cycle that started after", logBind{Pod: "p", Node: "gone", Cycle: ms(12), At: ms(13)},
			[]string{"pod p: a cycle started 2ms after the scheduler saw node gone deleted chose it"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			violations, inFlight := lateBinds(seen, []logBind{tt.bind})
			if diff := cmp.Diff(tt.wantViolations, violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if inFlight != tt.wantInFlight {
				t.Errorf("in flight: got %d, want %d", inFlight, tt.wantInFlight)
			}
		})
	}
}

func TestParseCacheSize(t *testing.T) {
	tests := []struct {
		name    string
		page    string
		want    map[string]int
		wantErr bool
	}{
		{
			name: "all three types",
			page: "# HELP scheduler_cache_size [ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.\n# TYPE scheduler_cache_size gauge\nscheduler_cache_size{type=\"assumed_pods\"} 0\nscheduler_cache_size{type=\"nodes\"} 310\nscheduler_cache_size{type=\"pods\"} 2710\nscheduler_pending_pods{queue=\"active\"} 3\n",
			want: map[string]int{"assumed_pods": 0, "nodes": 310, "pods": 2710},
		},
		{
			name:    "a type missing",
			page:    "scheduler_cache_size{type=\"nodes\"} 3\nscheduler_cache_size{type=\"pods\"} 2\n",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCacheSize(strings.NewReader(tt.page))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
				t.Errorf("cache size (-want, +got):\n%s", diff)
			}
		})
	}
}
