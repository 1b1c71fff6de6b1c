package watch

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/scripts/klogtext"
)

// applyLines feeds a log to a new lane.
func applyLines(t *testing.T, log string) *Lane {
	t.Helper()
	l := NewLane("test")
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		r, ok := klogtext.Parse(strings.TrimSpace(line), 2026)
		if !ok {
			t.Fatalf("not a klog line: %s", line)
		}
		l.ApplyLog(r)
	}
	return l
}

func at(s string) time.Time {
	tm, err := time.ParseInLocation("2006-01-02 15:04:05.000000", "2026-11-27 "+s, time.Local)
	if err != nil {
		panic(err)
	}
	return tm
}

// TestChapterDialect reads the lines a chapter logs at -v=10 for a pod
// that fails, waits in the pool, is moved by a node's arrival, backs off
// and is bound.
func TestChapterDialect(t *testing.T) {
	l := applyLines(t, `
I1127 10:00:00.000000 1 scheduling_queue.go:311] "Pod moved to an internal scheduling queue" pod="ns/p" event="PodAdd" queue="Active"
I1127 10:00:00.100000 1 schedule_one.go:112] "Attempting to schedule pod" pod="ns/p" attempt=1
I1127 10:00:00.101000 1 schedule_one.go:640] "Plugin rejected node for pod" pod="ns/p" plugin="NodeAffinity" node="n1" code="UnschedulableAndUnresolvable" status="node(s) didn't match Pod's node affinity/selector"
I1127 10:00:00.102000 1 schedule_one.go:766] "Scheduling decision" pod="ns/p" attempt=1 result="unschedulable" reason="Unschedulable" message="0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
I1127 10:00:00.103000 1 scheduling_queue.go:787] "Pod moved to an internal scheduling queue" pod="ns/p" event="ScheduleAttemptFailure" queue="Unschedulable" schedulingCycle=1 unschedulablePlugins=["NodeAffinity"]
I1127 10:00:01.000000 1 eventhandlers.go:357] "Add event for node" node="n2"
I1127 10:00:01.001000 1 scheduling_queue.go:311] "Pod moved to an internal scheduling queue" pod="ns/p" event="NodeAdd" queue="Backoff" backoff="1s"
I1127 10:00:02.001000 1 scheduling_queue.go:311] "Pod moved to an internal scheduling queue" pod="ns/p" event="BackoffComplete" queue="Active"
I1127 10:00:02.002000 1 schedule_one.go:112] "Attempting to schedule pod" pod="ns/p" attempt=2
I1127 10:00:02.003000 1 schedule_one.go:640] "Plugin rejected node for pod" pod="ns/p" plugin="NodeAffinity" node="n1" code="UnschedulableAndUnresolvable" status="node(s) didn't match Pod's node affinity/selector"
I1127 10:00:02.003100 1 schedule_one.go:640] "Node passed the Filter plugins for pod" pod="ns/p" node="n2"
I1127 10:00:02.004000 1 schedule_one.go:503] "Plugin's raw score of node for pod" pod="ns/p" plugin="NodeResourcesFit" node="n2" score=37 weight=1
I1127 10:00:02.004100 1 schedule_one.go:503] "Plugin scored node for pod" pod="ns/p" plugin="NodeResourcesFit" node="n2" score=100
I1127 10:00:02.004200 1 schedule_one.go:505] "Calculated node's final score for pod" pod="ns/p" node="n2" score=100
I1127 10:00:02.005000 1 schedule_one.go:274] "Scheduling decision" pod="ns/p" attempt=2 result="scheduled" node="n2" evaluatedNodes=2 feasibleNodes=1
`)
	p := l.Pods["ns/p"]
	wantMoves := []Move{
		{At: at("10:00:00.000000"), Queue: Active, Event: "PodAdd"},
		{At: at("10:00:00.100000"), Queue: InFlight},
		{At: at("10:00:00.103000"), Queue: Unschedulable, Event: "ScheduleAttemptFailure"},
		{At: at("10:00:01.001000"), Queue: Backoff, Event: "NodeAdd"},
		{At: at("10:00:02.001000"), Queue: Active, Event: "BackoffComplete"},
		{At: at("10:00:02.002000"), Queue: InFlight},
	}
	if diff := cmp.Diff(wantMoves, p.Moves); diff != "" {
		t.Errorf("moves (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"NodeAffinity"}, p.UnschedulablePlugins); diff != "" {
		t.Errorf("unschedulable plugins (-want +got):\n%s", diff)
	}
	end1, end2 := at("10:00:00.102000"), at("10:00:02.005000")
	wantAttempts := []*Attempt{
		{
			Start: at("10:00:00.100000"), End: &end1, Result: "unschedulable",
			Message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
			Filter:  map[string]Verdict{"n1": {Plugin: "NodeAffinity", Reason: "node(s) didn't match Pod's node affinity/selector"}},
		},
		{
			Start: at("10:00:02.002000"), End: &end2, Result: "scheduled", Node: "n2", EvaluatedNodes: 2, FeasibleNodes: 1,
			Filter: map[string]Verdict{"n1": {Plugin: "NodeAffinity", Reason: "node(s) didn't match Pod's node affinity/selector"}, "n2": {}},
			Scores: map[string]map[string]*Score{"n2": {"NodeResourcesFit": {Raw: ptr[int64](37), Normalized: ptr[int64](100), Weight: ptr[int64](1), Weighted: 100}}},
			Totals: map[string]int64{"n2": 100},
		},
	}
	if diff := cmp.Diff(wantAttempts, p.Attempts); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	if p.Queue != Scheduled {
		t.Errorf("queue = %q, want Scheduled (until the apiserver says it is bound)", p.Queue)
	}
	want := Capabilities{Queue: true, FilterVerdicts: true, Scores: true, RawScores: true, BackoffExpiry: true}
	if diff := cmp.Diff(want, l.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Event{{At: at("10:00:01.000000"), Source: "scheduler", Reason: "Add event for node", Object: "n2"}}, l.Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestUpstreamDialect reads kube-scheduler v1.37.1's lines at -v=10: the
// move into activeQ at -v=5 as an entity, the failure line's key with a
// space, the preemption, and the success line of the binding cycle.
func TestUpstreamDialect(t *testing.T) {
	l := applyLines(t, `
I1127 10:00:00.000000 1 active_queue.go:414] "Entity moved to an internal scheduling queue" type="pod" entity="ns/high" event="PodAdd" queue="Active"
I1127 10:00:00.100000 1 schedule_one.go:117] "Attempting to schedule pod" pod="ns/high"
I1127 10:00:00.101000 1 preemption.go:249] "Dry run the preemption" pod="ns/high" potentialNodesNumber=2 pdbsNumber=0 offset=0 candidatesNumber=2
I1127 10:00:00.101500 1 default_preemption.go:406] "Pods are potential preemption victims on node" pod="ns/high" pods=[{"name":"low-1","namespace":"ns"}] node="n1"
I1127 10:00:00.102000 1 preemption.go:201] "the target node for the preemption is determined" node="n1" pod="ns/high"
I1127 10:00:00.103000 1 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="ns/high" err="0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
I1127 10:00:00.104000 1 scheduling_queue.go:901] "Pod moved to an internal scheduling queue" pod="ns/high" event="ScheduleAttemptFailure" queue="Backoff" schedulingCycle=1 unschedulable plugins={"NodeResourcesFit":{}} hint=1
I1127 10:00:00.110000 1 executor.go:120] "Preemptor Pod preempted victim Pod" preemptor="ns/high" victim="ns/low-1" node="n1"
I1127 10:00:01.000000 1 schedule_one.go:117] "Attempting to schedule pod" pod="ns/high"
I1127 10:00:01.001000 1 schedule_one.go:1000] "Plugin scored node for pod" pod="ns/high" plugin="NodeResourcesFit" node="n1" score=200
I1127 10:00:01.050000 1 schedule_one.go:483] "Successfully bound pod to node" pod="ns/high" node="n1" evaluatedNodes=2 feasibleNodes=1
`)
	p := l.Pods["ns/high"]
	if diff := cmp.Diff([]string{"NodeResourcesFit"}, p.UnschedulablePlugins); diff != "" {
		t.Errorf("unschedulable plugins (-want +got):\n%s", diff)
	}
	if len(p.Attempts) != 2 {
		t.Fatalf("%d attempts, want 2", len(p.Attempts))
	}
	want := &Preemption{Candidates: map[string][]string{"n1": {"ns/low-1"}}, Node: "n1", Victims: []string{"ns/low-1"}}
	if diff := cmp.Diff(want, p.Attempts[0].Preemption); diff != "" {
		t.Errorf("preemption (-want +got):\n%s", diff)
	}
	if got := p.Attempts[0].Result; got != "unschedulable" {
		t.Errorf("first result %q, want unschedulable", got)
	}
	second := p.Attempts[1]
	if second.Result != "scheduled" || second.Node != "n1" || second.Scores["n1"]["NodeResourcesFit"].Weighted != 200 || second.Scores["n1"]["NodeResourcesFit"].Raw != nil {
		t.Errorf("second attempt = %+v, want scheduled on n1 with a weighted score of 200 and no raw score", second)
	}
	if l.Capabilities.RawScores || l.Capabilities.FilterVerdicts || l.Capabilities.BackoffExpiry {
		t.Errorf("capabilities %+v: upstream logs no raw score, Filter verdict or backoff", l.Capabilities)
	}
}

// TestModelEdges covers what a long session meets: a pod deleted and
// created again under its name, a chapter without a queue, a pod group's
// cycle, victims deleted while the next attempt runs, and Event objects
// updated and expired.
func TestModelEdges(t *testing.T) {
	t.Run("a new pod of an old name starts afresh", func(t *testing.T) {
		l := NewLane("test")
		old := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "1"}, Spec: v1.PodSpec{NodeName: "n1"}}
		l.ApplyPod(at("10:00:00.000000"), old, false)
		l.ApplyPod(at("10:00:01.000000"), old, true)
		fresh := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "2"}}
		l.ApplyPod(at("10:00:02.000000"), fresh, false)
		l.ApplyPod(at("10:00:03.000000"), old, true) // the old deletion, seen late
		p := l.Pods["ns/p"]
		got := []string{p.UID, p.Queue, p.Node, fmt.Sprint(p.Deleted, len(p.Moves))}
		if diff := cmp.Diff([]string{"2", Pending, "", "false 0"}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("the log comes after the apiserver", func(t *testing.T) {
		l := applyLines(t, `
I1127 10:00:00.000000 1 scheduling_queue.go:1] "Pod moved to an internal scheduling queue" pod="ns/p" event="ScheduleAttemptFailure" queue="Unschedulable"
`)
		// The pod is bound at 10:00:02; the watcher hears it before it
		// reads the lines of 10:00:01 that led there.
		l.ApplyPod(at("10:00:02.000000"), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "1"}, Spec: v1.PodSpec{NodeName: "n1"}}, false)
		for _, line := range []string{
			`I1127 10:00:01.000000 1 scheduling_queue.go:1] "Pod moved to an internal scheduling queue" pod="ns/p" event="NodeAdd" queue="Active"`,
			`I1127 10:00:01.100000 1 schedule_one.go:1] "Attempting to schedule pod" pod="ns/p"`,
			`I1127 10:00:01.200000 1 schedule_one.go:2] "Scheduling decision" pod="ns/p" result="scheduled" node="n1"`,
		} {
			r, _ := klogtext.Parse(line, 2026)
			l.ApplyLog(r)
		}
		p := l.Pods["ns/p"]
		var got []string
		for _, m := range p.Moves {
			got = append(got, m.Queue+" "+m.Event)
		}
		if diff := cmp.Diff([]string{"Unschedulable ScheduleAttemptFailure", "Active NodeAdd", "InFlight ", "Bound "}, got); diff != "" {
			t.Errorf("moves (-want +got):\n%s", diff)
		}
		if p.Queue != Bound || len(p.Attempts) != 1 || p.Attempts[0].Result != "scheduled" {
			t.Errorf("queue %q, attempts %+v: want Bound, one attempt that scheduled it", p.Queue, p.Attempts)
		}
	})
	t.Run("a chapter without a queue waits for its retry", func(t *testing.T) {
		l := applyLines(t, `
I1127 10:00:00.000000 1 schedule_one.go:58] "Attempting to schedule pod" pod="ns/p"
I1127 10:00:00.001000 1 schedule_one.go:90] "Scheduling decision" pod="ns/p" result="unschedulable" message="0/0 nodes are available"
`)
		if got := l.Pods["ns/p"].Queue; got != Pending {
			t.Errorf("queue %q, want %q", got, Pending)
		}
	})
	t.Run("a pod group's cycle", func(t *testing.T) {
		l := applyLines(t, `
I1127 10:00:00.000000 1 scheduling_queue.go:1] "Entity moved to an internal scheduling queue" type="podgroup" entity="ns/g" event="PodGroupAdd" queue="Active"
I1127 10:00:00.100000 1 schedule_one_podgroup.go:1] "Attempting to schedule pod group" podGroup="ns/g"
I1127 10:00:00.101000 1 schedule_one_podgroup.go:2] "Attempting to schedule a pod belonging to a pod group" pod="ns/a" podGroup="ns/g"
I1127 10:00:00.200000 1 schedule_one_podgroup.go:3] "Successfully scheduled a pod group" podGroup="ns/g" scheduledPods=1 unschedulablePods=0
`)
		g := l.Groups["ns/g"]
		if _, phantom := l.Pods["ns/g"]; phantom || g == nil || g.Queue != "" || !slices.Equal(g.Members, []string{"ns/a"}) {
			t.Errorf("group %+v (a pod of its name: %v), want out of the queue with member ns/a", g, phantom)
		}
	})
	t.Run("a chapter's pod group moves as one entry", func(t *testing.T) {
		// Chapters 11 and 12 log a group's move once per member, with
		// its podGroup (logMove in their scheduling_queue.go).
		l := applyLines(t, `
I1127 10:00:00.000000 1 scheduling_queue.go:280] "Pod moved to an internal scheduling queue" pod="ns/a" event="PodAdd" queue="Active" podGroup="ns/g"
I1127 10:00:00.000010 1 scheduling_queue.go:280] "Pod moved to an internal scheduling queue" pod="ns/b" event="PodAdd" queue="Active" podGroup="ns/g"
I1127 10:00:00.100000 1 schedule_one_podgroup.go:100] "Attempting to schedule pod group" podGroup="ns/g" pods=2 attempt=1
I1127 10:00:00.200000 1 schedule_one_podgroup.go:475] "Unable to schedule a pod group" podGroup="ns/g" unschedulablePods=2 err="0/1 nodes are available"
I1127 10:00:00.201000 1 scheduling_queue.go:758] "Pod group moved to an internal scheduling queue" podGroup="ns/g" queue="Unschedulable" schedulingCycle=1 pods=2
I1127 10:00:01.000000 1 scheduling_queue.go:280] "Pod moved to an internal scheduling queue" pod="ns/a" event="NodeAdd" queue="Backoff" podGroup="ns/g" backoff="1s"
I1127 10:00:01.000010 1 scheduling_queue.go:280] "Pod moved to an internal scheduling queue" pod="ns/b" event="NodeAdd" queue="Backoff" podGroup="ns/g" backoff="1s"
`)
		g := l.Groups["ns/g"]
		var got []string
		for _, m := range g.Moves {
			got = append(got, m.Queue+" "+m.Event)
		}
		if diff := cmp.Diff([]string{"Active PodAdd", "InFlight ", "Unschedulable ", "Backoff NodeAdd"}, got); diff != "" {
			t.Errorf("the group's moves (-want +got):\n%s", diff)
		}
		if g.Queue != Backoff || !slices.Equal(g.Members, []string{"ns/a", "ns/b"}) || !l.Capabilities.PodGroups {
			t.Errorf("group %+v, capabilities %+v: want in backoffQ with members ns/a and ns/b, pod groups seen", g, l.Capabilities)
		}
	})
	t.Run("a chapter's pod group back to backoffQ after its cycle", func(t *testing.T) {
		// After a failed cycle the members' lines and then the group's
		// line say the same move; a later move with the same queue and
		// event, after a pop the log does not show, is a move again.
		l := applyLines(t, `
I1127 10:00:00.100000 1 schedule_one_podgroup.go:100] "Attempting to schedule pod group" podGroup="ns/g" pods=2 attempt=1
I1127 10:00:00.200000 1 schedule_one_podgroup.go:475] "Unable to schedule a pod group" podGroup="ns/g" unschedulablePods=2 err="0/1 nodes are available"
I1127 10:00:00.201000 1 scheduling_queue.go:280] "Pod moved to an internal scheduling queue" pod="ns/a" event="ScheduleAttemptFailure" queue="Backoff" podGroup="ns/g"
I1127 10:00:00.201010 1 scheduling_queue.go:280] "Pod moved to an internal scheduling queue" pod="ns/b" event="ScheduleAttemptFailure" queue="Backoff" podGroup="ns/g"
I1127 10:00:00.201020 1 scheduling_queue.go:758] "Pod group moved to an internal scheduling queue" podGroup="ns/g" queue="Backoff" schedulingCycle=1 pods=2
I1127 10:00:02.000000 1 scheduling_queue.go:280] "Pod moved to an internal scheduling queue" pod="ns/a" event="ScheduleAttemptFailure" queue="Backoff" podGroup="ns/g"
I1127 10:00:02.000010 1 scheduling_queue.go:280] "Pod moved to an internal scheduling queue" pod="ns/b" event="ScheduleAttemptFailure" queue="Backoff" podGroup="ns/g"
`)
		var got []string
		for _, m := range l.Groups["ns/g"].Moves {
			got = append(got, m.Queue+" "+m.Event)
		}
		want := []string{"InFlight ", "Backoff ScheduleAttemptFailure", "Backoff ScheduleAttemptFailure"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the group's moves (-want +got):\n%s", diff)
		}
	})
	t.Run("victims go to the attempt that chose their node", func(t *testing.T) {
		l := applyLines(t, `
I1127 10:00:00.000000 1 schedule_one.go:1] "Attempting to schedule pod" pod="ns/high"
I1127 10:00:00.001000 1 preemption.go:1] "Dry run the preemption" pod="ns/high" potentialNodesNumber=1
I1127 10:00:00.002000 1 default_preemption.go:1] "Pods are potential preemption victims on node" pod="ns/high" pods=[{"name":"a","namespace":"ns"}] node="n1"
I1127 10:00:00.002100 1 default_preemption.go:1] "Pods are potential preemption victims on node" pod="ns/high" pods=[{"name":"b","namespace":"ns"}] node="n1"
I1127 10:00:00.003000 1 preemption.go:2] "the target node for the preemption is determined" node="n1" pod="ns/high"
I1127 10:00:00.004000 1 schedule_one.go:2] "Scheduling decision" pod="ns/high" result="unschedulable"
I1127 10:00:00.005000 1 schedule_one.go:1] "Attempting to schedule pod" pod="ns/high"
I1127 10:00:00.006000 1 executor.go:1] "Preemptor Pod preempted victim Pod" preemptor="ns/high" victim="ns/a" node="n1"
`)
		p := l.Pods["ns/high"]
		want := &Preemption{Candidates: map[string][]string{"n1": {"ns/a", "ns/b"}}, Node: "n1", Victims: []string{"ns/a"}}
		if diff := cmp.Diff(want, p.Attempts[0].Preemption); diff != "" {
			t.Errorf("first attempt's preemption (-want +got):\n%s", diff)
		}
		if p.Attempts[1].Preemption != nil {
			t.Errorf("the second attempt got %+v", p.Attempts[1].Preemption)
		}
	})
	t.Run("an Event object is listed once", func(t *testing.T) {
		l := NewLane("test")
		e := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{UID: "e1"}, Reason: "FailedScheduling", Note: "0/1 nodes", Regarding: v1.ObjectReference{Namespace: "ns", Name: "p"}}
		l.ApplyEvent(at("10:00:00.000000"), e, false)
		e2 := e.DeepCopy()
		e2.Note = "0/2 nodes"
		l.ApplyEvent(at("10:00:01.000000"), e2, false)
		l.ApplyEvent(at("10:00:02.000000"), e2, true)
		want := []Event{{At: at("10:00:00.000000"), Source: "apiserver", Reason: "FailedScheduling", Object: "ns/p", Message: "0/2 nodes", UID: "e1"}}
		if diff := cmp.Diff(want, l.Events); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}

// TestParsePendingPods reads the queue gauge out of /metrics pages as the
// chapters and kube-scheduler serve them.
func TestParsePendingPods(t *testing.T) {
	tests := []struct {
		name string
		page string
		want map[string]float64
	}{
		{
			name: "kube-scheduler",
			page: `# HELP scheduler_pending_pods [STABLE] Number of pending pods, by the queue type.
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 2
scheduler_pending_pods{queue="backoff"} 0
scheduler_pending_pods{queue="gated"} 1
scheduler_pending_pods{queue="unschedulable"} 3
scheduler_pending_pods_total 7
`,
			want: map[string]float64{"active": 2, "backoff": 0, "gated": 1, "unschedulable": 3},
		},
		{
			name: "two profiles add up",
			page: "scheduler_pending_pods{profile=\"a\",queue=\"active\"} 1\nscheduler_pending_pods{profile=\"b\",queue=\"active\"} 2\n",
			want: map[string]float64{"active": 3},
		},
		{
			name: "a chapter without the gauge",
			page: "scheduler_schedule_attempts_total{profile=\"mini-scheduler\",result=\"scheduled\"} 4\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePendingPods(strings.NewReader(tt.page))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestKubeSchedulerLog reads a real log: kube-scheduler v1.37.1 with
// UpstreamFlags, configured like chapter 10 (make watch CHAPTER=10
// VS=upstream), while three pods filled three nodes, a pod too big for any
// node waited, and two pods of higher priority each preempted one.
func TestKubeSchedulerLog(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "kube-scheduler-v1.37.1.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := NewLane("kube-scheduler")
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		if r, ok := klogtext.Parse(sc.Text(), 2026); ok {
			l.ApplyLog(r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	low := l.Pods["default/low"]
	if low == nil || len(low.Attempts) != 2 {
		t.Fatalf("default/low: %+v, want two attempts", low)
	}
	want := &Preemption{
		Candidates: map[string][]string{"node-a": {"default/p1"}, "node-b": {"default/p2"}, "node-c": {"default/p3"}},
		Node:       "node-c", Victims: []string{"default/p3"},
	}
	if diff := cmp.Diff(want, low.Attempts[0].Preemption); diff != "" {
		t.Errorf("default/low's preemption (-want +got):\n%s", diff)
	}
	got := []string{low.Attempts[0].Result, low.Attempts[1].Result, low.Attempts[1].Node}
	if diff := cmp.Diff([]string{"unschedulable", "scheduled", "node-c"}, got); diff != "" {
		t.Errorf("default/low's results (-want +got):\n%s", diff)
	}
	huge := l.Pods["default/huge"]
	if diff := cmp.Diff([]string{"NodeResourcesFit", "TaintToleration"}, huge.UnschedulablePlugins); diff != "" {
		t.Errorf("default/huge's rejecting plugins (-want +got):\n%s", diff)
	}
	p1 := l.Pods["default/p1"].attempt()
	if diff := cmp.Diff(map[string]int64{"node-a": 447, "node-b": 447, "node-c": 447}, p1.Totals); diff != "" {
		t.Errorf("default/p1's totals (-want +got):\n%s", diff)
	}
	if p1.Node != "node-a" || p1.EvaluatedNodes != 4 || p1.FeasibleNodes != 3 {
		t.Errorf("default/p1's attempt %+v, want node-a of 3 feasible among 4", p1)
	}
	wantCaps := Capabilities{Queue: true, Scores: true, Preemption: true}
	if diff := cmp.Diff(wantCaps, l.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
}
