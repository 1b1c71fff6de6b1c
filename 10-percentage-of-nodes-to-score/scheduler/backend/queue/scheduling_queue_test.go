package queue

// These tests port the cases of upstream's scheduling_queue_test.go and
// backoff_queue_test.go that apply to a queue with backoff and queueing
// hints: activeQ ordering (TestPriorityQueue_Add, TestPriorityQueue_Pop),
// the unschedulable pool (TestPriorityQueue_AddUnschedulablePodIfNotPresent),
// moves by event with hints
// (TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint,
// Test_isPodWorthRequeuing), the in-flight events
// (TestPriorityQueue_AddUnschedulablePodIfNotPresent_inFlight cases,
// Test_InFlightPods), Update and Delete, head-of-line fairness
// (TestRecentlyTriedPodsGoBack), the leftover flush, the backoff flow
// (TestBackOffFlow) and error backoff. Time is a fake clock throughout.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	testingclock "k8s.io/utils/clock/testing"

	"minisched/10-percentage-of-nodes-to-score/scheduler/metrics"
)

var (
	nodeAdd         = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}
	nodeLabelChange = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}
	nodeTaintChange = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}
	podLabelChange  = fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodLabel}
)

// queueHint answers Queue to everything.
func queueHint(klog.Logger, *v1.Pod, any, any) (fwk.QueueingHint, error) { return fwk.Queue, nil }

// matchHint answers Queue when the node after the change has the label
// match=yes, like NodeAffinity's hint for a pod that wants that label.
func matchHint(_ klog.Logger, _ *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	if n, ok := newObj.(*v1.Node); ok && n.Labels["match"] == "yes" {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// brokenHint always fails.
func brokenHint(klog.Logger, *v1.Pod, any, any) (fwk.QueueingHint, error) {
	return fwk.QueueSkip, errors.New("broken")
}

// testHintMap is what three made-up plugins registered: Resources cares
// about new nodes and freed room, whatever they are; Labels about new nodes
// and node label changes that give the node match=yes, and about the labels
// of the pod itself; Broken about taints, with a hint that fails.
var testHintMap = QueueingHintMap{
	nodeAdd:                          {{PluginName: "Resources", QueueingHintFn: queueHint}, {PluginName: "Labels", QueueingHintFn: matchHint}},
	nodeLabelChange:                  {{PluginName: "Labels", QueueingHintFn: matchHint}},
	nodeTaintChange:                  {{PluginName: "Broken", QueueingHintFn: brokenHint}},
	framework.EventAssignedPodDelete: {{PluginName: "Resources", QueueingHintFn: queueHint}},
	podLabelChange:                   {{PluginName: "Labels", QueueingHintFn: queueHint}},
}

// nodes for the events' objects: one that Labels waits for, one it does
// not.
var (
	matching = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"match": "yes"}}}
	plain    = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
)

func makePod(name string, priority int32) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)},
		Spec:       v1.PodSpec{Priority: &priority},
	}
}

// windowStart is now, truncated to the start of its second: the tests'
// clocks start there, so that backoffs aligned to backoffQ's one-second
// windows come out in whole seconds.
func windowStart() time.Time { return time.Now().Truncate(backoffQOrderingWindowDuration) }

// firstBackoffOver is how long after a first failure at the start of a
// window its backoff is over: the initial backoff, and the window in which
// it ends.
const firstBackoffOver = DefaultPodInitialBackoffDuration + backoffQOrderingWindowDuration

func newTestQueue(t *testing.T, clk *testingclock.FakeClock, opts ...Option) *PriorityQueue {
	t.Helper()
	metrics.Register()
	sort, _ := queuesort.New(nil, nil, nil)
	opts = append([]Option{WithClock(clk), WithQueueingHintMap(testHintMap)}, opts...)
	q := NewPriorityQueue(sort.(fwk.QueueSortPlugin).Less, opts...)
	t.Cleanup(q.Close)
	return q
}

// pop pops the next pod, failing the test on error.
func pop(t *testing.T, logger klog.Logger, q *PriorityQueue) *framework.QueuedPodInfo {
	t.Helper()
	pInfo, err := q.Pop(logger)
	if err != nil {
		t.Fatal(err)
	}
	return pInfo
}

// fail hands a popped pod back to the queue as the failure handler does,
// rejected by plugins (none: an error).
func fail(t *testing.T, logger klog.Logger, q *PriorityQueue, pInfo *framework.QueuedPodInfo, plugins ...string) {
	t.Helper()
	pInfo.UnschedulablePlugins = sets.New(plugins...)
	if err := q.AddUnschedulablePodIfNotPresent(logger, pInfo, q.SchedulingCycle()); err != nil {
		t.Fatal(err)
	}
}

// addAndFail adds a pod, pops it and fails it at once, with no event in
// between: a rejected pod lands in the pool, a pod with no plugin in
// backoffQ. activeQ must be empty before.
func addAndFail(t *testing.T, logger klog.Logger, q *PriorityQueue, pod *v1.Pod, plugins ...string) *framework.QueuedPodInfo {
	t.Helper()
	q.Add(logger, pod)
	pInfo := pop(t, logger, q)
	if pInfo.Pod.Name != pod.Name {
		t.Fatalf("popped %s, want %s", pInfo.Pod.Name, pod.Name)
	}
	fail(t, logger, q, pInfo, plugins...)
	return pInfo
}

// where says which part of the queue holds the pod: "Active", "Backoff",
// "Unschedulable", or "" when it is not queued.
func where(q *PriorityQueue, name string) string {
	has := func(pods []*v1.Pod) bool {
		return slices.ContainsFunc(pods, func(p *v1.Pod) bool { return p.Name == name })
	}
	switch {
	case has(q.PodsInActiveQ()):
		return activeQ
	case has(q.PodsInBackoffQ()):
		return backoffQ
	case has(q.UnschedulablePods()):
		return unschedulableQ
	}
	return ""
}

// checkNoneInFlight checks that every pod popped reached Done, and that
// the in-flight list holds nothing.
func checkNoneInFlight(t *testing.T, q *PriorityQueue) {
	t.Helper()
	if diff := cmp.Diff(0, len(q.InFlightPods())); diff != "" {
		t.Errorf("pods in flight (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(0, q.InFlightEventsLen()); diff != "" {
		t.Errorf("length of the in-flight list (-want, +got):\n%s", diff)
	}
}

// popAll pops what activeQ holds, in order, and marks each Done.
func popAll(t *testing.T, logger klog.Logger, q *PriorityQueue) []string {
	t.Helper()
	var out []string
	for len(q.PodsInActiveQ()) > 0 {
		pInfo := pop(t, logger, q)
		q.Done(logger, pInfo.Pod.UID)
		out = append(out, pInfo.Pod.Name)
	}
	return out
}

// newTestLogger logs to the test and keeps the entries, for moves.
func newTestLogger(t *testing.T) klog.Logger {
	return ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(5)))
}

// moves lists the queue moves logged, as "pod event queue".
func moves(logger klog.Logger) []string {
	var out []string
	for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
		if e.Message != "Pod moved to an internal scheduling queue" {
			continue
		}
		kv := map[string]any{}
		for i := 0; i+1 < len(e.ParameterKVList); i += 2 {
			kv[fmt.Sprint(e.ParameterKVList[i])] = e.ParameterKVList[i+1]
		}
		out = append(out, fmt.Sprintf("%v %v %v", kv["pod"], kv["event"], kv["queue"]))
	}
	return out
}

