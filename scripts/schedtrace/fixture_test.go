package schedtrace

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fixture is chapter 12's trace of the KWOK scenario
// preemption-evicts-whole-gang, recorded by
//
//	go run ./scripts/cmd/trace --scenario preemption-evicts-whole-gang
//
// on 2026-11-26: a gang of two (podGroupAttempt, a schedulingAttempt per
// member) is bound; then a pod of higher priority fits nowhere, preempts
// the whole gang (its first attempt's PostFilter, then an
// asynchronous preemption evicting both members) and is bound by its
// second attempt.
const fixture = "testdata/preemption-evicts-whole-gang.trace"

func readFixture(t *testing.T) *Trace {
	t.Helper()
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestRecordedFixture reads the scheduler's own trace and checks the
// attempts, their decisions, the regions the chapter marks, the arrows,
// and the CPU accounting: no region ran longer than it lasted, and an
// attempt's CPU view adds up to its CPU.
func TestRecordedFixture(t *testing.T) {
	tr := readFixture(t)
	type attempt struct{ Type, Pod, Decision string }
	var got []attempt
	for _, id := range tr.Attempts(Selection{Max: 10}) {
		got = append(got, attempt{tr.Tasks[id].Type, tr.Pod(id), tr.Decision(id)})
	}
	const ns = "ch12-preemption-evicts-whole-gang/"
	want := []attempt{
		{"podGroupAttempt", ns + "team", "podGroup Success: 2 scheduled, 0 unschedulable"},
		{"schedulingAttempt", ns + "high", "unschedulable Unschedulable: 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector. preemption: found a potential placement for pod on node node-0, preempting 2 victims"},
		{"schedulingAttempt", ns + "high", "scheduled node=node-0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts (-want, +got):\n%s", diff)
	}

	count := map[string]int{}
	for _, r := range tr.Regions {
		count[r.Type]++
		if r.CPU < 0 || r.CPU > r.End-r.Start {
			t.Errorf("%s on G%d: CPU %d ns outside [0, its %d ns]", r.Type, r.Goroutine, r.CPU, r.End-r.Start)
		}
	}
	wantCount := map[string]int{
		"schedulingCycle": 2, "podGroupCycle": 1, "podGroupPodSchedulingAlgorithm": 2, "bindingCycle": 3,
		"PostFilter": 1, "DefaultPreemption": 1, "evaluate": 1, "DryRunPreemption": 1, "asyncPreemption": 1, "PreemptPod": 2,
		"PlacementFeasible": 3, "Permit": 3, "WaitOnPermit": 1, "Bind": 3, "PostBind": 3,
	}
	gotCount := map[string]int{}
	for k := range wantCount {
		gotCount[k] = count[k]
	}
	if diff := cmp.Diff(wantCount, gotCount); diff != "" {
		t.Errorf("regions (-want, +got):\n%s", diff)
	}

	var flows []string
	for _, f := range tr.Flows() {
		flows = append(flows, f.From.Type+" "+tr.Pod(f.From.Task)+" -> "+f.To.Type+" "+tr.Pod(f.To.Task))
	}
	wantFlows := []string{
		"podGroupPodSchedulingAlgorithm " + ns + "member-0 -> bindingCycle " + ns + "member-0",
		"podGroupPodSchedulingAlgorithm " + ns + "member-1 -> bindingCycle " + ns + "member-1",
		"DefaultPreemption " + ns + "high -> asyncPreemption " + ns + "high",
		"schedulingCycle " + ns + "high -> bindingCycle " + ns + "high",
	}
	if diff := cmp.Diff(wantFlows, flows); diff != "" {
		t.Errorf("arrows (-want, +got):\n%s", diff)
	}

	for _, id := range tr.Attempts(Selection{Max: 10}) {
		a := tr.Layout(id)
		var laid int64
		for _, r := range a.CPULayout() {
			laid += r.W
		}
		if laid != a.CPU || a.CPU <= 0 || a.CPU > (a.End-a.Start)*int64(len(a.Goroutines)) {
			t.Errorf("attempt %s: CPU view %d ns, CPU %d ns, over %d ns on %d goroutines", tr.Pod(id), laid, a.CPU, a.End-a.Start, len(a.Goroutines))
		}
	}
}

// TestFixtureToChrome converts the fixture: the JSON passes Validate, and
// its slices carry the regions, one bind_id pair per arrow.
func TestFixtureToChrome(t *testing.T) {
	tr := readFixture(t)
	var out bytes.Buffer
	if err := tr.WriteChrome(&out); err != nil {
		t.Fatal(err)
	}
	if err := Validate(out.Bytes()); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph     string
			BindID uint64 `json:"bind_id"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	slices, ends := 0, 0
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			slices++
			if e.BindID != 0 {
				ends++
			}
		}
	}
	if diff := cmp.Diff([2]int{len(tr.Regions), 2 * len(tr.Flows())}, [2]int{slices, ends}); diff != "" {
		t.Errorf("slices and flow ends (-want, +got):\n%s", diff)
	}
}
