package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"

	internalcache "minisched/10-percentage-of-nodes-to-score/scheduler/backend/cache"
	"minisched/10-percentage-of-nodes-to-score/scheduler/framework/plugins/gang"
	"minisched/10-percentage-of-nodes-to-score/scheduler/framework/plugins/nodecost"
	"minisched/10-percentage-of-nodes-to-score/scheduler/metrics"
)

// nodeWrapper builds test nodes, after upstream's st.MakeNode().
type nodeWrapper struct{ v1.Node }

func makeNode(name string) *nodeWrapper {
	res := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110")}
	return &nodeWrapper{v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status:     v1.NodeStatus{Allocatable: res, Capacity: res},
	}}
}

func (n *nodeWrapper) label(k, v string) *nodeWrapper { n.Labels[k] = v; return n }
func (n *nodeWrapper) unschedulable() *nodeWrapper    { n.Spec.Unschedulable = true; return n }
func (n *nodeWrapper) taint(k, v string) *nodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: k, Value: v, Effect: v1.TaintEffectNoSchedule})
	return n
}
func (n *nodeWrapper) softTaint(k, v string) *nodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: k, Value: v, Effect: v1.TaintEffectPreferNoSchedule})
	return n
}
func (n *nodeWrapper) cpu(q string) *nodeWrapper {
	n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse(q)
	return n
}
func (n *nodeWrapper) obj() *v1.Node { return &n.Node }

// podWrapper builds test pods, after upstream's st.MakePod().
type podWrapper struct{ v1.Pod }

func makePod(name string) *podWrapper {
	return &podWrapper{v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name + "-uid")},
		Spec:       v1.PodSpec{SchedulerName: DefaultSchedulerName},
	}}
}

func (p *podWrapper) schedulerName(s string) *podWrapper { p.Spec.SchedulerName = s; return p }
func (p *podWrapper) node(n string) *podWrapper          { p.Spec.NodeName = n; return p }
func (p *podWrapper) phase(ph v1.PodPhase) *podWrapper   { p.Status.Phase = ph; return p }
func (p *podWrapper) gate(g string) *podWrapper {
	p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: g})
	return p
}
func (p *podWrapper) terminating() *podWrapper {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}
func (p *podWrapper) req(cpu string) *podWrapper {
	p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}
	return p
}
func (p *podWrapper) nodeSelector(k, v string) *podWrapper {
	p.Spec.NodeSelector = map[string]string{k: v}
	return p
}
func (p *podWrapper) toleration(k, v string) *podWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: k, Operator: v1.TolerationOpEqual, Value: v, Effect: v1.TaintEffectNoSchedule})
	return p
}
func (p *podWrapper) annotate(k, v string) *podWrapper {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
	return p
}
func (p *podWrapper) obj() *v1.Pod { return &p.Pod }

func withAffinity(p *v1.Pod, a *v1.Affinity) *v1.Pod { p.Spec.Affinity = a; return p }

// newTestScheduler builds a Scheduler on a fake clientset and starts its
// informers, so its cache holds the fake's nodes and bound pods; the
// informers and the plugins' goroutines end with the test.
func newTestScheduler(t *testing.T, ctx context.Context, client *fake.Clientset, recorder events.EventRecorder, opts ...Option) *Scheduler {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	sched, err := New(ctx, client, recorder, opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	sched.informerFactory.Start(ctx.Done())
	t.Cleanup(func() { cancel(); sched.informerFactory.Shutdown() })
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		t.Fatal(err)
	}
	return sched
}

// testContext returns a context that carries the test's logger and is
// canceled when the test ends, so that the goroutines a scheduler starts
// on it (informers, the framework's metrics recorder) end with the test.
func testContext(t *testing.T) context.Context {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	return ctx
}

// held counts what the scheduler's queue holds: activeQ, backoffQ, the
// unschedulable pool, and the in-flight list of pods and events.
func held(sched *Scheduler) int {
	return len(sched.queue.PodsInActiveQ()) + len(sched.queue.PodsInBackoffQ()) + len(sched.queue.UnschedulablePods()) +
		len(sched.queue.InFlightPods()) + sched.queue.InFlightEventsLen()
}

// waitUntil polls cond every 10 ms, for five seconds at most, and fails
// the test, saying what it waited for, if cond never holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// cachedNodes returns what a fresh snapshot of the scheduler's cache shows.
// The scheduler's own snapshot belongs to its scheduling loop, which may be
// refreshing it.
func cachedNodes(t *testing.T, sched *Scheduler) []fwk.NodeInfo {
	t.Helper()
	snap := internalcache.NewEmptySnapshot()
	if err := sched.cache.UpdateSnapshot(klog.Background(), snap); err != nil {
		t.Fatal(err)
	}
	return snap.List()
}

// assumedPods returns how many pods the cache holds as assumed.
func assumedPods(sched *Scheduler) int {
	_, assumed := sched.cache.Dump()
	return len(assumed)
}

// popped pops pods from the scheduler's queue, as the scheduling loop
// does, until it gets pod, and puts back the pods popped before it. Tests
// that drive scheduleOnePod themselves use it to choose the pod. It pops
// for real because the queue counts scheduling cycles: a failure is judged
// against the events that came since the last Pop. A pod that is not in
// activeQ (the informer left it out, or it waits in another part of the
// queue) is added first.
func popped(t *testing.T, sched *Scheduler, pod *v1.Pod) *framework.QueuedPodInfo {
	t.Helper()
	logger := klog.Background()
	if !slices.ContainsFunc(sched.queue.PodsInActiveQ(), func(p *v1.Pod) bool { return p.UID == pod.UID }) {
		sched.queue.Add(logger, pod)
	}
	var others []*v1.Pod
	defer func() {
		for _, p := range others {
			sched.queue.Done(logger, p.UID)
			sched.queue.Add(logger, p)
		}
	}()
	for {
		pInfo, err := sched.queue.Pop(logger)
		if err != nil {
			t.Fatal(err)
		}
		if pInfo.Pod.UID == pod.UID {
			return pInfo
		}
		others = append(others, pInfo.Pod)
	}
}

// newBufferedTestContext returns a context whose logger keeps its entries,
// down to -v=5, where the queue logs each Done.
func newBufferedTestContext(t *testing.T) context.Context {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(5)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	t.Cleanup(cancel)
	return ctx
}

// checkDoneOnce checks that the pod's flight ended exactly once (one "Pod
// done" in ctx's log for its UID) and that nothing is left in flight.
func checkDoneOnce(t *testing.T, ctx context.Context, sched *Scheduler, pod *v1.Pod) {
	t.Helper()
	done := 0
	for _, e := range klog.FromContext(ctx).GetSink().(ktesting.Underlier).GetBuffer().Data() {
		for i := 0; e.Message == "Pod done" && i+1 < len(e.ParameterKVList); i += 2 {
			if e.ParameterKVList[i] == "podUID" && e.ParameterKVList[i+1] == pod.UID {
				done++
			}
		}
	}
	if diff := cmp.Diff(1, done); diff != "" {
		t.Errorf("Done of pod %s (-want, +got):\n%s", pod.Name, diff)
	}
	if diff := cmp.Diff([2]int{0, 0}, [2]int{len(sched.queue.InFlightPods()), sched.queue.InFlightEventsLen()}); diff != "" {
		t.Errorf("pods in flight and length of the in-flight list (-want, +got):\n%s", diff)
	}
}

