package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	basemetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	testingclock "k8s.io/utils/clock/testing"
)

func gauge(t *testing.T, m basemetrics.GaugeMetric) float64 {
	t.Helper()
	v, err := testutil.GetGaugeMetricValue(m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUnschedulablePodsByPlugin follows scheduler_unschedulable_pods, which
// counts per plugin the pods it holds back: up when a pod it rejected is
// queued again or a gate holds a pod, down when the pod is popped or
// deleted, as upstream's queue moves it.
func TestUnschedulablePodsByPlugin(t *testing.T) {
	logger := newTestLogger(t)
	// Quorum holds every pod group member back: the group is never
	// complete.
	complete := false
	q := newTestQueue(t, testingclock.NewFakeClock(time.Now()), WithPreEnqueuePlugins([]fwk.PreEnqueuePlugin{quorum{&complete}}))
	// The pods name no scheduler: the profile label is "".
	read := func() map[string]float64 {
		out := map[string]float64{}
		for _, plugin := range []string{"Resources", "Labels", "Quorum"} {
			out[plugin] = gauge(t, metrics.UnschedulableReason(plugin, ""))
		}
		return out
	}
	base := read()
	delta := func() map[string]float64 {
		out := map[string]float64{}
		for k, v := range read() {
			if d := v - base[k]; d != 0 {
				out[k] = d
			}
		}
		return out
	}
	steps := []struct {
		name string
		do   func()
		want map[string]float64
	}{
		{"a failed pod counts for each plugin that rejected it", func() {
			addAndFail(t, logger, q, makePod("a", 0), "Resources", "Labels")
		}, map[string]float64{"Resources": 1, "Labels": 1}},
		{"another rejected by one plugin", func() {
			addAndFail(t, logger, q, makePod("b", 0), "Resources")
		}, map[string]float64{"Resources": 2, "Labels": 1}},
		{"a pod popped again no longer counts", func() {
			q.Activate(logger, map[string]*v1.Pod{"ns/a": makePod("a", 0)})
			q.Done(logger, pop(t, logger, q).Pod.UID)
		}, map[string]float64{"Resources": 1}},
		{"a deleted pod no longer counts", func() {
			q.Delete(logger, makePod("b", 0))
		}, map[string]float64{}},
		{"a gated member counts for its gate", func() {
			q.Add(logger, makeMember("m", "g"))
			q.AddPodGroup(logger, makePodGroup("g"))
		}, map[string]float64{"Quorum": 1}},
		{"checked again, still gated, it counts once", func() {
			// Activate runs the PreEnqueue plugins on the group again.
			q.Activate(logger, map[string]*v1.Pod{"ns/m": makeMember("m", "g")})
		}, map[string]float64{"Quorum": 1}},
		{"a member that joins the gated group is not checked until the group moves", func() {
			// As upstream's addToPodGroupIfExists: the group goes back to
			// the pool as it is, without PreEnqueue.
			q.Add(logger, makeMember("n", "g"))
		}, map[string]float64{"Quorum": 1}},
		{"members deleted no longer count", func() {
			q.Delete(logger, makeMember("m", "g"))
			q.Delete(logger, makeMember("n", "g"))
		}, map[string]float64{}},
		{"a member held apart, its group unknown, counts once deleted", func() {
			q.Add(logger, makeMember("o", "unknown"))
			q.Delete(logger, makeMember("o", "unknown"))
		}, map[string]float64{}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, delta()); diff != "" {
			t.Errorf("%s: unschedulable_pods growth by plugin (-want, +got):\n%s", s.name, diff)
		}
	}
}

// TestQueuedEntities counts entities, not pods: a pod group of three in
// activeQ is one podgroup entity, where pending_pods counts three pods.
func TestQueuedEntities(t *testing.T) {
	logger := newTestLogger(t)
	complete := true
	q := newTestQueue(t, testingclock.NewFakeClock(time.Now()), WithPreEnqueuePlugins([]fwk.PreEnqueuePlugin{quorum{&complete}}))
	for _, name := range []string{"a", "b", "c"} {
		q.Add(logger, makeMember(name, "g"))
	}
	q.AddPodGroup(logger, makePodGroup("g"))
	q.Add(logger, makePod("single", 0))
	got := [3]float64{
		gauge(t, metrics.ActiveEntities(metrics.Pod)),
		gauge(t, metrics.ActiveEntities(metrics.PodGroup)),
		gauge(t, metrics.ActivePods()),
	}
	if diff := cmp.Diff([3]float64{1, 1, 4}, got); diff != "" {
		t.Errorf("queued_entities{active} for pods and pod groups, and pending_pods{active} (-want, +got):\n%s", diff)
	}
	popped, members := popGroup(t, logger, q)
	if len(members) != 3 {
		t.Fatalf("popped group members %v, want 3", members)
	}
	got = [3]float64{
		gauge(t, metrics.ActiveEntities(metrics.Pod)),
		gauge(t, metrics.ActiveEntities(metrics.PodGroup)),
		gauge(t, metrics.ActivePods()),
	}
	if diff := cmp.Diff([3]float64{1, 0, 1}, got); diff != "" {
		t.Errorf("after the group is popped (-want, +got):\n%s", diff)
	}
	popped.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		q.Done(logger, pInfo.Pod.UID)
		return true
	})
}

