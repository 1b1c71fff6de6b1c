package scheduler

import (
	"bytes"
	"context"
	"runtime/trace"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/12-observability/internal/tracetest"
)

// readTasks reads the tasks of an execution trace.
func readTasks(t *testing.T, data []byte) map[uint64]*tracetest.Task {
	t.Helper()
	tasks, err := tracetest.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestScheduleOneTrace records an execution trace while a pod is
// scheduled: the attempt is one task, named for its pod, whose regions
// cover the scheduling cycle, each extension point and each plugin, the
// Filter and Score workers and the binding cycle, on several goroutines;
// its last log is the decision. Without a trace, the same attempt records
// nothing (TestRegionsCostNothingWhenOff).
func TestScheduleOneTrace(t *testing.T) {
	ctx := newBufferedTestContext(t)
	pod := makePod("p").obj()
	client := fake.NewClientset([]runtime.Object{pod, makeNode("node-a").obj(), makeNode("node-b").obj()}...)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(10))
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	sched.scheduleOnePod(ctx, popped(t, sched, pod))
	sched.bindings.Wait()
	trace.Stop()
	attempts := tracetest.OfType(readTasks(t, buf.Bytes()), "schedulingAttempt")
	if len(attempts) != 1 {
		t.Fatalf("%d schedulingAttempt tasks, want 1", len(attempts))
	}
	a := attempts[0]
	if diff := cmp.Diff([]string{"pod: default/p", "decision: scheduled node=" + boundNode(t, client)}, a.Logs); diff != "" {
		t.Errorf("the task's logs (-want, +got):\n%s", diff)
	}
	for _, want := range []string{"schedulingCycle", "PreFilter", "NodeResourcesFit", "Filter", "PreScore", "Score", "TaintToleration", "Reserve", "Permit", "bindingCycle", "PreBind", "Bind", "DefaultBinder", "PostBind"} {
		if !slices.Contains(a.Regions, want) {
			t.Errorf("no %s region in the attempt; regions: %v", want, a.Regions)
		}
	}
	// The scheduling loop, the binding goroutine, and at least one
	// worker of the Filter and Score loops.
	if len(a.Goroutines) < 3 {
		t.Errorf("the attempt's regions ran on %d goroutines, want at least 3", len(a.Goroutines))
	}
}

// boundNode is the node the fake clientset's one Binding named.
func boundNode(t *testing.T, client *fake.Clientset) string {
	t.Helper()
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "binding" {
			if b, ok := a.(interface{ GetObject() runtime.Object }); ok {
				if binding, ok := b.GetObject().(*v1.Binding); ok {
					return binding.Target.Name
				}
			}
		}
	}
	t.Fatal("no Binding was created")
	return ""
}

// noopFilter is a Filter plugin that allocates nothing: what a run
// of it allocates is the framework's.
type noopFilter struct{}

func (noopFilter) Name() string { return "Nothing" }
func (noopFilter) Filter(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeInfo) *fwk.Status {
	return nil
}

// TestRegionsCostNothingWhenOff runs a Filter plugin the way the Filter
// loop does, once per node: with no trace being recorded it allocates
// nothing (no region, no task); while a trace is recorded, each run
// allocates its region. So the regions cost nothing that a benchmark
// would have to find when the flag is off.
func TestRegionsCostNothingWhenOff(t *testing.T) {
	ctx := testContext(t)
	sched := newTestScheduler(t, ctx, fake.NewClientset(makeNode("node-a").obj()), events.NewFakeRecorder(10))
	nodeInfo := cachedNodes(t, sched)[0]
	state := framework.NewCycleState()
	pod := makePod("p").obj()
	run := func() { sched.framework.runFilterPlugin(ctx, noopFilter{}, state, pod, nodeInfo) }
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("with no trace, a plugin run allocates %v times, want 0", n)
	}
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	defer trace.Stop()
	if n := testing.AllocsPerRun(100, run); n == 0 {
		t.Errorf("while tracing, a plugin run allocates nothing: no region was recorded")
	}
}

// TestScheduleOnePodGroupTrace records a pod group's attempt: one
// podGroupAttempt task, with a podGroupCycle region, and under it one
// schedulingAttempt task per member, each with its algorithm's region and,
// once bound, its binding cycle on a goroutine of its own.
func TestScheduleOnePodGroupTrace(t *testing.T) {
	ctx := testContext(t)
	objs := []runtime.Object{makePodGroup("g", 2), makeNode("node-a").obj(), makeNode("node-b").obj()}
	for _, name := range []string{"m-0", "m-1"} {
		objs = append(objs, makePod(name).group("g").obj())
	}
	client := fake.NewClientset(objs...)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	entity, err := sched.queue.Pop(klog.FromContext(ctx))
	if err != nil {
		trace.Stop()
		t.Fatal(err)
	}
	pgInfo, ok := entity.(*framework.QueuedPodGroupInfo)
	if !ok {
		trace.Stop()
		t.Fatalf("popped %T, want the pod group", entity)
	}
	sched.scheduleOnePodGroup(ctx, pgInfo)
	sched.bindings.Wait()
	trace.Stop()
	tasks := readTasks(t, buf.Bytes())
	groups, members := tracetest.OfType(tasks, "podGroupAttempt"), tracetest.OfType(tasks, "schedulingAttempt")
	if len(groups) != 1 || !slices.Contains(groups[0].Regions, "podGroupCycle") || !slices.Contains(groups[0].Logs, "podGroup: default/g") {
		t.Fatalf("pod group tasks %+v, want one with a podGroupCycle region and its name", groups)
	}
	var pods []string
	for _, m := range members {
		pods = append(pods, m.Logs[0])
		for _, want := range []string{"podGroupPodSchedulingAlgorithm", "bindingCycle", "Bind"} {
			if !slices.Contains(m.Regions, want) {
				t.Errorf("member %s has no %s region; regions: %v", m.Logs[0], want, m.Regions)
			}
		}
	}
	slices.Sort(pods)
	if diff := cmp.Diff([]string{"pod: default/m-0", "pod: default/m-1"}, pods); diff != "" {
		t.Errorf("member tasks (-want, +got):\n%s", diff)
	}
}