// queuedAs says where the pod waits in the queue: "" when it is not
// queued, else the queue and, for the unschedulable pool, the plugins that
// rejected it.
func queuedAs(sched *Scheduler, pod *v1.Pod) string {
	pInfo, ok := sched.queue.GetPod(pod.Name, pod.Namespace)
	switch {
	case !ok:
		return ""
	case slices.ContainsFunc(sched.queue.UnschedulablePods(), func(p *v1.Pod) bool { return p.UID == pod.UID }):
		return fmt.Sprintf("Unschedulable, rejected by %v", sets.List(pInfo.UnschedulablePlugins.Union(pInfo.PendingPlugins)))
	case slices.ContainsFunc(sched.queue.PodsInBackoffQ(), func(p *v1.Pod) bool { return p.UID == pod.UID }):
		return "Backoff"
	}
	return "Active"
}

// podScheduledCondition returns the pod's PodScheduled condition as
// "Status Reason: Message", or "" when it has none.
func podScheduledCondition(t *testing.T, ctx context.Context, client *fake.Clientset, pod *v1.Pod) string {
	t.Helper()
	got, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return ""
}

// bindings lists the Bindings a fake clientset received, as "ns/pod->node".
func bindings(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "binding" {
			b := a.(clienttesting.CreateAction).GetObject().(*v1.Binding)
			out = append(out, fmt.Sprintf("%s/%s->%s", b.Namespace, b.Name, b.Target.Name))
		}
	}
	return out
}

// drainEvents returns the events a FakeRecorder holds, as "Type Reason".
func drainEvents(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			// FakeRecorder formats "Type Reason Note"; keep type and reason.
			f := strings.SplitN(e, " ", 3)
			out = append(out, f[0]+" "+f[1])
		default:
			return out
		}
	}
}

// attempts reads scheduler_schedule_attempts_total for one result and
// profile from the registry /metrics serves.
func attempts(t *testing.T, result, profile string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "scheduler_schedule_attempts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["result"] == result && labels["profile"] == profile {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestScheduleOne(t *testing.T) {
	metrics.Register()
	threeNodes := []*v1.Node{makeNode("node-a").obj(), makeNode("node-b").obj(), makeNode("node-c").obj()}
	tests := []struct {
		name           string
		pod            *v1.Pod
		nodes          []*v1.Node
		assumedAlready bool
		bindErr        error
		wantBindings   []string
		wantEvents     []string
		wantResult     string // the schedule_attempts_total result that grew, "" for none
		wantCondition  string // the pod's PodScheduled condition afterwards
		wantQueued     string // where the pod waits afterwards (see queuedAs)
	}{
		{
			name:         "pending pod is bound to the only node",
			pod:          makePod("p").obj(),
			nodes:        []*v1.Node{makeNode("node-a").obj()},
			wantBindings: []string{"default/p->node-a"},
			wantEvents:   []string{"Normal Scheduled"},
			wantResult:   metrics.ScheduledResult,
		},
		{
			name: "pod is bound to the only node it fits",
			pod:  makePod("p").req("2").nodeSelector("disk", "ssd").obj(),
			nodes: []*v1.Node{
				makeNode("small").label("disk", "ssd").cpu("1").obj(),
				makeNode("hdd").obj(),
				makeNode("cordoned").label("disk", "ssd").unschedulable().obj(),
				makeNode("fits").label("disk", "ssd").obj(),
			},
			wantBindings: []string{"default/p->fits"},
			wantEvents:   []string{"Normal Scheduled"},
			wantResult:   metrics.ScheduledResult,
		},
		{
			name:         "toleration lets the pod onto a tainted node",
			pod:          makePod("p").toleration("dedicated", "db").obj(),
			nodes:        []*v1.Node{makeNode("db").taint("dedicated", "db").obj()},
			wantBindings: []string{"default/p->db"},
			wantEvents:   []string{"Normal Scheduled"},
			wantResult:   metrics.ScheduledResult,
		},
		{
			name: "no node fits: upstream's aggregated message in the condition",
			pod:  makePod("p").req("2").obj(),
			nodes: []*v1.Node{
				makeNode("cordoned").unschedulable().obj(),
				makeNode("small-1").cpu("1").obj(),
				makeNode("small-2").cpu("1").obj(),
				makeNode("tainted").taint("dedicated", "db").obj(),
			},
			wantEvents:    []string{"Warning FailedScheduling"},
			wantResult:    metrics.UnschedulableResult,
			wantCondition: "False Unschedulable: 0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 Insufficient cpu. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
			wantQueued:    "Unschedulable, rejected by [NodeResourcesFit NodeUnschedulable TaintToleration]",
		},
		{
			name:          "node selector that no node matches",
			pod:           makePod("p").nodeSelector("disk", "ssd").obj(),
			nodes:         threeNodes,
			wantEvents:    []string{"Warning FailedScheduling"},
			wantResult:    metrics.UnschedulableResult,
			wantCondition: "False Unschedulable: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
			wantQueued:    "Unschedulable, rejected by [NodeAffinity]",
		},
		{
			name:  "pod for another scheduler is ignored",
			pod:   makePod("p").schedulerName("default-scheduler").obj(),
			nodes: threeNodes,
		},
		{
			name:  "pod that already has a node is ignored",
			pod:   makePod("p").node("node-a").obj(),
			nodes: threeNodes,
		},
		{
			name:  "pod being deleted is ignored",
			pod:   makePod("p").terminating().obj(),
			nodes: threeNodes,
		},
		{
			name:  "terminated pod is ignored",
			pod:   makePod("p").phase(v1.PodSucceeded).obj(),
			nodes: threeNodes,
		},
		{
			name:           "pod this scheduler assumed already is not bound twice",
			pod:            makePod("p").obj(),
			nodes:          threeNodes,
			assumedAlready: true,
		},
		{
			name:          "no nodes: unschedulable, with an event and a condition",
			pod:           makePod("p").obj(),
			wantEvents:    []string{"Warning FailedScheduling"},
			wantResult:    metrics.UnschedulableResult,
			wantCondition: "False Unschedulable: no nodes available to schedule pods",
			// No plugin rejected it: error backoff.
			wantQueued: "Backoff",
		},
		{
			name:          "rejected binding: error, with an event and a condition",
			pod:           makePod("p").obj(),
			nodes:         []*v1.Node{makeNode("node-a").obj()},
			bindErr:       fmt.Errorf("pods \"p\" is forbidden"),
			wantBindings:  []string{"default/p->node-a"},
			wantEvents:    []string{"Warning FailedScheduling"},
			wantResult:    metrics.ErrorResult,
			wantCondition: "False SchedulerError: binding rejected: running Bind plugin \"DefaultBinder\": pods \"p\" is forbidden",
			wantQueued:    "Backoff",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := newBufferedTestContext(t)
			// A profile name per case keeps the counters of cases apart.
			profile := fmt.Sprintf("test-%d", i)
			pod := tt.pod.DeepCopy()
			if pod.Spec.SchedulerName == DefaultSchedulerName {
				pod.Spec.SchedulerName = profile
			}
			objs := []runtime.Object{pod}
			for _, n := range tt.nodes {
				objs = append(objs, n)
			}
			client := fake.NewClientset(objs...)
			if tt.bindErr != nil {
				client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
					return a.GetSubresource() == "binding", nil, tt.bindErr
				})
			}
			recorder := events.NewFakeRecorder(10)
			sched := newTestScheduler(t, ctx, client, recorder, WithSchedulerName(profile), WithRand(rand.New(rand.NewPCG(1, 2))))
			if tt.assumedAlready {
				assumed := pod.DeepCopy()
				assumed.Spec.NodeName = "node-a"
				if err := sched.cache.AssumePod(assumed); err != nil {
					t.Fatal(err)
				}
			}
			before := map[string]float64{}
			for _, r := range []string{metrics.ScheduledResult, metrics.UnschedulableResult, metrics.ErrorResult} {
				before[r] = attempts(t, r, profile)
			}

			sched.scheduleOnePod(ctx, popped(t, sched, pod))
			// The binding cycle runs in a goroutine of its own.
			sched.bindings.Wait()

			if diff := cmp.Diff(tt.wantBindings, bindings(client)); diff != "" {
				t.Errorf("bindings (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvents, drainEvents(recorder)); diff != "" {
				t.Errorf("events (-want, +got):\n%s", diff)
			}
			var grew []string
			for r, v := range before {
				if attempts(t, r, profile) != v {
					grew = append(grew, r)
				}
			}
			var want []string
			if tt.wantResult != "" {
				want = []string{tt.wantResult}
			}
			if diff := cmp.Diff(want, grew); diff != "" {
				t.Errorf("schedule_attempts_total results that grew (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCondition, podScheduledCondition(t, ctx, client, pod)); diff != "" {
				t.Errorf("PodScheduled condition (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantQueued, queuedAs(sched, pod)); diff != "" {
				t.Errorf("queued (-want, +got):\n%s", diff)
			}
			if n := assumedPods(sched); n != 0 && !tt.assumedAlready && tt.wantResult != metrics.ScheduledResult {
				t.Errorf("%d pods still assumed after a failed binding cycle", n)
			}
			// Every path, skipped, scheduled, unschedulable or error, ends
			// the pod's flight once.
			checkDoneOnce(t, ctx, sched, pod)
		})
	}
}