// TestIncomingEntities counts an entity each time it changes queues, and
// its pods each time it enters one, as upstream's
// recordIncomingEntitiesMetrics.
func TestIncomingEntities(t *testing.T) {
	logger := newTestLogger(t)
	clk := testingclock.NewFakeClock(time.Now())
	q := newTestQueue(t, clk)
	incoming := func(queue, event string) [2]float64 {
		pods, err := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingPods.WithLabelValues(queue, event))
		if err != nil {
			t.Fatal(err)
		}
		entities, err := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingEntities.WithLabelValues(queue, event, metrics.Pod))
		if err != nil {
			t.Fatal(err)
		}
		return [2]float64{pods, entities}
	}
	add := framework.EventUnscheduledPodAdd.Label()
	before := incoming("active", add)
	q.Add(logger, makePod("a", 0))
	after := incoming("active", add)
	if diff := cmp.Diff([2]float64{before[0] + 1, before[1] + 1}, after); diff != "" {
		t.Errorf("queue_incoming_{pods,entities}_total{active, %s} after a new pod (-want, +got):\n%s", add, diff)
	}
	// A pod that failed and waits in the pool, moved by an event: the
	// pod and the entity both come into activeQ, from another queue.
	q.Done(logger, pop(t, logger, q).Pod.UID)
	addAndFail(t, logger, q, makePod("b", 0), "Resources")
	clk.Step(DefaultPodMaxBackoffDuration)
	before = incoming("active", nodeAdd.Label())
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	after = incoming("active", nodeAdd.Label())
	if diff := cmp.Diff([2]float64{before[0] + 1, before[1] + 1}, after); diff != "" {
		t.Errorf("queue_incoming_{pods,entities}_total{active, NodeAdd} after a move from the pool (-want, +got):\n%s", diff)
	}
	// A member joins its group in activeQ: the group is taken out and put
	// back, so its pods count again, but the group did not change queues.
	q.AddPodGroup(logger, makePodGroup("g"))
	q.Add(logger, makeMember("m1", "g"))
	groups := func() float64 {
		v, err := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingEntities.WithLabelValues("active", add, metrics.PodGroup))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	groupsBefore, podsBefore := groups(), incoming("active", add)[0]
	q.Add(logger, makeMember("m2", "g"))
	if diff := cmp.Diff([2]float64{groupsBefore, podsBefore + 2}, [2]float64{groups(), incoming("active", add)[0]}); diff != "" {
		t.Errorf("queue_incoming_entities_total{active, %s, podgroup} and the pods' count after a member joined its group in activeQ (-want, +got):\n%s", add, diff)
	}
}

