package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// TestReadSchedulerView reads a chapter 09 log at -v=3: decisions, victims,
// nominations (the first time per node), the nodes the scheduler saw added
// and the bound pods it saw deleted (not a pending pod's "Delete event for
// unscheduled pod", which binding also logs), for one namespace only.
func TestReadSchedulerView(t *testing.T) {
	log := strings.Join([]string{
		`I1123 19:21:30.000000   24715 eventhandlers.go:239] "Add event for node" node="n1"`,
		`I1123 19:21:31.000000   24715 eventhandlers.go:239] "Add event for node" node="n1"`,
		`I1123 19:21:33.587231   24715 preemption.go:159] "the target node for the preemption is determined" logger="DefaultPreemption" pod="chaos-09/high" node="n1"`,
		`I1123 19:21:33.587231   24715 preemption.go:159] "the target node for the preemption is determined" logger="DefaultPreemption" pod="other/high" node="n1"`,
		`I1123 19:21:33.587593   24715 schedule_one.go:576] "Updating pod condition and nominated node name" pod="chaos-09/high" nominatedNodeName="n1"`,
		`I1123 19:21:34.587593   24715 schedule_one.go:576] "Updating pod condition and nominated node name" pod="chaos-09/high" nominatedNodeName="n1"`,
		`I1123 19:21:33.600000   24715 executor.go:116] "Preemptor Pod preempted victim Pod" preemptor="chaos-09/high" victim="chaos-09/low" node="n1"`,
		`I1123 19:21:33.700000   24715 eventhandlers.go:230] "Delete event for scheduled pod" pod="chaos-09/low"`,
		`I1123 19:21:33.800000   24715 eventhandlers.go:176] "Delete event for unscheduled pod" pod="chaos-09/gone"`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "s.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readSchedulerView(path, "chaos-09")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.decisions) != 1 || got.decisions[0].At.IsZero() {
		t.Fatalf("decisions = %+v, want one with its time", got.decisions)
	}
	want := &schedulerView{
		decisions: []preemptionDecision{{Pod: "high", Node: "n1", At: got.decisions[0].At}},
		victims:   map[string]preemptedVictim{"low": {Preemptor: "high", Node: "n1"}},
		nodeAdded: map[string]time.Time{"n1": got.nodeAdded["n1"]},
		podGone:   map[string]time.Time{"low": got.podGone["low"]},
		nominated: map[string]map[string]time.Time{"high": {"n1": got.nominated["high"]["n1"]}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(schedulerView{})); diff != "" {
		t.Errorf("readSchedulerView (-want +got):\n%s", diff)
	}
	if d := got.nominated["high"]["n1"].Sub(got.decisions[0].At); d != 362*time.Microsecond {
		t.Errorf("the nomination is kept from its first line: %s after the decision, want 362µs", d)
	}
	if d := got.nodeAdded["n1"].Sub(got.decisions[0].At); d >= -3*time.Second {
		t.Errorf("the node is added from its first line: %s before the decision, want 3.587231s", -d)
	}
}

// TestRoomWithout checks the "preemption not needed" judgement: a node
// counts as room only if the scheduler had seen it, it had not changed
// lately, and the pod fitted it through the whole window, counting bindings up to bindingLag later and
// the room held for nominated pods of at least the pod's priority.
func TestRoomWithout(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 19, 0, 0, 0, time.UTC)
	at := t0.Add(time.Minute)
	node := MakeNode("n1", NodeSpec{CPU: "2"})
	pods := map[string]*v1.Pod{
		"high":  MakePod("ns", "high", PodSpec{CPU: "1"}),
		"other": MakePod("ns", "other", PodSpec{CPU: "1500m"}),
		"rival": MakePod("ns", "rival", PodSpec{CPU: "1500m"}),
	}
	priority := map[string]int32{"high": 1000, "other": 10, "rival": 1000}
	created := map[string][]nodeChange{"n1": {{Received: t0, At: t0, Node: node}}}
	seen := map[string]time.Time{"n1": t0}
	tests := []struct {
		name     string
		nodes    map[string][]nodeChange
		bindings []binding
		view     schedulerView
		wantRoom string
	}{
		{name: "an empty node the scheduler knew: not needed", nodes: created, view: schedulerView{nodeAdded: seen}, wantRoom: "n1"},
		{name: "the scheduler saw the node only 2s before", nodes: created, view: schedulerView{nodeAdded: map[string]time.Time{"n1": at.Add(-2 * time.Second)}}},
		{name: "a Binding 20s later was assumed before", nodes: created, view: schedulerView{nodeAdded: seen},
			bindings: []binding{{Pod: "other", Node: "n1", Code: 201, At: at.Add(20 * time.Second)}}},
		{name: "a Binding 40s later is not counted", nodes: created, view: schedulerView{nodeAdded: seen},
			bindings: []binding{{Pod: "other", Node: "n1", Code: 201, At: at.Add(40 * time.Second)}}, wantRoom: "n1"},
		{name: "the bound pod was seen deleted before the window", nodes: created,
			view:     schedulerView{nodeAdded: seen, podGone: map[string]time.Time{"other": at.Add(-4 * time.Second)}},
			bindings: []binding{{Pod: "other", Node: "n1", Code: 201, At: t0}}, wantRoom: "n1"},
		{name: "the bound pod was seen deleted within the window", nodes: created,
			view:     schedulerView{nodeAdded: seen, podGone: map[string]time.Time{"other": at.Add(-time.Second)}},
			bindings: []binding{{Pod: "other", Node: "n1", Code: 201, At: t0}}},
		{name: "room held for a nominated pod of equal priority", nodes: created,
			view: schedulerView{nodeAdded: seen, nominated: map[string]map[string]time.Time{"rival": {"n1": at.Add(-time.Second)}}}},
		{name: "a nomination of lower priority holds no room", nodes: created,
			view: schedulerView{nodeAdded: seen, nominated: map[string]map[string]time.Time{"other": {"n1": at.Add(-time.Second)}}}, wantRoom: "n1"},
		{name: "the node changed 20s before: the scheduler may not have seen it", view: schedulerView{nodeAdded: seen},
			nodes: map[string][]nodeChange{"n1": {{Received: t0, At: t0, Node: node}, {Received: at.Add(-20 * time.Second), At: at.Add(-20 * time.Second), Node: node}}}},
		{name: "a node created 10s before, seen by the scheduler 5s before the window", view: schedulerView{nodeAdded: map[string]time.Time{"n1": at.Add(-8 * time.Second)}},
			nodes: map[string][]nodeChange{"n1": {{Received: at.Add(-10 * time.Second), At: at.Add(-10 * time.Second), Node: node}}}, wantRoom: "n1"},
		{name: "a refused Binding held the room while assumed", nodes: created, view: schedulerView{nodeAdded: seen},
			bindings: []binding{{Pod: "other", Node: "n1", Code: 409, At: at}}},
		{name: "the node was deleted within the window", view: schedulerView{nodeAdded: seen},
			nodes: map[string][]nodeChange{"n1": {{Received: t0, At: t0, Node: node}, {Received: at.Add(-time.Second), At: at.Add(-time.Second)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := roomWithout(pods["high"], func(p string) int32 { return priority[p] }, at, tt.nodes, tt.bindings, &tt.view, pods)
			if diff := cmp.Diff(tt.wantRoom, got); diff != "" {
				t.Errorf("roomWithout (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGangMemberOn: a preemption's node held a gang member if the member's
// Binding there was accepted before the decision and the member was not
// deleted before it; pods on their own, refused Bindings and other nodes
// do not count.
func TestGangMemberOn(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	groupOf := map[string]string{"g-0": "g", "g-1": "g"}
	tests := []struct {
		name     string
		bindings []binding
		deleted  map[string]time.Time
		want     bool
	}{
		{name: "a member bound before", bindings: []binding{{Pod: "g-0", Node: "n", Code: 201, At: at(1)}}, want: true},
		{name: "a pod on its own", bindings: []binding{{Pod: "p", Node: "n", Code: 201, At: at(1)}}},
		{name: "a member on another node", bindings: []binding{{Pod: "g-0", Node: "m", Code: 201, At: at(1)}}},
		{name: "a member bound after", bindings: []binding{{Pod: "g-0", Node: "n", Code: 201, At: at(6)}}},
		{name: "a refused Binding", bindings: []binding{{Pod: "g-0", Node: "n", Code: 409, At: at(1)}}},
		{name: "a member deleted before", bindings: []binding{{Pod: "g-1", Node: "n", Code: 201, At: at(1)}}, deleted: map[string]time.Time{"g-1": at(2)}},
		{name: "a member deleted after", bindings: []binding{{Pod: "g-1", Node: "n", Code: 201, At: at(1)}}, deleted: map[string]time.Time{"g-1": at(9)}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, gangMemberOn("n", at(5), groupOf, tt.bindings, tt.deleted)); diff != "" {
				t.Errorf("gangMemberOn (-want, +got):\n%s", diff)
			}
		})
	}
}