// TestSchedulePodFollowsScores: among nodes that all fit, the pod goes to
// the one the weighted scores prefer.
func TestSchedulePodFollowsScores(t *testing.T) {
	busy := makePod("busy").req("3").node("loaded").obj()
	preferZoneB := &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
		Weight:     10,
		Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}},
	}}}}
	tests := []struct {
		name     string
		pod      *v1.Pod
		nodes    []*v1.Node
		existing []*v1.Pod
		want     string
	}{
		{
			name:     "LeastAllocated: the emptier node",
			pod:      makePod("p").req("500m").obj(),
			nodes:    []*v1.Node{makeNode("loaded").obj(), makeNode("empty").obj()},
			existing: []*v1.Pod{busy},
			want:     "empty",
		},
		{
			name:  "preferred node affinity wins over an equal node",
			pod:   withAffinity(makePod("p").obj(), preferZoneB),
			nodes: []*v1.Node{makeNode("a").label("zone", "a").obj(), makeNode("b").label("zone", "b").obj()},
			want:  "b",
		},
		{
			name:  "a PreferNoSchedule taint pushes the pod elsewhere",
			pod:   makePod("p").obj(),
			nodes: []*v1.Node{makeNode("soft-tainted").softTaint("spot", "true").obj(), makeNode("clean").obj()},
			want:  "clean",
		},
		{
			name:     "NodeCost: a pod that opts in prefers the cheap node, even loaded",
			pod:      makePod("p").req("500m").annotate(nodecost.PreferCheapAnnotation, "true").obj(),
			nodes:    []*v1.Node{makeNode("loaded").label(nodecost.CostLabel, "1").obj(), makeNode("empty").label(nodecost.CostLabel, "9").obj()},
			existing: []*v1.Pod{busy},
			want:     "loaded",
		},
		{
			name:     "NodeCost: a pod that does not opt in ignores cost",
			pod:      makePod("p").req("500m").obj(),
			nodes:    []*v1.Node{makeNode("loaded").label(nodecost.CostLabel, "1").obj(), makeNode("empty").label(nodecost.CostLabel, "9").obj()},
			existing: []*v1.Pod{busy},
			want:     "empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			var objs []runtime.Object
			for _, n := range tt.nodes {
				objs = append(objs, n)
			}
			for _, p := range tt.existing {
				objs = append(objs, p)
			}
			sched := newTestScheduler(t, ctx, fake.NewClientset(objs...), events.NewFakeRecorder(10))
			// Every seed must give the same answer: there is no tie.
			for seed := range uint64(20) {
				sched.rand = rand.New(rand.NewPCG(seed, seed))
				result, err := sched.schedulePod(ctx, framework.NewCycleState(), tt.pod)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, result.SuggestedHost); diff != "" {
					t.Fatalf("seed %d: node (-want, +got):\n%s", seed, diff)
				}
			}
		})
	}
}

// TestRunScorePluginsSkipsOptedOutPlugins: a plugin that answers Skip in
// PreScore is left out of the pod's scores. Upstream's plugins do it too:
// NodeAffinity for a pod without preferred terms, BalancedAllocation for a
// pod that requests nothing. NodeCost does it for a pod without the
// annotation.
func TestRunScorePluginsSkipsOptedOutPlugins(t *testing.T) {
	ctx := testContext(t)
	sched := newTestScheduler(t, ctx, fake.NewClientset(), events.NewFakeRecorder(10))
	node := framework.NewNodeInfo()
	node.SetNode(makeNode("n").obj())
	plugins := func(pod *v1.Pod) []string {
		state := framework.NewCycleState()
		if s := sched.framework.RunPreScorePlugins(ctx, state, pod, []fwk.NodeInfo{node}); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		scores, s := sched.framework.RunScorePlugins(ctx, state, pod, []fwk.NodeInfo{node})
		if !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		var names []string
		for _, ps := range scores[0].Scores {
			names = append(names, ps.Name)
		}
		return names
	}
	preferred := &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
		Weight: 1, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpExists}}},
	}}}}
	tests := []struct {
		name string
		pod  *v1.Pod
		want []string
	}{
		{"best-effort pod", makePod("p").obj(), []string{"TaintToleration", "NodeResourcesFit"}},
		{"pod with requests and preferred affinity", withAffinity(makePod("p").req("1").obj(), preferred),
			[]string{"TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation"}},
		{"pod that opts in to NodeCost", makePod("p").req("1").annotate(nodecost.PreferCheapAnnotation, "true").obj(),
			[]string{"TaintToleration", "NodeResourcesFit", "NodeResourcesBalancedAllocation", nodecost.Name}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, plugins(tt.pod)); diff != "" {
			t.Errorf("%s: plugins that scored (-want, +got):\n%s", tt.name, diff)
		}
	}
}