// TestIncomingEntitiesFollowTheHint: an entity that goes where its
// queueing hint sends it counts its pods in queue_incoming_pods_total but
// not itself in queue_incoming_entities_total, as in v1.37.1, whose
// requeueEntityWithQueueingStrategy hands the hint to
// recordIncomingEntitiesMetrics; one that goes elsewhere, or comes with no
// hint, counts both.
func TestIncomingEntitiesFollowTheHint(t *testing.T) {
	failing := func(t *testing.T, logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
		addAndFail(t, logger, q, makePod("p", 0), "Resources")
	}
	tests := []struct {
		name         string
		before       func(t *testing.T, logger klog.Logger, q *PriorityQueue, clk *testingclock.FakeClock)
		act          func(t *testing.T, logger klog.Logger, q *PriorityQueue, clk *testingclock.FakeClock)
		opts         []Option
		queue, event string
		want         [2]float64 // growth of the pods' count and of the entities'
	}{
		{
			name:   "a new pod, to activeQ with no hint: both",
			before: func(*testing.T, klog.Logger, *PriorityQueue, *testingclock.FakeClock) {},
			act: func(_ *testing.T, logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
				q.Add(logger, makePod("p", 0))
			},
			queue: "active", event: framework.EventUnscheduledPodAdd.Label(), want: [2]float64{1, 1},
		},
		{
			name:   "a failure with no event in flight, to the pool as QueueSkip says: the pod only",
			before: func(*testing.T, klog.Logger, *PriorityQueue, *testingclock.FakeClock) {},
			act:    failing,
			queue:  "unschedulable", event: framework.ScheduleAttemptFailure, want: [2]float64{1, 0},
		},
		{
			name:   "a failure after an event in flight, to backoffQ as Queue says: the pod only",
			before: func(*testing.T, klog.Logger, *PriorityQueue, *testingclock.FakeClock) {},
			act: func(t *testing.T, logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
				q.Add(logger, makePod("p", 0))
				pInfo := pop(t, logger, q)
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
				fail(t, logger, q, pInfo, "Resources")
			},
			queue: "backoff", event: framework.ScheduleAttemptFailure, want: [2]float64{1, 0},
		},
		{
			name:   "an event during the backoff, from the pool to backoffQ as Queue says: the pod only",
			before: failing,
			act: func(_ *testing.T, logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
			},
			queue: "backoff", event: nodeAdd.Label(), want: [2]float64{1, 0},
		},
		{
			name: "an event after the backoff, from the pool to activeQ though Queue said backoffQ: both",
			before: func(t *testing.T, logger klog.Logger, q *PriorityQueue, clk *testingclock.FakeClock) {
				failing(t, logger, q, clk)
				clk.Step(DefaultPodMaxBackoffDuration)
			},
			act: func(_ *testing.T, logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
			},
			queue: "active", event: nodeAdd.Label(), want: [2]float64{1, 1},
		},
		{
			name: "the leftover flush of a gated pod, back into the pool though the hint said backoffQ: both",
			opts: []Option{WithPreEnqueuePlugins([]fwk.PreEnqueuePlugin{gate{}})},
			before: func(_ *testing.T, logger klog.Logger, q *PriorityQueue, clk *testingclock.FakeClock) {
				gated := makePod("p", 0)
				gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
				q.Add(logger, gated)
				clk.Step(DefaultPodMaxInUnschedulablePodsDuration + time.Second)
			},
			act: func(_ *testing.T, logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
				q.flushUnschedulableEntitiesLeftover(logger)
			},
			queue: "unschedulable", event: framework.UnschedulableTimeout, want: [2]float64{1, 1},
		},
		{
			name:   "Activate, from the pool with no hint: both",
			before: failing,
			act: func(_ *testing.T, logger klog.Logger, q *PriorityQueue, _ *testingclock.FakeClock) {
				q.Activate(logger, map[string]*v1.Pod{"ns/p": makePod("p", 0)})
			},
			queue: "active", event: framework.ForceActivate, want: [2]float64{1, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger := newTestLogger(t)
			clk := testingclock.NewFakeClock(time.Now())
			q := newTestQueue(t, clk, tt.opts...)
			incoming := func() [2]float64 {
				pods, _ := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingPods.WithLabelValues(tt.queue, tt.event))
				entities, _ := testutil.GetCounterMetricValue(metrics.SchedulerQueueIncomingEntities.WithLabelValues(tt.queue, tt.event, metrics.Pod))
				return [2]float64{pods, entities}
			}
			tt.before(t, logger, q, clk)
			before := incoming()
			tt.act(t, logger, q, clk)
			after := incoming()
			if diff := cmp.Diff(tt.want, [2]float64{after[0] - before[0], after[1] - before[1]}); diff != "" {
				t.Errorf("growth of queue_incoming_{pods,entities}_total{%s, %s} (-want, +got):\n%s", tt.queue, tt.event, diff)
			}
		})
	}
}