func TestActiveQOrder(t *testing.T) {
	tests := []struct {
		name string
		pods []*v1.Pod // added in this order, one clock tick apart
		want []string
	}{
		{
			name: "higher priority first",
			pods: []*v1.Pod{makePod("low", 1), makePod("high", 100), makePod("mid", 10)},
			want: []string{"high", "mid", "low"},
		},
		{
			name: "equal priority: the older first",
			pods: []*v1.Pod{makePod("first", 5), makePod("second", 5), makePod("third", 5)},
			want: []string{"first", "second", "third"},
		},
		{
			name: "priority beats age",
			pods: []*v1.Pod{makePod("old-low", 0), makePod("new-high", 1000), makePod("new-low", 0)},
			want: []string{"new-high", "old-low", "new-low"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger := newTestLogger(t)
			clk := testingclock.NewFakeClock(windowStart())
			q := newTestQueue(t, clk)
			for _, p := range tt.pods {
				q.Add(logger, p)
				clk.Step(time.Millisecond)
			}
			if diff := cmp.Diff(tt.want, popAll(t, logger, q)); diff != "" {
				t.Errorf("pop order (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestPopCountsAttemptsAndWaits(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	popped := make(chan *framework.QueuedPodInfo)
	go func() {
		pInfo, _ := q.Pop(logger)
		popped <- pInfo
	}()
	q.Add(logger, makePod("p", 0))
	pInfo := <-popped
	if diff := cmp.Diff(1, pInfo.Attempts); diff != "" {
		t.Errorf("attempts after the first pop (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"p"}, podNames(q.InFlightPods())); diff != "" {
		t.Errorf("pods in flight after the pop (-want, +got):\n%s", diff)
	}
	// Back in activeQ after a failure, an event and its backoff, the next
	// pop is the second attempt.
	fail(t, logger, q, pInfo, "Resources")
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	clk.Step(firstBackoffOver)
	q.flushBackoffQCompleted(logger)
	if diff := cmp.Diff(activeQ, where(q, "p")); diff != "" {
		t.Fatalf("after its backoff (-want, +got):\n%s", diff)
	}
	pInfo = pop(t, logger, q)
	if diff := cmp.Diff(2, pInfo.Attempts); diff != "" {
		t.Errorf("attempts after the second pop (-want, +got):\n%s", diff)
	}
	q.Done(logger, pInfo.Pod.UID)
	q.Done(logger, pInfo.Pod.UID) // a second Done does nothing
	checkNoneInFlight(t, q)
	// Close wakes a waiting Pop with an error.
	errs := make(chan error)
	go func() {
		_, err := q.Pop(logger)
		errs <- err
	}()
	q.Close()
	if err := <-errs; err == nil {
		t.Error("Pop on a closed queue returned no error")
	}
}

func podNames(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

func TestAddUnschedulablePodIfNotPresent(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	failed := addAndFail(t, logger, q, makePod("failed", 0), "Resources")
	if err := q.AddUnschedulablePodIfNotPresent(logger, failed, 0); err == nil {
		t.Error("adding a pod twice to the pool: no error")
	}
	// No plugin rejected it (an error): straight to backoffQ.
	errored := addAndFail(t, logger, q, makePod("error", 0))
	if err := q.AddUnschedulablePodIfNotPresent(logger, errored, 0); err == nil {
		t.Error("adding a pod twice to backoffQ: no error")
	}
	q.Add(logger, makePod("active", 0))
	if err := q.AddUnschedulablePodIfNotPresent(logger, q.newQueuedPodInfo(makePod("active", 0)), 0); err == nil {
		t.Error("adding a pod that is in activeQ to the pool: no error")
	}
	if diff := cmp.Diff([]string{"active"}, popAll(t, logger, q)); diff != "" {
		t.Errorf("popped (-want, +got): the pool and backoffQ are not popped\n%s", diff)
	}
	want := []string{
		"ns/failed UnscheduledPodAdd Active", "ns/failed ScheduleAttemptFailure Unschedulable",
		"ns/error UnscheduledPodAdd Active", "ns/error ScheduleAttemptFailure Backoff",
		"ns/active UnscheduledPodAdd Active",
	}
	if diff := cmp.Diff(want, moves(logger)); diff != "" {
		t.Errorf("logged moves (-want, +got):\n%s", diff)
	}
	checkNoneInFlight(t, q)
}

func TestMoveAllToActiveOrBackoffQueue(t *testing.T) {
	tests := []struct {
		name       string
		event      fwk.ClusterEvent
		newObj     any
		preCheck   PreEnqueueCheck
		backingOff bool     // whether the pods' backoff still runs at the event
		want       []string // the pods moved, with where to, sorted
	}{
		{
			name:   "a node both plugins wait for: both pods move",
			event:  nodeAdd,
			newObj: matching,
			want:   []string{"by-labels Active", "by-resources Active"},
		},
		{
			name:       "pods still backing off go to backoffQ",
			event:      nodeAdd,
			newObj:     matching,
			backingOff: true,
			want:       []string{"by-labels Backoff", "by-resources Backoff"},
		},
		{
			name:   "a node without the label: Labels' hint skips its pod",
			event:  nodeAdd,
			newObj: plain,
			want:   []string{"by-resources Active"},
		},
		{
			name:   "a label change that gives the label: Labels' hint queues its pod",
			event:  nodeLabelChange,
			newObj: matching,
			want:   []string{"by-labels Active"},
		},
		{
			name:   "a label change that does not: registered, but the hint skips",
			event:  nodeLabelChange,
			newObj: plain,
		},
		{
			name:  "an assigned pod's deletion frees room: only the Resources pod moves",
			event: framework.EventAssignedPodDelete,
			want:  []string{"by-resources Active"},
		},
		{
			name:   "a hint that fails counts as Queue",
			event:  nodeTaintChange,
			newObj: plain,
			want:   []string{"by-broken Active"},
		},
		{
			name:   "a more general event than the registered one does not match",
			event:  fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Update},
			newObj: matching,
		},
		{
			name:  "the wildcard event moves every pod",
			event: framework.EventUnschedulableTimeout,
			want:  []string{"by-broken Active", "by-labels Active", "by-resources Active"},
		},
		{
			name:     "preCheck keeps pods out",
			event:    nodeAdd,
			newObj:   matching,
			preCheck: func(p *v1.Pod) bool { return p.Name != "by-labels" },
			want:     []string{"by-resources Active"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger := newTestLogger(t)
			clk := testingclock.NewFakeClock(windowStart())
			q := newTestQueue(t, clk)
			addAndFail(t, logger, q, makePod("by-broken", 0), "Broken")
			addAndFail(t, logger, q, makePod("by-labels", 0), "Labels")
			addAndFail(t, logger, q, makePod("by-resources", 0), "Resources")
			if !tt.backingOff {
				clk.Step(firstBackoffOver)
			}
			before := len(moves(logger))
			q.MoveAllToActiveOrBackoffQueue(logger, tt.event, plain, tt.newObj, tt.preCheck)
			var got []string
			for _, name := range []string{"by-broken", "by-labels", "by-resources"} {
				if w := where(q, name); w != unschedulableQ {
					got = append(got, name+" "+w)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("moved (-want, +got):\n%s", diff)
			}
			var wantMoves []string
			for _, m := range tt.want {
				pod, queue, _ := strings.Cut(m, " ")
				wantMoves = append(wantMoves, fmt.Sprintf("ns/%s %s %s", pod, tt.event.Label(), queue))
			}
			if diff := cmp.Diff(wantMoves, moves(logger)[before:], cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("logged moves (-want, +got):\n%s", diff)
			}
			checkNoneInFlight(t, q)
		})
	}
}

// TestIsPodWorthRequeuing ports upstream's Test_isPodWorthRequeuing: only
// the hints of the plugins that rejected the pod count, one Queue is
// enough, an error counts as Queue, and a wildcard event or a pod that no
// plugin rejected needs no hint at all.
func TestIsPodWorthRequeuing(t *testing.T) {
	tests := []struct {
		name     string
		rejected []string
		event    fwk.ClusterEvent
		newObj   any
		want     queueingStrategy
	}{
		{"no rejecting plugin: any event", nil, nodeLabelChange, plain, queueAfterBackoff},
		{"wildcard event", []string{"Labels"}, framework.EventUnschedulableTimeout, nil, queueAfterBackoff},
		{"the rejecting plugin's hint answers Queue", []string{"Labels"}, nodeLabelChange, matching, queueAfterBackoff},
		{"the rejecting plugin's hint answers QueueSkip", []string{"Labels"}, nodeLabelChange, plain, queueSkip},
		{"the hint of a plugin that did not reject the pod is not asked", []string{"Resources"}, nodeLabelChange, matching, queueSkip},
		{"one of two rejecting plugins answers Queue", []string{"Labels", "Resources"}, nodeAdd, plain, queueAfterBackoff},
		{"a hint error counts as Queue", []string{"Broken"}, nodeTaintChange, plain, queueAfterBackoff},
		{"an event nobody registered", []string{"Labels"}, fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.Add}, nil, queueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger := newTestLogger(t)
			q := newTestQueue(t, testingclock.NewFakeClock(windowStart()))
			pInfo := q.newQueuedPodInfo(makePod("p", 0))
			pInfo.UnschedulablePlugins = sets.New(tt.rejected...)
			if diff := cmp.Diff(tt.want, q.isPodWorthRequeuing(logger, pInfo, tt.event, plain, tt.newObj)); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

// TestInFlightEvents: the events that arrive while a pod is in flight are
// replayed through its rejecting plugins' hints when it fails; events
// before its Pop are not. Every case ends with nothing in flight.
func TestInFlightEvents(t *testing.T) {
	type event struct {
		event          fwk.ClusterEvent
		oldObj, newObj any
	}
	tests := []struct {
		name      string
		before    []event // before the Pop
		during    []event // between the Pop and the failure
		podUpdate bool    // the pod's labels change during its flight
		rejected  []string
		want      string
	}{
		{
			name:     "no event: the pool",
			rejected: []string{"Labels"},
			want:     unschedulableQ,
		},
		{
			name:     "an event before the Pop is ignored (the snapshot saw it)",
			before:   []event{{nodeAdd, nil, matching}},
			rejected: []string{"Labels"},
			want:     unschedulableQ,
		},
		{
			name:     "an event during the flight whose hint answers Queue: backoffQ",
			during:   []event{{nodeLabelChange, plain, matching}},
			rejected: []string{"Labels"},
			want:     backoffQ,
		},
		{
			name:     "an event during the flight whose hint answers QueueSkip: the pool",
			during:   []event{{nodeLabelChange, plain, plain}},
			rejected: []string{"Labels"},
			want:     unschedulableQ,
		},
		{
			name:     "an event only another plugin registered: the pool (chapter 07 sent it to backoffQ)",
			during:   []event{{framework.EventAssignedPodDelete, makePod("gone", 0), nil}},
			rejected: []string{"Labels"},
			want:     unschedulableQ,
		},
		{
			name:     "several events, one of them Queue: backoffQ",
			during:   []event{{nodeLabelChange, plain, plain}, {nodeAdd, nil, matching}, {nodeLabelChange, matching, plain}},
			rejected: []string{"Labels"},
			want:     backoffQ,
		},
		{
			name:      "the pod's own update during the flight is replayed too",
			podUpdate: true,
			rejected:  []string{"Labels"},
			want:      backoffQ,
		},
		{
			name:   "an error goes to backoffQ whatever came",
			during: []event{{nodeLabelChange, plain, plain}},
			want:   backoffQ,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger := newTestLogger(t)
			clk := testingclock.NewFakeClock(windowStart())
			q := newTestQueue(t, clk)
			pod := makePod("p", 0)
			q.Add(logger, pod)
			for _, e := range tt.before {
				q.MoveAllToActiveOrBackoffQueue(logger, e.event, e.oldObj, e.newObj, nil)
			}
			pInfo := pop(t, logger, q)
			for _, e := range tt.during {
				q.MoveAllToActiveOrBackoffQueue(logger, e.event, e.oldObj, e.newObj, nil)
			}
			if tt.podUpdate {
				updated := pod.DeepCopy()
				updated.Labels = map[string]string{"k": "v"}
				q.Update(logger, pod, updated)
				if diff := cmp.Diff("", where(q, "p")); diff != "" {
					t.Errorf("an update during the flight queued the pod (-want, +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(1+len(tt.during)+boolToInt(tt.podUpdate), q.InFlightEventsLen()); diff != "" {
				t.Errorf("in-flight list before the failure: the pod and the events during its flight (-want, +got):\n%s", diff)
			}
			fail(t, logger, q, pInfo, tt.rejected...)
			if diff := cmp.Diff(tt.want, where(q, "p")); diff != "" {
				t.Errorf("queue after the failure (-want, +got):\n%s", diff)
			}
			checkNoneInFlight(t, q)
		})
	}
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestInFlightEventsOfOtherPods: the list is shared. A pod replays only
// the events after its own Pop, and Done frees the events that no pod in
// flight needs any more.
func TestInFlightEventsOfOtherPods(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	q.Add(logger, makePod("a", 0))
	clk.Step(time.Millisecond)
	q.Add(logger, makePod("b", 0))
	a := pop(t, logger, q)
	q.MoveAllToActiveOrBackoffQueue(logger, nodeLabelChange, plain, matching, nil) // during a's flight only
	b := pop(t, logger, q)
	q.MoveAllToActiveOrBackoffQueue(logger, nodeLabelChange, plain, plain, nil) // during both
	// a, event 1, b, event 2
	if diff := cmp.Diff(4, q.InFlightEventsLen()); diff != "" {
		t.Errorf("in-flight list (-want, +got):\n%s", diff)
	}
	fail(t, logger, q, b, "Labels")
	if diff := cmp.Diff(unschedulableQ, where(q, "b")); diff != "" {
		t.Errorf("b, which saw only the change without the label (-want, +got):\n%s", diff)
	}
	// b's element and nothing else is gone: a still needs both events.
	if diff := cmp.Diff(3, q.InFlightEventsLen()); diff != "" {
		t.Errorf("in-flight list after b (-want, +got):\n%s", diff)
	}
	fail(t, logger, q, a, "Labels")
	if diff := cmp.Diff(backoffQ, where(q, "a")); diff != "" {
		t.Errorf("a, which saw the change to the label (-want, +got):\n%s", diff)
	}
	checkNoneInFlight(t, q)
	// With nothing in flight, events are not kept.
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	checkNoneInFlight(t, q)
}

// TestInFlightEventsDoNotLeak pops and completes 1,000 pods while events
// keep coming, from several goroutines as the scheduler's binding cycles
// would, half of them through a failure and half through Done. When all
// are done, the in-flight list must be empty: a pod that never reached
// Done would keep every event after it (the memory leak of v1.28), and
// one such pod is enough to fail the check. More pods buy nothing: each
// event walks the pool of failed pods, so 10,000 took 10 to 45 s of CPU
// under -race.
func TestInFlightEventsDoNotLeak(t *testing.T) {
	const n = 1000
	logger := klog.Background() // 1,000 pods: no buffered test log
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	stop := make(chan struct{})
	var events sync.WaitGroup
	events.Add(1)
	go func() {
		defer events.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			q.MoveAllToActiveOrBackoffQueue(logger, nodeLabelChange, plain, plain, nil)
			if i%10 == 0 {
				q.MoveAllToActiveOrBackoffQueue(logger, framework.EventAssignedPodDelete, makePod("gone", 0), nil, nil)
			}
		}
	}()
	go func() {
		for i := range n {
			q.Add(logger, makePod(fmt.Sprint("p-", i), 0))
		}
	}()
	var completions sync.WaitGroup
	maxLen := 0
	for i := range n {
		pInfo := pop(t, logger, q)
		if l := q.InFlightEventsLen(); l > maxLen {
			maxLen = l
		}
		completions.Add(1)
		go func() {
			defer completions.Done()
			if i%2 == 0 {
				q.Done(logger, pInfo.Pod.UID)
				return
			}
			pInfo.UnschedulablePlugins = sets.New("Labels")
			if err := q.AddUnschedulablePodIfNotPresent(logger, pInfo, 0); err != nil {
				t.Error(err)
			}
		}()
	}
	completions.Wait()
	close(stop)
	events.Wait()
	t.Logf("%d pods popped and done; the in-flight list peaked at %d entries and holds %d now", n, maxLen, q.InFlightEventsLen())
	checkNoneInFlight(t, q)
	if diff := cmp.Diff(n/2, len(q.UnschedulablePods())); diff != "" {
		t.Errorf("failed pods in the pool: the label changes did not help them (-want, +got):\n%s", diff)
	}
}

// TestEventDuringSchedulingCycleIsNotLost is chapter 07's test with hints:
// a node with the label the pod waits for is added while the pod is being
// scheduled; the pod fails, its hint sees the event, and the pod is tried
// again once its backoff is over.
func TestEventDuringSchedulingCycleIsNotLost(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	q.Add(logger, makePod("p", 0))
	pInfo := pop(t, logger, q)
	// The scheduling cycle took a snapshot without the new node...
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, matching, nil)
	// ...and fails.
	fail(t, logger, q, pInfo, "Labels")
	clk.Step(firstBackoffOver)
	q.flushBackoffQCompleted(logger)
	if diff := cmp.Diff([]string{"p"}, popAll(t, logger, q)); diff != "" {
		t.Errorf("popped once its backoff was over (-want, +got):\n%s", diff)
	}
	want := []string{"ns/p UnscheduledPodAdd Active", "ns/p ScheduleAttemptFailure Backoff", "ns/p BackoffComplete Active"}
	if diff := cmp.Diff(want, moves(logger)); diff != "" {
		t.Errorf("logged moves (-want, +got):\n%s", diff)
	}
	checkNoneInFlight(t, q)
}

// TestBackOffFlow: a pod that keeps failing, each time moved by an event,
// backs off 1, 2, 4, 8, 10, 10 seconds, and waits in backoffQ until the
// window in which its backoff ends is over: failing at the start of a
// window, it leaves at the flush one second after its backoff ends.
func TestBackOffFlow(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	q.Add(logger, makePod("p", 0))
	var got []time.Duration
	for range 6 {
		pInfo := pop(t, logger, q)
		failedAt := clk.Now()
		fail(t, logger, q, pInfo, "Resources")
		q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
		if diff := cmp.Diff(backoffQ, where(q, "p")); diff != "" {
			t.Fatalf("after failure %d (-want, +got):\n%s", pInfo.UnschedulableCount, diff)
		}
		// The flush runs at the start of every window.
		for where(q, "p") == backoffQ {
			clk.Step(backoffQOrderingWindowDuration)
			q.flushBackoffQCompleted(logger)
		}
		got = append(got, clk.Since(failedAt))
	}
	want := []time.Duration{2 * time.Second, 3 * time.Second, 5 * time.Second, 9 * time.Second, 11 * time.Second, 11 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("time in backoffQ after each failure (-want, +got):\n%s", diff)
	}
}

func TestCalculateBackoffDuration(t *testing.T) {
	tests := []struct {
		name             string
		initial, maximum time.Duration
		count            int
		want             time.Duration
	}{
		{"never failed", time.Second, 10 * time.Second, 0, 0},
		{"first failure", time.Second, 10 * time.Second, 1, time.Second},
		{"fourth failure", time.Second, 10 * time.Second, 4, 8 * time.Second},
		{"capped", time.Second, 10 * time.Second, 5, 10 * time.Second},
		{"no overflow after many failures", time.Second, 10 * time.Second, 1000, 10 * time.Second},
		{"initial equals max", 3 * time.Second, 3 * time.Second, 2, 3 * time.Second},
		{"sub-second", 100 * time.Millisecond, time.Second, 3, 400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bq := newBackoffQueue(testingclock.NewFakeClock(windowStart()), tt.initial, tt.maximum, nil)
			if diff := cmp.Diff(tt.want, bq.calculateBackoffDuration(tt.count)); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

// TestErrorBackoff: failures that no plugin caused go to backoffQ at once,
// and their backoff counts consecutive errors, apart from the unschedulable
// failures: an unschedulable failure ends the run of errors.
func TestErrorBackoff(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	q.Add(logger, makePod("p", 0))
	type outcome struct {
		Queue   string
		Backoff time.Duration
	}
	var got []outcome
	for _, plugins := range [][]string{nil, nil, nil, {"Resources"}, nil} {
		pInfo := pop(t, logger, q)
		fail(t, logger, q, pInfo, plugins...)
		got = append(got, outcome{where(q, "p"), q.backoffQ.getBackoffTime(pInfo).Sub(clk.Now())})
		// Move it on, whatever an event would do, and let the backoff end.
		q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
		clk.Step(time.Minute)
		q.flushBackoffQCompleted(logger)
	}
	want := []outcome{
		{backoffQ, 1 * time.Second},       // error 1
		{backoffQ, 2 * time.Second},       // error 2
		{backoffQ, 4 * time.Second},       // error 3
		{unschedulableQ, 1 * time.Second}, // unschedulable 1: the errors do not count
		{backoffQ, 1 * time.Second},       // error 1 again
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

// TestFlushBackoffQCompleted: the flush moves the pods whose backoff ended
// in a window that is over, the earliest first, and leaves the others.
func TestFlushBackoffQCompleted(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	for _, p := range []struct {
		name     string
		failures int
	}{{"four-seconds", 3}, {"one-second", 1}, {"two-seconds", 2}} {
		q.Add(logger, makePod(p.name, 0))
		pInfo := pop(t, logger, q)
		pInfo.UnschedulableCount = p.failures - 1
		fail(t, logger, q, pInfo, "Resources")
	}
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	before := len(moves(logger))
	clk.Step(3 * time.Second)
	q.flushBackoffQCompleted(logger)
	if diff := cmp.Diff([]string{"ns/one-second BackoffComplete Active", "ns/two-seconds BackoffComplete Active"}, moves(logger)[before:]); diff != "" {
		t.Errorf("moved after 3s (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(backoffQ, where(q, "four-seconds")); diff != "" {
		t.Errorf("the pod with 4s of backoff (-want, +got):\n%s", diff)
	}
}

func TestUpdate(t *testing.T) {
	withLabel := func(p *v1.Pod) *v1.Pod {
		p = p.DeepCopy()
		p.Labels = map[string]string{"k": "v"}
		p.ResourceVersion = "2"
		return p
	}
	withStatus := func(p *v1.Pod) *v1.Pod {
		p = p.DeepCopy()
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse}}
		p.ResourceVersion = "2"
		return p
	}
	tests := []struct {
		name       string
		queued     string // where the pod is before the update: "active", "backoff", "pool-Labels", "pool-Resources", ""
		backingOff bool   // whether its backoff still runs at the update
		update     func(*v1.Pod) *v1.Pod
		wantWhere  string
		wantMoves  []string
	}{
		{
			name:      "in activeQ: updated in place",
			queued:    "active",
			update:    withLabel,
			wantWhere: activeQ,
		},
		{
			name:       "in backoffQ: updated in place",
			queued:     "backoff",
			backingOff: true,
			update:     withLabel,
			wantWhere:  backoffQ,
		},
		{
			name:      "in the pool, an update its rejecting plugin registered: moved",
			queued:    "pool-Labels",
			update:    withLabel,
			wantWhere: activeQ,
			wantMoves: []string{"ns/p TargetPodUpdatePodLabel Active"},
		},
		{
			name:       "in the pool and backing off, an update its rejecting plugin registered: moved to backoffQ",
			queued:     "pool-Labels",
			backingOff: true,
			update:     withLabel,
			wantWhere:  backoffQ,
			wantMoves:  []string{"ns/p TargetPodUpdatePodLabel Backoff"},
		},
		{
			name:      "in the pool, an update only another plugin registered: stays",
			queued:    "pool-Resources",
			update:    withLabel,
			wantWhere: unschedulableQ,
		},
		{
			name:      "in the pool, a status update (its own PodScheduled condition): stays",
			queued:    "pool-Labels",
			update:    withStatus,
			wantWhere: unschedulableQ,
		},
		{
			name:      "not queued: added to activeQ",
			update:    withLabel,
			wantWhere: activeQ,
			wantMoves: []string{"ns/p UnscheduledPodAdd Active"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger := newTestLogger(t)
			clk := testingclock.NewFakeClock(windowStart())
			q := newTestQueue(t, clk)
			old := makePod("p", 0)
			old.ResourceVersion = "1"
			switch tt.queued {
			case "active":
				q.Add(logger, old)
			case "backoff":
				addAndFail(t, logger, q, old)
			case "pool-Labels", "pool-Resources":
				addAndFail(t, logger, q, old, tt.queued[len("pool-"):])
			}
			if !tt.backingOff {
				clk.Step(firstBackoffOver)
			}
			before := len(moves(logger))
			newPod := tt.update(old)
			q.Update(logger, old, newPod)

			pInfo, ok := q.GetPod("p", "ns")
			if !ok {
				t.Fatal("the pod is not queued after its update")
			}
			if pInfo.Pod.ResourceVersion != "2" {
				t.Errorf("the queue holds resourceVersion %s, want the update's", pInfo.Pod.ResourceVersion)
			}
			if diff := cmp.Diff(tt.wantWhere, where(q, "p")); diff != "" {
				t.Errorf("queue (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMoves, moves(logger)[before:], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("logged moves (-want, +got):\n%s", diff)
			}
			if n := len(q.PodsInActiveQ()) + len(q.PodsInBackoffQ()) + len(q.UnschedulablePods()); n != 1 {
				t.Errorf("the pod is queued %d times, want once", n)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	addAndFail(t, logger, q, makePod("failed", 0), "Resources")
	addAndFail(t, logger, q, makePod("backing-off", 0))
	q.Add(logger, makePod("active", 0))
	q.Add(logger, makePod("stays", 0))
	for _, name := range []string{"active", "failed", "backing-off", "never-queued"} {
		q.Delete(makePod(name, 0))
	}
	if diff := cmp.Diff([]string{"stays"}, popAll(t, logger, q)); diff != "" {
		t.Errorf("popped (-want, +got):\n%s", diff)
	}
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, matching, nil)
	clk.Step(time.Minute)
	q.flushBackoffQCompleted(logger)
	if n := len(q.PodsInActiveQ()) + len(q.PodsInBackoffQ()) + len(q.UnschedulablePods()); n != 0 {
		t.Errorf("an event and the backoff flush brought back %d deleted pods", n)
	}
}

// TestRecentlyTriedPodsGoBack: a pod that failed goes behind the pods of
// its priority that waited meanwhile, so a pod that keeps failing cannot
// keep the head of activeQ and starve the others.
func TestRecentlyTriedPodsGoBack(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	for _, name := range []string{"p1", "p2", "p3"} {
		q.Add(logger, makePod(name, 0))
		clk.Step(time.Second)
	}
	for range 3 {
		// The head fails every time; an event and the end of its backoff
		// bring it straight back.
		pInfo := pop(t, logger, q)
		clk.Step(time.Second)
		fail(t, logger, q, pInfo, "Resources")
		clk.Step(firstBackoffOver)
		q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	}
	// Each pod was tried once, in turn; the order is again p1, p2, p3.
	if diff := cmp.Diff([]string{"p1", "p2", "p3"}, popAll(t, logger, q)); diff != "" {
		t.Errorf("pop order (-want, +got):\n%s", diff)
	}
}

func TestFlushUnschedulablePodsLeftover(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk, WithPodMaxInUnschedulablePodsDuration(time.Minute))
	addAndFail(t, logger, q, makePod("old", 0), "Resources")
	clk.Step(30 * time.Second)
	addAndFail(t, logger, q, makePod("new", 0), "Resources")
	clk.Step(31 * time.Second)
	before := len(moves(logger))
	q.flushUnschedulablePodsLeftover(logger)
	if diff := cmp.Diff([]string{"old"}, popAll(t, logger, q)); diff != "" {
		t.Errorf("flushed after 61s (-want, +got):\n%s", diff)
	}
	clk.Step(30 * time.Second)
	q.flushUnschedulablePodsLeftover(logger)
	if diff := cmp.Diff([]string{"new"}, popAll(t, logger, q)); diff != "" {
		t.Errorf("flushed after 91s (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ns/old UnschedulableTimeout Active", "ns/new UnschedulableTimeout Active"}, moves(logger)[before:]); diff != "" {
		t.Errorf("logged moves (-want, +got):\n%s", diff)
	}
}

func TestMetrics(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	counter := func(queue, event string) float64 {
		v, _ := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingPods.WithLabelValues(queue, event))
		return v
	}
	activeBefore, backoffBefore := counter("active", "NodeAdd"), counter("backoff", "ScheduleAttemptFailure")
	addAndFail(t, logger, q, makePod("c", 0), "Resources")
	addAndFail(t, logger, q, makePod("d", 0))
	q.Add(logger, makePod("a", 0))
	q.Add(logger, makePod("b", 0))
	gauges := func() [3]float64 {
		active, _ := testutil.GetGaugeMetricValue(metrics.ActivePods())
		backoff, _ := testutil.GetGaugeMetricValue(metrics.BackoffPods())
		unschedulable, _ := testutil.GetGaugeMetricValue(metrics.UnschedulablePods())
		return [3]float64{active, backoff, unschedulable}
	}
	if diff := cmp.Diff([3]float64{2, 1, 1}, gauges()); diff != "" {
		t.Errorf("pending_pods{active, backoff, unschedulable} (-want, +got):\n%s", diff)
	}
	clk.Step(firstBackoffOver)
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	q.Done(logger, pop(t, logger, q).Pod.UID)
	if diff := cmp.Diff([3]float64{2, 1, 0}, gauges()); diff != "" {
		t.Errorf("pending_pods{active, backoff, unschedulable} after a move and a pop (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([2]float64{1, 1}, [2]float64{counter("active", "NodeAdd") - activeBefore, counter("backoff", "ScheduleAttemptFailure") - backoffBefore}); diff != "" {
		t.Errorf("growth of queue_incoming_pods_total{active, NodeAdd} and {backoff, ScheduleAttemptFailure} (-want, +got):\n%s", diff)
	}
}

// TestConcurrentUse runs the event handlers' calls, the scheduling loop's,
// the binding goroutines' and the flushes' at once, for the race detector;
// every pod is popped exactly twice in the end, and nothing stays in
// flight.
func TestConcurrentUse(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk)
	const n = 200
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range n {
			q.Add(logger, makePod(fmt.Sprint("p-", i), int32(i%3)))
		}
	}()
	go func() {
		defer wg.Done()
		for range n {
			q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
			q.flushBackoffQCompleted(logger)
		}
	}()
	popped := map[string]int{}
	for total := 0; total < 2*n; {
		if len(q.PodsInActiveQ()) == 0 {
			// Everything left waits in the pool or in backoffQ, or is
			// still being added.
			q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
			clk.Step(firstBackoffOver)
			q.flushBackoffQCompleted(logger)
			time.Sleep(time.Millisecond)
			continue
		}
		pInfo := pop(t, logger, q)
		popped[pInfo.Pod.Name]++
		total++
		if pInfo.Attempts == 1 {
			fail(t, logger, q, pInfo, "Resources")
		} else {
			q.Done(logger, pInfo.Pod.UID)
		}
	}
	wg.Wait()
	for i := range n {
		if got := popped[fmt.Sprint("p-", i)]; got != 2 {
			t.Errorf("p-%d popped %d times, want 2 (once, then once after its failure)", i, got)
		}
	}
	checkNoneInFlight(t, q)
}

// TestPopDiscardsPodInFlight: a pod added again while it is in flight (a
// bug elsewhere: the same pod tracked twice) is discarded when popped, and
// Pop returns the next pod, as upstream's unlockedPop does. The pod's first
// flight still ends once.
func TestPopDiscardsPodInFlight(t *testing.T) {
	logger := newTestLogger(t)
	q := newTestQueue(t, testingclock.NewFakeClock(windowStart()))
	q.Add(logger, makePod("twice", 10))
	first := pop(t, logger, q)
	q.Add(logger, makePod("twice", 10))
	q.Add(logger, makePod("next", 0))
	got := pop(t, logger, q)
	if diff := cmp.Diff("next", got.Pod.Name); diff != "" {
		t.Errorf("popped while the first copy is in flight (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff("", where(q, "twice")); diff != "" {
		t.Errorf("where the second copy is (-want, +got):\n%s", diff)
	}
	q.Done(logger, first.Pod.UID)
	q.Done(logger, got.Pod.UID)
	checkNoneInFlight(t, q)
}

// TestFlushIsAnEventForPodsInFlight: the leftover flush is a cluster event
// (UnschedulableTimeout): a pod in flight during a flush that then fails
// goes to backoffQ, not to the pool for five more minutes, as upstream's
// flushUnschedulableEntitiesLeftover records the event for pods in flight.
func TestFlushIsAnEventForPodsInFlight(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk, WithPodMaxInUnschedulablePodsDuration(time.Minute))
	addAndFail(t, logger, q, makePod("old", 0), "Resources")
	clk.Step(2 * time.Minute)
	q.Add(logger, makePod("flying", 0))
	flying := pop(t, logger, q)
	q.flushUnschedulablePodsLeftover(logger)
	fail(t, logger, q, flying, "Resources")
	if diff := cmp.Diff(map[string]string{"old": activeQ, "flying": backoffQ}, map[string]string{"old": where(q, "old"), "flying": where(q, "flying")}); diff != "" {
		t.Errorf("where the pods are after the flush (-want, +got):\n%s", diff)
	}
}

// gate is a PreEnqueue plugin that holds back the pods with scheduling
// gates, like the in-tree SchedulingGates.
type gate struct{}

func (gate) Name() string { return "SchedulingGates" }
func (gate) PreEnqueue(_ context.Context, pod *v1.Pod) *fwk.Status {
	if len(pod.Spec.SchedulingGates) > 0 {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "waiting for scheduling gates")
	}
	return nil
}

// popOrFail pops, or fails the test if Pop still waits after five
// seconds; it then closes the queue, which ends that Pop.
func popOrFail(t *testing.T, logger klog.Logger, q *PriorityQueue) *framework.QueuedPodInfo {
	t.Helper()
	type popped struct {
		pInfo *framework.QueuedPodInfo
		err   error
	}
	ch := make(chan popped, 1)
	go func() {
		pInfo, err := q.Pop(logger)
		ch <- popped{pInfo, err}
	}()
	select {
	case p := <-ch:
		if p.err != nil || p.pInfo == nil {
			t.Fatalf("Pop returned %v, %v", p.pInfo, p.err)
		}
		return p.pInfo
	case <-time.After(5 * time.Second):
		q.Close()
		t.Fatal("Pop still waits after 5s")
		return nil
	}
}

// TestPopFromBackoffQ: when activeQ is empty, Pop takes a pod from
// backoffQ before its backoff ends (SchedulerPopFromBackoffQ, on by default
// upstream): the earliest window first and, within a window, the pod
// activeQ would put first. A pod whose attempt ended in an error is never
// taken early, and a pod in activeQ always goes first.
func TestPopFromBackoffQ(t *testing.T) {
	type failure struct {
		name     string
		priority int32
		plugins  []string      // none: the attempt ended in an error
		after    time.Duration // the failure, after the previous one
	}
	tests := []struct {
		name     string
		failures []failure
		active   []string // pods added to activeQ after the failures
		want     []string // what Pop returns, in order
	}{
		{
			name:     "activeQ empty: the head of backoffQ, before its backoff ends",
			failures: []failure{{name: "rejected", plugins: []string{"Resources"}}},
			want:     []string{"rejected"},
		},
		{
			name:     "activeQ first",
			failures: []failure{{name: "rejected", plugins: []string{"Resources"}}},
			active:   []string{"new"},
			want:     []string{"new", "rejected"},
		},
		{
			name: "one window: the higher priority first",
			failures: []failure{
				{name: "low", priority: 1, plugins: []string{"Resources"}},
				{name: "high", priority: 100, plugins: []string{"Resources"}, after: 500 * time.Millisecond},
			},
			want: []string{"high", "low"},
		},
		{
			name: "two windows: the earlier window first, whatever the priority",
			failures: []failure{
				{name: "low", priority: 1, plugins: []string{"Resources"}},
				{name: "high", priority: 100, plugins: []string{"Resources"}, after: time.Second},
			},
			want: []string{"low", "high"},
		},
		{
			name: "an error is not taken early",
			failures: []failure{
				{name: "error"},
				{name: "rejected", plugins: []string{"Resources"}},
			},
			active: []string{"new"},
			want:   []string{"new", "rejected"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger := newTestLogger(t)
			clk := testingclock.NewFakeClock(windowStart())
			q := newTestQueue(t, clk)
			for _, f := range tt.failures {
				clk.Step(f.after)
				q.Add(logger, makePod(f.name, f.priority))
				pInfo, err := q.Pop(logger)
				if err != nil {
					t.Fatal(err)
				}
				// An event of interest during the attempt sends the pod to
				// backoffQ rather than the pool; an error always does.
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
				fail(t, logger, q, pInfo, f.plugins...)
				if diff := cmp.Diff(backoffQ, where(q, f.name)); diff != "" {
					t.Fatalf("%s after its failure (-want, +got):\n%s", f.name, diff)
				}
			}
			for _, name := range tt.active {
				q.Add(logger, makePod(name, 0))
			}
			var got []string
			for range tt.want {
				pInfo := popOrFail(t, logger, q)
				got = append(got, pInfo.Pod.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("popped (-want, +got):\n%s", diff)
			}
			// Whatever is left waits out its backoff: no pod is in activeQ,
			// backoffQ holds only pods that may not be taken early, and Pop
			// waits.
			if diff := cmp.Diff(0, q.backoffQ.lenBackoff()+len(q.PodsInActiveQ())); diff != "" {
				t.Errorf("pods Pop could still take (-want, +got):\n%s", diff)
			}
			popped := make(chan struct{})
			go func() {
				_, _ = q.Pop(logger)
				close(popped)
			}()
			select {
			case <-popped:
				t.Errorf("Pop returned, with only pods that may not be taken early in backoffQ")
			case <-time.After(100 * time.Millisecond):
			}
			q.Close()
			<-popped
		})
	}
}

// TestPopFromBackoffQIsLogged: a pod Pop takes from backoffQ moves to
// activeQ on the event PopFromBackoffQ, and is counted under it in
// queue_incoming_pods_total, as upstream's activeQueue.unlockedPop counts it.
func TestPopFromBackoffQIsLogged(t *testing.T) {
	logger := newTestLogger(t)
	q := newTestQueue(t, testingclock.NewFakeClock(windowStart()))
	q.Add(logger, makePod("p", 0))
	pInfo, err := q.Pop(logger)
	if err != nil {
		t.Fatal(err)
	}
	fail(t, logger, q, pInfo, "Resources")
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	incoming := func() float64 {
		v, _ := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingPods.WithLabelValues("active", framework.PopFromBackoffQ))
		return v
	}
	before := incoming()
	popOrFail(t, logger, q)
	if diff := cmp.Diff(before+1, incoming()); diff != "" {
		t.Errorf("queue_incoming_pods_total{active, PopFromBackoffQ} (-want, +got):\n%s", diff)
	}
	want := []string{"ns/p UnscheduledPodAdd Active", "ns/p ScheduleAttemptFailure Unschedulable", "ns/p NodeAdd Backoff", "ns/p PopFromBackoffQ Active"}
	if diff := cmp.Diff(want, moves(logger)); diff != "" {
		t.Errorf("logged moves (-want, +got):\n%s", diff)
	}
}

// countingGate is a PreEnqueue plugin that lets every pod through and
// counts how often it ran for each.
type countingGate struct {
	mu    sync.Mutex
	calls map[string]int
}

func (g *countingGate) Name() string { return "Counting" }
func (g *countingGate) PreEnqueue(_ context.Context, pod *v1.Pod) *fwk.Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls[pod.Name]++
	return nil
}

func (g *countingGate) count(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[name]
}

// TestPreEnqueueRunsOnceOnTheWayBack: from its failure to its next attempt,
// a pod passes the PreEnqueue plugins once, whichever way it goes back.
// They run when it enters backoffQ, and not again when it leaves it, by
// the flush, by Pop or by Activate: upstream's moveToActiveQ skips them for
// a pod that moves from backoffQ (skipPreEnqueue), which flushBackoffQCompleted and activate
// ask for. A pod that waited in the pool passes them when it leaves.
func TestPreEnqueueRunsOnceOnTheWayBack(t *testing.T) {
	flush := func(logger klog.Logger, q *PriorityQueue, clk *testingclock.FakeClock) {
		clk.Step(firstBackoffOver)
		q.flushBackoffQCompleted(logger)
	}
	tests := []struct {
		name string
		// toPool fails the pod with no event during its attempt, so that
		// it waits in the pool; else it goes to backoffQ.
		toPool bool
		// leave sends the pod on to activeQ, or leaves it for Pop.
		leave func(logger klog.Logger, q *PriorityQueue, clk *testingclock.FakeClock)
	}{
		{name: "backoffQ, then the flush", leave: flush},
		{name: "backoffQ, taken early by Pop", leave: func(klog.Logger, *PriorityQueue, *testingclock.FakeClock) {}},
		{
			name:   "the pool, then an event after its backoff",
			toPool: true,
			leave: func(logger klog.Logger, q *PriorityQueue, clk *testingclock.FakeClock) {
				clk.Step(firstBackoffOver)
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
			},
		},
		{
			name:   "the pool, an event during its backoff, then the flush",
			toPool: true,
			leave: func(logger klog.Logger, q *PriorityQueue, clk *testingclock.FakeClock) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
				flush(logger, q, clk)
			},
		},
		{
			name:   "Activate, from backoffQ",
			toPool: false,
			leave: func(logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
				q.Activate(logger, map[string]*v1.Pod{"ns/p": makePod("p", 0)})
			},
		},
		{
			name:   "Activate, from the pool",
			toPool: true,
			leave: func(logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
				q.Activate(logger, map[string]*v1.Pod{"ns/p": makePod("p", 0)})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger := newTestLogger(t)
			clk := testingclock.NewFakeClock(windowStart())
			g := &countingGate{calls: map[string]int{}}
			q := newTestQueue(t, clk, WithPreEnqueuePlugins([]fwk.PreEnqueuePlugin{g}))
			q.Add(logger, makePod("p", 0))
			pInfo, err := q.Pop(logger)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.toPool {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
			}
			before := g.count("p")
			fail(t, logger, q, pInfo, "Resources")
			tt.leave(logger, q, clk)
			got := []any{popOrFail(t, logger, q).Pod.Name, g.count("p") - before}
			if diff := cmp.Diff([]any{"p", 1}, got); diff != "" {
				t.Errorf("popped, PreEnqueue runs since the failure (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestMoveToBackoffQRunsPreEnqueue: the PreEnqueue plugins run when a pod
// enters backoffQ, since Pop may take it from there: a pod a plugin holds
// back waits in the pool, gated, instead, and is counted as coming into it,
// as upstream's unschedulableEntities.addOrUpdate counts a new one.
func TestMoveToBackoffQRunsPreEnqueue(t *testing.T) {
	logger := newTestLogger(t)
	q := newTestQueue(t, testingclock.NewFakeClock(windowStart()), WithPreEnqueuePlugins([]fwk.PreEnqueuePlugin{gate{}}))
	gated := makePod("gated", 0)
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	pInfo := q.newQueuedPodInfo(gated)
	pInfo.UnschedulablePlugins, pInfo.UnschedulableCount = sets.New("Resources"), 1
	pool := func() float64 {
		v, _ := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", "Test"))
		return v
	}
	before := pool()
	q.lock.Lock()
	moved := q.moveToBackoffQ(logger, pInfo, "Test")
	q.lock.Unlock()
	if diff := cmp.Diff([]any{false, unschedulableQ, "SchedulingGates"}, []any{moved, where(q, "gated"), pInfo.GatingPlugin}); diff != "" {
		t.Errorf("moved, where, gating plugin (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(before+1, pool()); diff != "" {
		t.Errorf("queue_incoming_pods_total{unschedulable, Test} (-want, +got):\n%s", diff)
	}
}

// TestGatedPodIsParked: a pod a PreEnqueue plugin holds back waits in the
// unschedulable pool, counted as coming into it, and is never popped;
// events its gating plugin did not register leave it there; removing its
// last gate moves it to activeQ.
func TestGatedPodIsParked(t *testing.T) {
	logger := newTestLogger(t)
	gatesEliminated := fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodSchedulingGatesEliminated}
	hints := QueueingHintMap{
		gatesEliminated: {{PluginName: "SchedulingGates", QueueingHintFn: queueHint}},
		nodeAdd:         {{PluginName: "Resources", QueueingHintFn: queueHint}},
	}
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk, WithQueueingHintMap(hints), WithPreEnqueuePlugins([]fwk.PreEnqueuePlugin{gate{}}))
	gated := makePod("gated", 0)
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	gated.ResourceVersion = "1"
	pool := func() float64 {
		v, _ := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", framework.EventUnscheduledPodAdd.Label()))
		return v
	}
	before := pool()
	q.Add(logger, gated)
	if diff := cmp.Diff(before+1, pool()); diff != "" {
		t.Errorf("queue_incoming_pods_total{unschedulable, UnscheduledPodAdd} (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(unschedulableQ, where(q, "gated")); diff != "" {
		t.Fatalf("where the gated pod is (-want, +got):\n%s", diff)
	}
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, nil, nil)
	if diff := cmp.Diff(unschedulableQ, where(q, "gated")); diff != "" {
		t.Errorf("where the gated pod is after a node event (-want, +got):\n%s", diff)
	}
	// The leftover flush, a wildcard event, takes it out of the pool; its
	// gate puts it back, and it counts as coming in again, as upstream's.
	flushed := func() float64 {
		v, _ := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", framework.UnschedulableTimeout))
		return v
	}
	flushedBefore := flushed()
	clk.Step(DefaultPodMaxInUnschedulablePodsDuration + time.Second)
	q.flushUnschedulablePodsLeftover(logger)
	if diff := cmp.Diff([]any{unschedulableQ, flushedBefore + 1}, []any{where(q, "gated"), flushed()}); diff != "" {
		t.Errorf("where after the leftover flush, and queue_incoming_pods_total{unschedulable, UnschedulableTimeout} (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(int64(0), q.SchedulingCycle()); diff != "" {
		t.Errorf("scheduling cycles (-want, +got):\n%s", diff)
	}
	ungated := gated.DeepCopy()
	ungated.Spec.SchedulingGates = nil
	ungated.ResourceVersion = "2"
	q.Update(logger, gated, ungated)
	if diff := cmp.Diff([]string{"gated"}, popAll(t, logger, q)); diff != "" {
		t.Errorf("popped once the gate is removed (-want, +got):\n%s", diff)
	}
}

// TestActivate: Activate moves a pod from the pool or from backoffQ to
// activeQ at once; for a pod in flight it records an event that sends the
// pod to backoffQ when it fails; it ignores other pods.
func TestActivate(t *testing.T) {
	logger := newTestLogger(t)
	q := newTestQueue(t, testingclock.NewFakeClock(windowStart()))
	parked := addAndFail(t, logger, q, makePod("parked", 0), "Resources")
	backingOff := addAndFail(t, logger, q, makePod("backing-off", 0))
	q.Add(logger, makePod("flying", 0))
	flying := pop(t, logger, q)
	q.Activate(logger, map[string]*v1.Pod{"ns/parked": parked.Pod, "ns/backing-off": backingOff.Pod, "ns/flying": flying.Pod, "ns/unknown": makePod("unknown", 0)})
	fail(t, logger, q, flying, "Resources")
	got := map[string]string{}
	for _, name := range []string{"parked", "backing-off", "flying", "unknown"} {
		got[name] = where(q, name)
	}
	if diff := cmp.Diff(map[string]string{"parked": activeQ, "backing-off": activeQ, "flying": backoffQ, "unknown": ""}, got); diff != "" {
		t.Errorf("where the pods are after Activate (-want, +got):\n%s", diff)
	}
}

// TestGatedPodFlushedOncePerPeriod: a gated pod never fails, so its
// Timestamp stays where it was added; the flush remembers when it last
// flushed it (FlushTimestamp, as upstream's flushUnschedulableEntitiesLeftover
// does), so that it is not flushed again at every tick, each time sending
// a wildcard event to the pods in flight.
func TestGatedPodFlushedOncePerPeriod(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(windowStart())
	q := newTestQueue(t, clk, WithPodMaxInUnschedulablePodsDuration(time.Minute), WithPreEnqueuePlugins([]fwk.PreEnqueuePlugin{gate{}}))
	gated := makePod("gated", 0)
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	q.Add(logger, gated)
	clk.Step(2 * time.Minute)
	q.flushUnschedulablePodsLeftover(logger) // flushes the gated pod, which stays gated
	clk.Step(30 * time.Second)
	q.Add(logger, makePod("flying", 0))
	flying := pop(t, logger, q)
	q.flushUnschedulablePodsLeftover(logger) // 30 s after the last flush: nothing to flush
	fail(t, logger, q, flying, "Resources")
	if diff := cmp.Diff(map[string]string{"gated": unschedulableQ, "flying": unschedulableQ}, map[string]string{"gated": where(q, "gated"), "flying": where(q, "flying")}); diff != "" {
		t.Errorf("where the pods are (-want, +got):\n%s", diff)
	}
}

// TestRetriedPodsTakeTurns records which pod each attempt pops when the
// head fails every time and an event brings it straight back: the failed
// pod, timestamped again, goes behind the pods of its priority that waited
// meanwhile, but stays ahead of lower priorities.
func TestRetriedPodsTakeTurns(t *testing.T) {
	tests := []struct {
		name string
		pods []*v1.Pod // added in this order, one second apart
		want []string  // the pod each attempt pops
	}{
		{
			name: "equal priority: each pod in turn",
			pods: []*v1.Pod{makePod("p1", 0), makePod("p2", 0), makePod("p3", 0)},
			want: []string{"p1", "p2", "p3", "p1"},
		},
		{
			name: "a higher priority still goes first",
			pods: []*v1.Pod{makePod("low", 0), makePod("high", 10)},
			want: []string{"high", "high", "high"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			clk := testingclock.NewFakeClock(windowStart())
			q := newTestQueue(t, clk)
			for _, p := range tt.pods {
				q.Add(logger, p)
				clk.Step(time.Second)
			}
			var got []string
			for range len(tt.want) {
				// Pop would wait for a pod that did not come back.
				if len(q.PodsInActiveQ()) == 0 {
					t.Fatalf("after popping %v, activeQ is empty", got)
				}
				pInfo := pop(t, logger, q)
				got = append(got, pInfo.Pod.Name)
				clk.Step(time.Second)
				fail(t, logger, q, pInfo, "Resources")
				// Past the longest backoff: the event brings the pod
				// straight back to activeQ.
				clk.Step(DefaultPodMaxBackoffDuration)
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pods popped (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestGetBackoffTime: the backoff doubles with the consecutive failures
// from 1 s, and errors are counted apart: a pod whose last attempts
// failed with errors backs off by their count, not by its unschedulable
// count (calculateBackoffDuration's count, as upstream's getBackoffTime
// picks it). The end is truncated to the start of its one-second window,
// and the pod backs off until that window is over.
func TestGetBackoffTime(t *testing.T) {
	tests := []struct {
		name                 string
		unschedulable, error int
		intoWindow           time.Duration // the pod's timestamp, after the start of its window
		want                 time.Duration // after the pod's timestamp; 0: no backoff
		backingOffAt         time.Duration // asked this long after the timestamp
		wantBackingOff       bool
	}{
		{name: "never failed: no backoff", want: 0, backingOffAt: 0, wantBackingOff: false},
		{name: "one failure: 1s", unschedulable: 1, want: time.Second, backingOffAt: 500 * time.Millisecond, wantBackingOff: true},
		{name: "one failure: still backing off in the window its backoff ends in", unschedulable: 1, want: time.Second, backingOffAt: 1900 * time.Millisecond, wantBackingOff: true},
		{name: "one failure: done when that window is over", unschedulable: 1, want: time.Second, backingOffAt: 2 * time.Second, wantBackingOff: false},
		{name: "one failure 300ms into a window: the end is truncated to its window", unschedulable: 1, intoWindow: 300 * time.Millisecond, want: 700 * time.Millisecond, backingOffAt: 1700 * time.Millisecond, wantBackingOff: false},
		{name: "three failures: 4s", unschedulable: 3, want: 4 * time.Second, backingOffAt: 3 * time.Second, wantBackingOff: true},
		{name: "three failures, then 2 errors: 2s", unschedulable: 3, error: 2, want: 2 * time.Second, backingOffAt: 3 * time.Second, wantBackingOff: false},
		{name: "errors only: 1s", error: 1, want: time.Second, backingOffAt: 2 * time.Second, wantBackingOff: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := windowStart().Add(tt.intoWindow)
			clk := testingclock.NewFakeClock(start)
			q := newTestQueue(t, clk)
			pInfo := q.newQueuedPodInfo(makePod("p", 0))
			pInfo.Timestamp = start
			pInfo.UnschedulableCount, pInfo.ConsecutiveErrorsCount = tt.unschedulable, tt.error
			got := time.Duration(0)
			if bt := q.backoffQ.getBackoffTime(pInfo); !bt.IsZero() {
				got = bt.Sub(start)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("backoff (-want, +got):\n%s", diff)
			}
			// The end is kept in BackoffExpiration, as upstream keeps it: a
			// later failure count does not move a backoff already set.
			if got > 0 {
				pInfo.UnschedulableCount += 5
				if diff := cmp.Diff(got, q.backoffQ.getBackoffTime(pInfo).Sub(start)); diff != "" {
					t.Errorf("backoff asked again (-want, +got):\n%s", diff)
				}
			}
			clk.SetTime(start.Add(tt.backingOffAt))
			if diff := cmp.Diff(tt.wantBackingOff, q.backoffQ.isPodBackingoff(pInfo)); diff != "" {
				t.Errorf("isPodBackingoff %v after the timestamp (-want, +got):\n%s", tt.backingOffAt, diff)
			}
		})
	}
}