// TestSelectHostBreaksTiesAtRandom: with equal totals every tied node is
// chosen for some seed, and a node with a lower total never is; one seed
// always gives the same answer.
func TestSelectHostBreaksTiesAtRandom(t *testing.T) {
	scores := func() []fwk.NodePluginScores {
		return []fwk.NodePluginScores{{Name: "a", TotalScore: 90}, {Name: "b", TotalScore: 90}, {Name: "low", TotalScore: 10}, {Name: "c", TotalScore: 90}}
	}
	ctx := testContext(t)
	sched := newTestScheduler(t, ctx, fake.NewClientset(), events.NewFakeRecorder(10))
	chosen := map[string]bool{}
	for seed := range uint64(100) {
		sched.rand = rand.New(rand.NewPCG(seed, 1))
		first := sched.selectHost(scores())
		sched.rand = rand.New(rand.NewPCG(seed, 1))
		if again := sched.selectHost(scores()); again != first {
			t.Fatalf("seed %d chose %s, then %s", seed, first, again)
		}
		chosen[first] = true
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "b": true, "c": true}, chosen); diff != "" {
		t.Errorf("nodes chosen over 100 seeds (-want, +got):\n%s", diff)
	}
}

// TestRunBindsPendingPods drives Run against a fake clientset: a pod that
// exists at start (found by the informer's list) and one created later
// (found by its watch) are both bound, once each.
func TestRunBindsPendingPods(t *testing.T) {
	ctx := testContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fake.NewClientset(makeNode("node-a").obj(), makePod("early").obj())
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()

	waitFor := func(want []string) {
		t.Helper()
		for range 500 {
			if cmp.Equal(want, bindings(client)) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("bindings (-want, +got):\n%s", cmp.Diff(want, bindings(client)))
	}
	waitFor([]string{"default/early->node-a"})
	if _, err := client.CoreV1().Pods("default").Create(ctx, makePod("late").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor([]string{"default/early->node-a", "default/late->node-a"})
	cancel()
	<-done
}

// TestEventMovesUnschedulablePod drives Run: a pod that no node matches
// waits in the unschedulable pool. A node event that the rejecting plugin
// (NodeAffinity) did not register for, a taint, leaves it there; a label
// change, which it registered, moves it to backoffQ, since the clock has
// not moved past its backoff; with activeQ empty, Pop takes it from there
// at once, and the pod is bound while the clock stands still.
func TestEventMovesUnschedulablePod(t *testing.T) {
	ctx := testContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clock := testingclock.NewFakeClock(time.Now())
	pod := makePod("p").nodeSelector("disk", "ssd").obj()
	client := fake.NewClientset(makeNode("node-a").obj(), pod)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100), WithClock(clock))
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	inPool := func() bool { return queuedAs(sched, pod) == "Unschedulable, rejected by [NodeAffinity]" }
	waitUntil(t, "the pod in the unschedulable pool", inPool)
	updateNode := func(change func(*v1.Node)) {
		t.Helper()
		node, err := client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(node)
		if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	updateNode(func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "k", Value: "v", Effect: v1.TaintEffectPreferNoSchedule}}
	})
	waitUntil(t, "the cache to see the taint", func() bool {
		nodes := cachedNodes(t, sched)
		return len(nodes) == 1 && len(nodes[0].Node().Spec.Taints) == 1
	})
	if !inPool() {
		t.Fatalf("after a taint change the pod is %q, want it still in the unschedulable pool", queuedAs(sched, pod))
	}
	updateNode(func(n *v1.Node) { n.Labels["disk"] = "ssd" })
	waitUntil(t, "the label change to bind the pod, before its backoff is over", func() bool { return cmp.Equal([]string{"default/p->node-a"}, bindings(client)) })
}

// gangPod is a member of gang g of the given size.
func gangPod(name, g string, size int) *podWrapper {
	p := makePod(name)
	p.Labels = map[string]string{gang.GroupLabel: g, gang.GroupSizeLabel: fmt.Sprint(size)}
	return p
}

// TestAssumedPodHoldsItsNode: a pod waiting at Permit is assumed on its
// node, so the next scheduling cycle sees the node as full; when the wait
// times out, the pod is forgotten, gets the Permit rejection as its reason,
// and the node is free again.
func TestAssumedPodHoldsItsNode(t *testing.T) {
	ctx := newBufferedTestContext(t)
	clock := testingclock.NewFakeClock(time.Now())
	waiter := gangPod("waiter", "g", 2).req("1").obj()
	other := makePod("other").req("1").obj()
	client := fake.NewClientset(makeNode("small").cpu("1").obj(), waiter, other)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100), WithClock(clock), WithGangTimeout(10*time.Second))

	sched.scheduleOnePod(ctx, popped(t, sched, waiter))
	if got := assumedPods(sched); got != 1 {
		t.Fatalf("assumed pods = %d, want the waiting one", got)
	}
	sched.scheduleOnePod(ctx, popped(t, sched, other))
	if diff := cmp.Diff("False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", podScheduledCondition(t, ctx, client, other)); diff != "" {
		t.Errorf("condition of the pod behind the assumed one (-want, +got):\n%s", diff)
	}

	clock.Step(10 * time.Second) // the gang's deadline
	sched.bindings.Wait()
	if got := assumedPods(sched); got != 0 {
		t.Errorf("assumed pods after the timeout = %d, want 0", got)
	}
	if diff := cmp.Diff("False Unschedulable: 0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Gang.", podScheduledCondition(t, ctx, client, waiter)); diff != "" {
		t.Errorf("condition of the timed-out pod (-want, +got):\n%s", diff)
	}
	checkDoneOnce(t, ctx, sched, waiter) // rejected at Permit
	if diff := cmp.Diff([]string(nil), bindings(client)); diff != "" {
		t.Errorf("bindings (-want, +got):\n%s", diff)
	}
	sched.scheduleOnePod(ctx, popped(t, sched, other))
	sched.bindings.Wait()
	if diff := cmp.Diff([]string{"default/other->small"}, bindings(client)); diff != "" {
		t.Errorf("bindings once the node is free (-want, +got):\n%s", diff)
	}
}

// TestGangAllowsAllAtOnce: members of a gang of three wait until the third
// arrives, and then all three are bound.
func TestGangAllowsAllAtOnce(t *testing.T) {
	ctx := testContext(t)
	members := []*v1.Pod{gangPod("m-0", "g", 3).obj(), gangPod("m-1", "g", 3).obj(), gangPod("m-2", "g", 3).obj()}
	client := fake.NewClientset(makeNode("node").obj(), members[0], members[1], members[2])
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	sched.scheduleOnePod(ctx, popped(t, sched, members[0]))
	sched.scheduleOnePod(ctx, popped(t, sched, members[1]))
	time.Sleep(50 * time.Millisecond)
	if diff := cmp.Diff([]string(nil), bindings(client)); diff != "" {
		t.Fatalf("bindings before the gang is complete (-want, +got):\n%s", diff)
	}
	sched.scheduleOnePod(ctx, popped(t, sched, members[2]))
	sched.bindings.Wait()
	got := bindings(client)
	sort.Strings(got)
	if diff := cmp.Diff([]string{"default/m-0->node", "default/m-1->node", "default/m-2->node"}, got); diff != "" {
		t.Errorf("bindings (-want, +got):\n%s", diff)
	}
}