// TestInFlightEventsMetric counts what the in-flight list holds, by event, in
// scheduler_inflight_events: the recorder adds up the changes and hands
// them over once its interval has passed since the last time, and at once
// when the last pod in flight is done.
func TestInFlightEventsMetric(t *testing.T) {
	logger := newTestLogger(t)
	stop := make(chan struct{})
	defer close(stop)
	// A short interval: the second change below comes after it.
	recorder := metrics.NewMetricsAsyncRecorder(100, time.Millisecond, stop)
	q := newTestQueue(t, testingclock.NewFakeClock(time.Now()), WithMetricsRecorder(recorder))
	read := func() [2]float64 {
		recorder.FlushMetrics()
		return [2]float64{
			gauge(t, metrics.InFlightEvents.WithLabelValues(metrics.PodPoppedInFlightEvent)),
			gauge(t, metrics.InFlightEvents.WithLabelValues(nodeAdd.Label())),
		}
	}
	before := read()
	q.Add(logger, makePod("a", 0))
	a := pop(t, logger, q)
	// Let the interval pass: the event's change hands over both.
	time.Sleep(2 * time.Millisecond)
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	got := read()
	if diff := cmp.Diff([2]float64{before[0] + 1, before[1] + 1}, got); diff != "" {
		t.Errorf("inflight_events{PodPopped, NodeAdd} with a pod in flight (-want, +got):\n%s", diff)
	}
	q.Done(logger, a.Pod.UID)
	if diff := cmp.Diff(before, read()); diff != "" {
		t.Errorf("inflight_events{PodPopped, NodeAdd} once the pod is done (-want, +got):\n%s", diff)
	}
}

// TestQueueingHintDuration records each hint's duration by plugin, event
// and answer, once the recorder flushes.
func TestQueueingHintDuration(t *testing.T) {
	logger := newTestLogger(t)
	stop := make(chan struct{})
	defer close(stop)
	recorder := metrics.NewMetricsAsyncRecorder(100, time.Hour, stop)
	q := newTestQueue(t, testingclock.NewFakeClock(time.Now()), WithMetricsRecorder(recorder))
	addAndFail(t, logger, q, makePod("a", 0), "Resources", "Broken")
	read := func(plugin, hint string) uint64 {
		recorder.FlushMetrics()
		vec, err := testutil.GetHistogramVecFromGatherer(legacyregistry.DefaultGatherer, "scheduler_queueing_hint_execution_duration_seconds", map[string]string{"plugin": plugin, "event": nodeAdd.Label(), "hint": hint})
		if err != nil {
			return 0
		}
		return vec.GetAggregatedSampleCount()
	}
	before := [2]uint64{read("Resources", metrics.QueueingHintResultQueue), read("Labels", metrics.QueueingHintResultQueueSkip)}
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, plain, nil)
	after := [2]uint64{read("Resources", metrics.QueueingHintResultQueue), read("Labels", metrics.QueueingHintResultQueueSkip)}
	// Resources rejected the pod and answers Queue; Labels did not reject
	// it, so its hint is not asked.
	if diff := cmp.Diff([2]uint64{1, 0}, [2]uint64{after[0] - before[0], after[1] - before[1]}); diff != "" {
		t.Errorf("hint durations recorded for {Resources Queue, Labels QueueSkip} (-want, +got):\n%s", diff)
	}
}