// TestPodDeletedWhileBinding: the Binding fails because the pod was deleted
// meanwhile; the scheduler forgets the pod and reports it, and does not
// retry it.
func TestPodDeletedWhileBinding(t *testing.T) {
	ctx := newBufferedTestContext(t)
	pod := makePod("gone").obj()
	client := fake.NewClientset(makeNode("node").obj(), pod)
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		// The pod disappears just as it is being bound.
		if err := client.Tracker().Delete(v1.SchemeGroupVersion.WithResource("pods"), "default", "gone"); err != nil {
			t.Error(err)
		}
		return true, nil, apierrors.NewNotFound(v1.Resource("pods"), "gone")
	})
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	sched.scheduleOnePod(ctx, popped(t, sched, pod))
	sched.bindings.Wait()
	if n := assumedPods(sched); n != 0 {
		t.Errorf("%d pods still assumed", n)
	}
	checkDoneOnce(t, ctx, sched, pod)
	// Once the informer has delivered the deletion, the pod is nowhere in
	// the queue: neither in activeQ nor in the unschedulable pool. (If the
	// failure handler still found the pod, the Delete event removes it.)
	for range 500 {
		if queuedAs(sched, pod) == "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("a deleted pod is still queued: %s", queuedAs(sched, pod))
}

// TestPodDeletedAtPermit: a gang member waits at Permit and is deleted
// there. The delete handler rejects the waiting pod, its binding cycle ends
// without a Binding, and its flight ends once.
func TestPodDeletedAtPermit(t *testing.T) {
	ctx := newBufferedTestContext(t)
	pod := gangPod("lonely", "g", 2).obj()
	client := fake.NewClientset(makeNode("node").obj(), pod)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	sched.scheduleOnePod(ctx, popped(t, sched, pod))
	if got := assumedPods(sched); got != 1 {
		t.Fatalf("assumed pods = %d, want the waiting one", got)
	}
	if err := client.CoreV1().Pods("default").Delete(ctx, "lonely", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sched.bindings.Wait()
	if diff := cmp.Diff([]string(nil), bindings(client)); diff != "" {
		t.Errorf("bindings (-want, +got):\n%s", diff)
	}
	checkDoneOnce(t, ctx, sched, pod)
}

// TestIdleSchedulerHoldsNothing: once every pod is bound, the queue holds
// nothing, and a long run of cluster events while nothing is pending adds
// nothing to it: the memory of an idle scheduler stays flat.
func TestIdleSchedulerHoldsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	client := fake.NewClientset(makeNode("node").obj(), makePod("a").obj(), makePod("b").obj(), makePod("c").obj())
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, "the three pods to be bound", func() bool { return len(bindings(client)) == 3 })
	waitUntil(t, "the queue to hold nothing", func() bool { return held(sched) == 0 })
	const ticks = 200
	for i := range ticks {
		node, err := client.CoreV1().Nodes().Get(ctx, "node", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Labels["tick"] = fmt.Sprint(i)
		if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the cache to see the last label change", func() bool {
		nodes := cachedNodes(t, sched)
		return len(nodes) == 1 && nodes[0].Node().Labels["tick"] == fmt.Sprint(ticks-1)
	})
	if diff := cmp.Diff(0, held(sched)); diff != "" {
		t.Errorf("what the queue holds after %d events with nothing pending (-want, +got):\n%s", ticks, diff)
	}
}

// controlledPodWatch makes the fake clientset's pod watches ones the test
// controls: cut ends the current watch, and the next one fails as expired,
// so the informer's reflector lists the pods again, as after a real
// watch that dropped while the apiserver compacted its history.
type controlledPodWatch struct {
	mu       sync.Mutex
	current  *watch.FakeWatcher
	failNext bool
}

func newControlledPodWatch(client *fake.Clientset) *controlledPodWatch {
	w := &controlledPodWatch{}
	client.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.failNext {
			w.failNext = false
			return true, nil, apierrors.NewResourceExpired("too old resource version")
		}
		w.current = watch.NewFake()
		return true, w.current, nil
	})
	return w
}

// cut ends the current watch; the informer relists.
func (w *controlledPodWatch) cut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failNext = true
	if w.current != nil {
		w.current.Stop()
	}
}

// requestedMilliCPU returns the CPU the cache counts on every node.
func requestedMilliCPU(t *testing.T, sched *Scheduler) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, n := range cachedNodes(t, sched) {
		out[n.Node().Name] = n.GetRequested().GetMilliCPU()
	}
	return out
}

// TestTombstoneFreesAssumedPod: a pod is bound but still assumed (the
// informer has not confirmed it), the watch drops, the pod is deleted, and
// the relist hands over a DeletedFinalStateUnknown whose last-seen copy has
// no node. The cache must drop the assumed pod and free its node, as
// upstream's deletePod does for any tombstone.
func TestTombstoneFreesAssumedPod(t *testing.T) {
	ctx := testContext(t)
	pod := makePod("p").req("1").obj()
	client := fake.NewClientset(makeNode("node").obj(), pod)
	podWatch := newControlledPodWatch(client)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))

	sched.scheduleOnePod(ctx, popped(t, sched, pod))
	sched.bindings.Wait()
	if diff := cmp.Diff([]string{"default/p->node"}, bindings(client)); diff != "" {
		t.Fatalf("bindings (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(1, assumedPods(sched)); diff != "" {
		t.Fatalf("assumed pods before the deletion (-want, +got):\n%s", diff)
	}
	if err := client.Tracker().Delete(v1.SchemeGroupVersion.WithResource("pods"), "default", "p"); err != nil {
		t.Fatal(err)
	}
	podWatch.cut()
	waitUntil(t, "the relist to drop the assumed pod", func() bool { return assumedPods(sched) == 0 })
	if diff := cmp.Diff(map[string]int64{"node": 0}, requestedMilliCPU(t, sched)); diff != "" {
		t.Errorf("requested CPU after the tombstone (-want, +got):\n%s", diff)
	}
	if pods, _ := sched.cache.Dump(); len(pods) != 0 {
		t.Errorf("the cache still holds %d pods", len(pods))
	}
}

// TestPodDeletedWhileInBind: an assumed pod is deleted while its Binding is
// on its way. The deletion frees its node at once, as upstream's
// handleAssumedPodDeletion does, not only when the Binding fails.
func TestPodDeletedWhileInBind(t *testing.T) {
	ctx := newBufferedTestContext(t)
	pod := makePod("p").req("1").obj()
	client := fake.NewClientset(makeNode("node").obj(), pod)
	inBind, release := make(chan struct{}), make(chan struct{})
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		close(inBind)
		<-release
		return true, nil, apierrors.NewNotFound(v1.Resource("pods"), "p")
	})
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	sched.scheduleOnePod(ctx, popped(t, sched, pod))
	<-inBind
	// Through the tracker: the fake clientset holds its lock while the
	// Binding's reactor waits.
	if err := client.Tracker().Delete(v1.SchemeGroupVersion.WithResource("pods"), "default", "p"); err != nil {
		t.Fatal(err)
	}
	defer close(release)
	waitUntil(t, "the deletion to free the assumed pod's node", func() bool { return assumedPods(sched) == 0 })
	if diff := cmp.Diff(map[string]int64{"node": 0}, requestedMilliCPU(t, sched)); diff != "" {
		t.Errorf("requested CPU while the Binding is in flight (-want, +got):\n%s", diff)
	}
	release <- struct{}{}
	sched.bindings.Wait()
	if diff := cmp.Diff(0, assumedPods(sched)); diff != "" {
		t.Errorf("assumed pods after the failed Binding (-want, +got):\n%s", diff)
	}
	checkDoneOnce(t, ctx, sched, pod)
}

// TestGangTimedOutSlotIsNotReused: a member whose wait at Permit timed out
// is rejected, but stays in the waiting map until its binding goroutine
// reads the verdict. The next member must not count it: if it did, it
// would allow a pod that is already rejected and go on alone, binding one
// member of a gang of two.
func TestGangTimedOutSlotIsNotReused(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clock := testingclock.NewFakeClock(time.Now())
	sched := newTestScheduler(t, ctx, fake.NewClientset(makeNode("node").obj()), events.NewFakeRecorder(100), WithClock(clock), WithGangTimeout(10*time.Second))
	first, second := gangPod("first", "g", 2).node("node").obj(), gangPod("second", "g", 2).node("node").obj()

	if s := sched.framework.RunPermitPlugins(ctx, framework.NewCycleState(), first, "node"); !s.IsWait() {
		t.Fatalf("the first member's Permit = %v, want Wait", s)
	}
	clock.Step(10 * time.Second)
	timedOut := sched.framework.waitingPods.get(first.UID)
	waitUntil(t, "the first member's deadline to reject it", func() bool { return len(timedOut.verdict) == 1 })

	s := sched.framework.RunPermitPlugins(ctx, framework.NewCycleState(), second, "node")
	if diff := cmp.Diff(fwk.Wait.String(), s.Code().String()); diff != "" {
		t.Errorf("the second member's Permit, after the first timed out (-want, +got):\n%s", diff)
	}
	if v := <-timedOut.verdict; !v.IsRejected() {
		t.Errorf("the first member's verdict = %v, want rejected", v)
	}
	sched.framework.waitingPods.remove(first.UID)
	if wp := sched.framework.waitingPods.get(second.UID); wp != nil {
		wp.Reject("", "test over")
		sched.framework.waitingPods.remove(second.UID)
	}
}

// logged counts the lines logged with message for the pod in ctx's
// buffered log: "Scheduling decision" for its decisions, "Attempting to
// schedule pod" for its scheduling cycles.
func logged(ctx context.Context, message string, pod *v1.Pod) int {
	n := 0
	for _, e := range klog.FromContext(ctx).GetSink().(ktesting.Underlier).GetBuffer().Data() {
		for i := 0; e.Message == message && i+1 < len(e.WithKVList); i += 2 {
			if e.WithKVList[i] == "pod" && fmt.Sprint(e.WithKVList[i+1]) == pod.Namespace+"/"+pod.Name {
				n++
			}
		}
	}
	return n
}

// TestGatedPodWaitsForItsGate: a pod with a scheduling gate is parked by
// the queue's PreEnqueue plugin (SchedulingGates): no scheduling cycle, no
// decision, until its last gate is removed; then it is bound.
func TestGatedPodWaitsForItsGate(t *testing.T) {
	ctx, cancel := context.WithCancel(newBufferedTestContext(t))
	defer cancel()
	pod := makePod("gated").gate("example.com/wait").obj()
	client := fake.NewClientset(makeNode("node").obj(), pod)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	waitUntil(t, "the gated pod to be parked", func() bool { return queuedAs(sched, pod) == "Unschedulable, rejected by [SchedulingGates]" })
	if diff := cmp.Diff([2]int64{0, 0}, [2]int64{sched.queue.SchedulingCycle(), int64(logged(ctx, "Scheduling decision", pod))}); diff != "" {
		t.Errorf("scheduling cycles and decisions while the pod is gated (-want, +got):\n%s", diff)
	}
	ungated := pod.DeepCopy()
	ungated.Spec.SchedulingGates = nil
	ungated.ResourceVersion = "2"
	if _, err := client.CoreV1().Pods("default").Update(ctx, ungated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the pod to be bound once its gate is gone", func() bool { return cmp.Equal([]string{"default/gated->node"}, bindings(client)) })
	waitUntil(t, "its one decision", func() bool { return logged(ctx, "Scheduling decision", pod) == 1 })
	if diff := cmp.Diff(int64(1), sched.queue.SchedulingCycle()); diff != "" {
		t.Errorf("scheduling cycles (-want, +got):\n%s", diff)
	}
}

// TestGangComesBackWhenSiblingsFit: a gang of two on a node with room for
// one. The member that waits at Permit times out; its sibling takes the
// room and waits in turn, and activates the timed-out member, which fails
// for lack of room. Then a node with room for both arrives: the member
// rejected for room moves on that event, completes the gang, and both are
// bound, without the leftover flush (five minutes, which the fake clock
// never reaches).
func TestGangComesBackWhenSiblingsFit(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	clock := testingclock.NewFakeClock(time.Now())
	a, b := gangPod("a", "g", 2).req("1").obj(), gangPod("b", "g", 2).req("1").obj()
	client := fake.NewClientset(makeNode("small").cpu("1").obj(), a, b)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100), WithClock(clock), WithGangTimeout(10*time.Second))
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	oneWaitsOneLacksRoom := func() bool {
		waiting := sched.framework.waitingPods.list()
		if len(waiting) != 1 {
			return false
		}
		other := a
		if waiting[0].GetPod().UID == a.UID {
			other = b
		}
		return queuedAs(sched, other) == "Unschedulable, rejected by [NodeResourcesFit]"
	}
	waitUntil(t, "one member at Permit, the other without room", oneWaitsOneLacksRoom)
	first := sched.framework.waitingPods.list()[0].GetPod()
	clock.Step(10 * time.Second) // the first member's deadline
	waitUntil(t, "the sibling at Permit and the timed-out member activated, without room", func() bool {
		return oneWaitsOneLacksRoom() && sched.framework.waitingPods.list()[0].GetPod().UID != first.UID
	})
	if _, err := client.CoreV1().Nodes().Create(ctx, makeNode("big").cpu("2").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The node event moves the member without room to backoffQ, and Pop
	// takes it from there at once: the clock stands still, well before the
	// second deadline.
	waitUntil(t, "both members to be bound", func() bool { return len(bindings(client)) == 2 })
}

// TestShutdownIsQuiet: a pod waiting at Permit when the scheduler stops is
// let go quietly: no decision, no FailedScheduling status, no error.
func TestShutdownIsQuiet(t *testing.T) {
	ctx, cancel := context.WithCancel(newBufferedTestContext(t))
	pod := gangPod("waiting", "g", 2).obj()
	client := fake.NewClientset(makeNode("node").obj(), pod)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	errorsBefore := attempts(t, metrics.ErrorResult, DefaultSchedulerName)
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	waitUntil(t, "the pod to wait at Permit", func() bool { return len(sched.framework.waitingPods.list()) == 1 })
	cancel()
	<-done
	if diff := cmp.Diff(0, logged(ctx, "Scheduling decision", pod)); diff != "" {
		t.Errorf("decisions (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff("", podScheduledCondition(t, context.Background(), client, pod)); diff != "" {
		t.Errorf("PodScheduled condition (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(errorsBefore, attempts(t, metrics.ErrorResult, DefaultSchedulerName)); diff != "" {
		t.Errorf("error attempts (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(0, assumedPods(sched)); diff != "" {
		t.Errorf("assumed pods (-want, +got):\n%s", diff)
	}
}

// TestNumFeasibleNodesToFind is upstream's table of the same name, without
// the per-profile percentage (this chapter has one profile), and with the
// edges of the two minimums.
func TestNumFeasibleNodesToFind(t *testing.T) {
	fw, _ := newHintMap(t, testContext(t))
	tests := []struct {
		name        string
		percentage  int32
		numAllNodes int32
		want        int32
	}{
		{name: "not set, fewer than 100 nodes: every node", numAllNodes: 10, want: 10},
		{name: "set, fewer than 100 nodes: every node", percentage: 40, numAllNodes: 10, want: 10},
		{name: "not set, 99 nodes: every node", numAllNodes: 99, want: 99},
		{name: "not set, 100 nodes: 50% is 50, raised to 100", numAllNodes: 100, want: 100},
		{name: "not set, 150 nodes: 49% is 73, raised to 100", numAllNodes: 150, want: 100},
		{name: "not set, 1000 nodes: 42%", numAllNodes: 1000, want: 420},
		{name: "set to 40, 1000 nodes", percentage: 40, numAllNodes: 1000, want: 400},
		{name: "set to 100, 1000 nodes: every node", percentage: 100, numAllNodes: 1000, want: 1000},
		{name: "set to 1, 1000 nodes: raised to 100", percentage: 1, numAllNodes: 1000, want: 100},
		{name: "not set, 5000 nodes: 10%", numAllNodes: 5000, want: 500},
		{name: "not set, 6000 nodes: 2% is raised to 5%", numAllNodes: 6000, want: 300},
		{name: "set to 40, 6000 nodes", percentage: 40, numAllNodes: 6000, want: 2400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched := &Scheduler{framework: fw, percentageOfNodesToScore: tt.percentage}
			if diff := cmp.Diff(tt.want, sched.numFeasibleNodesToFind(tt.numAllNodes)); diff != "" {
				t.Errorf("numFeasibleNodesToFind (-want, +got):\n%s", diff)
			}
		})
	}
	t.Run("no Score plugin: the first feasible node", func(t *testing.T) {
		sched := &Scheduler{framework: &Framework{}}
		if diff := cmp.Diff(int32(1), sched.numFeasibleNodesToFind(1000)); diff != "" {
			t.Errorf("numFeasibleNodesToFind (-want, +got):\n%s", diff)
		}
	})
}

// searchScheduler returns a scheduler whose cache holds the nodes, and its
// snapshot's node list. No informer runs: the test is the only user.
func searchScheduler(t *testing.T, ctx context.Context, nodes []*v1.Node, opts ...Option) (*Scheduler, []fwk.NodeInfo) {
	t.Helper()
	sched, err := New(ctx, fake.NewClientset(), events.NewFakeRecorder(10), opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		sched.cache.AddNode(klog.FromContext(ctx), n)
	}
	if err := sched.cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot); err != nil {
		t.Fatal(err)
	}
	return sched, sched.nodeInfoSnapshot.List()
}

func numberedNodes(n int, build func(i int) *v1.Node) []*v1.Node {
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		nodes[i] = build(i)
	}
	return nodes
}

func names(nodes []fwk.NodeInfo) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Node().Name
	}
	return out
}

// TestFairEvaluationForNodes follows upstream's test of the same name: on
// 500 nodes that all fit, with a percentage that does not divide them,
// each cycle finds exactly numFeasibleNodesToFind nodes and the next one
// starts where it stopped, round and round. With one goroutine the nodes
// found are exactly the window after the start; with 16 they are as many,
// and the start moves the same.
func TestFairEvaluationForNodes(t *testing.T) {
	const numAllNodes = 500
	for _, parallelism := range []int{1, 16} {
		t.Run(fmt.Sprintf("parallelism %d", parallelism), func(t *testing.T) {
			ctx := testContext(t)
			sched, nodes := searchScheduler(t, ctx, numberedNodes(numAllNodes, func(i int) *v1.Node { return makeNode(fmt.Sprintf("n%03d", i)).obj() }),
				WithPercentageOfNodesToScore(30), WithParallelism(parallelism))
			nodesToFind := int(sched.numFeasibleNodesToFind(numAllNodes))
			if nodesToFind != 150 {
				t.Fatalf("numFeasibleNodesToFind = %d, want 150", nodesToFind)
			}
			seen := sets.New[string]()
			for i := range 2 * (numAllNodes/nodesToFind + 1) {
				start := sched.nextStartNodeIndex
				feasible, _, err := sched.findNodesThatFitPod(ctx, framework.NewCycleState(), makePod("p").obj(), nodes)
				if err != nil {
					t.Fatal(err)
				}
				if len(feasible) != nodesToFind {
					t.Fatalf("cycle %d: %d feasible nodes, want %d", i, len(feasible), nodesToFind)
				}
				if diff := cmp.Diff((i+1)*nodesToFind%numAllNodes, sched.nextStartNodeIndex); diff != "" {
					t.Fatalf("cycle %d: nextStartNodeIndex (-want, +got):\n%s", i, diff)
				}
				got := names(feasible)
				if len(sets.New(got...)) != len(got) {
					t.Fatalf("cycle %d: a node was found twice: %v", i, got)
				}
				seen.Insert(got...)
				if parallelism == 1 {
					var want []string
					for j := range nodesToFind {
						want = append(want, nodes[(start+j)%numAllNodes].Node().Name)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("cycle %d: nodes found (-want, +got):\n%s", i, diff)
					}
				}
			}
			if parallelism == 1 && seen.Len() != numAllNodes {
				t.Errorf("%d of %d nodes were ever looked at", seen.Len(), numAllNodes)
			}
		})
	}
}

// TestFindNodesThatPassFiltersInParallel runs the Filter loop on 1,000
// nodes, a third of them too small, on 16 goroutines (run it with -race).
// Every node found fits, none twice; the diagnosis has exactly the nodes
// looked at and rejected; and with 100% every node is looked at.
func TestFindNodesThatPassFiltersInParallel(t *testing.T) {
	const numAllNodes = 1000
	build := func(i int) *v1.Node {
		n := makeNode(fmt.Sprintf("n%04d", i))
		if i%3 == 0 {
			n.cpu("500m")
		}
		return n.obj()
	}
	small := func(name string) bool {
		var i int
		fmt.Sscanf(name, "n%04d", &i)
		return i%3 == 0
	}
	tests := []struct {
		name         string
		percentage   int32
		wantFeasible int
		wantRejected int // only when every node is looked at
	}{
		{name: "adaptive: 42% of 1,000", wantFeasible: 420},
		{name: "every node", percentage: 100, wantFeasible: 666, wantRejected: 334},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			sched, nodes := searchScheduler(t, ctx, numberedNodes(numAllNodes, build), WithPercentageOfNodesToScore(tt.percentage))
			for cycle := range 5 {
				feasible, diagnosis, err := sched.findNodesThatFitPod(ctx, framework.NewCycleState(), makePod("p").req("1").obj(), nodes)
				if err != nil {
					t.Fatal(err)
				}
				got := names(feasible)
				if len(got) != tt.wantFeasible || len(sets.New(got...)) != len(got) {
					t.Fatalf("cycle %d: %d feasible nodes (%d distinct), want %d", cycle, len(got), len(sets.New(got...)), tt.wantFeasible)
				}
				if i := slices.IndexFunc(got, small); i >= 0 {
					t.Fatalf("cycle %d: %s is too small, but was found feasible", cycle, got[i])
				}
				rejected := 0
				diagnosis.NodeToStatus.ForEachExplicitNode(func(node string, s *fwk.Status) {
					rejected++
					if !small(node) || !slices.Contains(s.Reasons(), "Insufficient cpu") {
						t.Errorf("cycle %d: %s rejected with %v", cycle, node, s.Reasons())
					}
				})
				if tt.wantRejected != 0 && rejected != tt.wantRejected {
					t.Errorf("cycle %d: %d nodes rejected, want %d", cycle, rejected, tt.wantRejected)
				}
				if diff := cmp.Diff([]string{"NodeResourcesFit"}, listOrNil(diagnosis.UnschedulablePlugins)); diff != "" {
					t.Errorf("cycle %d: unschedulable plugins (-want, +got):\n%s", cycle, diff)
				}
			}
		})
	}
}

// TestRunScorePluginsInParallel scores 300 nodes of different loads on 16
// goroutines and on one: the scores are the same, node by node.
func TestRunScorePluginsInParallel(t *testing.T) {
	var objs []runtime.Object
	for i := range 300 {
		name := fmt.Sprintf("n%03d", i)
		objs = append(objs, makeNode(name).label("zone", fmt.Sprint(i%3)).obj())
		if i%4 != 0 {
			objs = append(objs, makePod(fmt.Sprintf("busy-%d", i)).req(fmt.Sprintf("%dm", 100*(i%30))).node(name).obj())
		}
	}
	pod := makePod("p").req("500m").obj()
	scores := map[int][]fwk.NodePluginScores{}
	for _, parallelism := range []int{1, 16} {
		ctx := testContext(t)
		sched := newTestScheduler(t, ctx, fake.NewClientset(objs...), events.NewFakeRecorder(10), WithParallelism(parallelism))
		nodes := cachedNodes(t, sched)
		state := framework.NewCycleState()
		if _, s, _ := sched.framework.RunPreFilterPlugins(ctx, state, pod, nodes); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		got, err := sched.prioritizeNodes(ctx, state, pod, nodes)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b fwk.NodePluginScores) int { return strings.Compare(a.Name, b.Name) })
		scores[parallelism] = got
	}
	if diff := cmp.Diff(scores[1], scores[16]); diff != "" {
		t.Errorf("scores on 16 goroutines differ from one's (-1, +16):\n%s", diff)
	}
	if distinct := sets.New[int64](); true {
		for _, s := range scores[1] {
			distinct.Insert(s.TotalScore)
		}
		if distinct.Len() < 10 {
			t.Errorf("only %d distinct totals: the loads do not tell the nodes apart", distinct.Len())
		}
	}
}

// TestPowerOfTwoChoices: with the experiment on, a cycle stops after d
// feasible nodes, looked at in a random order, so the samples differ from
// cycle to cycle and cover the cluster; with fewer feasible nodes than d,
// it finds them all.
func TestPowerOfTwoChoices(t *testing.T) {
	const numAllNodes = 200
	tests := []struct {
		name         string
		d            int
		fits         func(i int) bool
		wantFeasible int
		wantCoverage int // nodes sampled at least once in 100 cycles, at least
	}{
		{name: "d=2, every node fits", d: 2, fits: func(int) bool { return true }, wantFeasible: 2, wantCoverage: 100},
		{name: "d=3, every node fits", d: 3, fits: func(int) bool { return true }, wantFeasible: 3, wantCoverage: 120},
		{name: "d=2, one node fits", d: 2, fits: func(i int) bool { return i == 7 }, wantFeasible: 1, wantCoverage: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			sched, nodes := searchScheduler(t, ctx, numberedNodes(numAllNodes, func(i int) *v1.Node {
				n := makeNode(fmt.Sprintf("n%03d", i))
				if !tt.fits(i) {
					n.cpu("100m")
				}
				return n.obj()
			}), WithPowerOfChoices(tt.d), WithRand(rand.New(rand.NewPCG(1, 2))))
			seen := sets.New[string]()
			for cycle := range 100 {
				feasible, _, err := sched.findNodesThatFitPod(ctx, framework.NewCycleState(), makePod("p").req("1").obj(), nodes)
				if err != nil {
					t.Fatal(err)
				}
				got := names(feasible)
				if len(got) != tt.wantFeasible || len(sets.New(got...)) != len(got) {
					t.Fatalf("cycle %d: feasible nodes %v, want %d distinct", cycle, got, tt.wantFeasible)
				}
				seen.Insert(got...)
			}
			if seen.Len() < tt.wantCoverage {
				t.Errorf("%d nodes sampled in 100 cycles, want at least %d", seen.Len(), tt.wantCoverage)
			}
		})
	}
}

// TestScoringStrategy: NodeResourcesFit's default, LeastAllocated, sends a
// pod to the emptier node; MostAllocated, which make quality uses to pack
// pods, sends it to the fuller one.
func TestScoringStrategy(t *testing.T) {
	busy := makePod("busy").req("3").node("loaded").obj()
	tests := []struct {
		strategy config.ScoringStrategyType
		want     string
	}{
		{strategy: "", want: "empty"},
		{strategy: config.LeastAllocated, want: "empty"},
		{strategy: config.MostAllocated, want: "loaded"},
	}
	for _, tt := range tests {
		t.Run(string(tt.strategy), func(t *testing.T) {
			ctx := testContext(t)
			sched := newTestScheduler(t, ctx, fake.NewClientset(makeNode("loaded").obj(), makeNode("empty").obj(), busy), events.NewFakeRecorder(10), WithScoringStrategy(tt.strategy))
			result, err := sched.schedulePod(ctx, framework.NewCycleState(), makePod("p").req("500m").obj())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, result.SuggestedHost); diff != "" {
				t.Errorf("node (-want, +got):\n%s", diff)
			}
		})
	}
}
