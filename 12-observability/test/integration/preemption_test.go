package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"

	"minisched/12-observability/scheduler"
)

// TestPreemption: a pod of high priority that fits on no node evicts
// exactly the victims upstream would choose, which get the
// DisruptionTarget condition, is nominated to their node, and binds there
// once they are gone. A pod of lower priority created in between, while
// the room is free but the preemptor still backs off, is tried and must
// not take that room. It runs with asynchronous preemption (upstream's
// default) and without.
//
// Two nodes of 2 CPUs, full of 1-CPU pods placed beforehand:
//   - node-a: low-10 (priority 10) and low-20 (priority 20);
//   - node-b: mid-100 (priority 100) and low-15 (priority 15).
//
// The preemptor (priority 1000, 1 CPU) needs one pod evicted. On node-a the
// dry run reprieves low-20 and evicts low-10; on node-b it reprieves
// mid-100 and evicts low-15. pickOneNodeForPreemption's second criterion,
// the lowest priority of the most important victim, picks node-a (10 <
// 15).
//
// No kubelet runs: the victim stays terminating (its grace period) until
// the test deletes it for good, as a kubelet would once it stopped.
func TestPreemption(t *testing.T) {
	for _, async := range []bool{true, false} {
		name := "synchronous"
		if async {
			name = "asynchronous"
		}
		t.Run(name, func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.SchedulerAsyncPreemption, async)
			testPreemption(t)
		})
	}
}

func testPreemption(t *testing.T) {
	ctx, logs := newBufferedContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)

	const ns = "preemption"
	createNamespace(ctx, t, admin, ns)
	for _, pc := range []struct {
		name  string
		value int32
	}{{"p10", 10}, {"p15", 15}, {"p20", 20}, {"p100", 100}, {"p1000", 1000}} {
		if _, err := admin.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc.name}, Value: pc.value}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"node-a", "node-b"} {
		n := withCPU(node(name), "2")
		if _, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The pods already running, placed without a scheduler.
	running := []struct{ name, class, node string }{
		{"low-10", "p10", "node-a"},
		{"low-20", "p20", "node-a"},
		{"mid-100", "p100", "node-b"},
		{"low-15", "p15", "node-b"},
	}
	for _, r := range running {
		p := prioritized(requesting(pod(ns, r.name, scheduler.DefaultSchedulerName), "1"), r.class)
		p.Spec.NodeName = r.node
		createPod(ctx, t, admin, p)
	}

	// The preemptor backs off 4 s after its failure, so that a pod created
	// once the room is free, a few milliseconds later, is tried first.
	runScheduler(ctx, t, cfg,
		scheduler.WithPodInitialBackoffDuration(4*time.Second), scheduler.WithPodMaxBackoffDuration(4*time.Second))
	createPod(ctx, t, admin, prioritized(requesting(pod(ns, "preemptor", scheduler.DefaultSchedulerName), "1"), "p1000"))

	waitFor(ctx, t, "the preemptor to be nominated", func() (bool, error) {
		return getPod(ctx, t, admin, ns, "preemptor").Status.NominatedNodeName != "", nil
	})
	if got := getPod(ctx, t, admin, ns, "preemptor").Status.NominatedNodeName; got != "node-a" {
		t.Fatalf("nominated node = %q, want node-a", got)
	}
	waitFor(ctx, t, "the victim to be terminating", func() (bool, error) {
		return getPod(ctx, t, admin, ns, "low-10").DeletionTimestamp != nil, nil
	})
	victim := getPod(ctx, t, admin, ns, "low-10")
	var disruption string
	for _, c := range victim.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			disruption = string(c.Status) + " " + c.Reason + ": " + c.Message
		}
	}
	if diff := cmp.Diff("True PreemptionByScheduler: mini-scheduler: preempting to accommodate a higher priority pod", disruption); diff != "" {
		t.Errorf("the victim's DisruptionTarget condition (-want, +got):\n%s", diff)
	}
	for _, r := range running[1:] {
		if p := getPod(ctx, t, admin, ns, r.name); p.DeletionTimestamp != nil {
			t.Errorf("pod %s is being deleted; only low-10 should be", r.name)
		}
	}

	// The kubelet's part: the victim stopped.
	zero := int64(0)
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "low-10", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	// A pod of lower priority than the preemptor, and no higher than any
	// running pod (it can preempt none), arrives while node-a has room.
	createPod(ctx, t, admin, prioritized(requesting(pod(ns, "latecomer", scheduler.DefaultSchedulerName), "1"), "p10"))

	waitFor(ctx, t, "the preemptor to be bound", func() (bool, error) {
		return getPod(ctx, t, admin, ns, "preemptor").Spec.NodeName != "", nil
	})
	if got := getPod(ctx, t, admin, ns, "preemptor").Spec.NodeName; got != "node-a" {
		t.Errorf("preemptor bound to %q, want its nominated node-a", got)
	}
	// The latecomer was tried while node-a had room, before the preemptor
	// was: the nomination alone kept it off. The binding goroutine logs the
	// preemptor's decision after its Binding returns: wait for the line.
	waitFor(ctx, t, "the preemptor's scheduling decision", func() (bool, error) {
		return scheduledDecision(logs, ns+"/preemptor"), nil
	})
	var order []string
	for _, kv := range logEntries(logs, "Scheduling decision") {
		if kv["pod"] == ns+"/latecomer" || (kv["pod"] == ns+"/preemptor" && kv["result"] == "scheduled") {
			order = append(order, kv["pod"]+" "+kv["result"])
		}
	}
	if len(order) < 2 || order[0] != ns+"/latecomer unschedulable" || !slices.Contains(order[1:], ns+"/preemptor scheduled") {
		t.Errorf("decisions = %v, want the latecomer found unschedulable before the preemptor was scheduled", order)
	}
	if got := getPod(ctx, t, admin, ns, "latecomer").Spec.NodeName; got != "" {
		t.Errorf("latecomer bound to %q; it must not take the preemptor's room", got)
	}
	for _, r := range running[1:] {
		if p := getPod(ctx, t, admin, ns, r.name); p.DeletionTimestamp != nil {
			t.Errorf("pod %s is being deleted; only low-10 should be", r.name)
		}
	}
}

// prioritized sets the pod's priority class.
func prioritized(p *v1.Pod, class string) *v1.Pod {
	p.Spec.PriorityClassName = class
	return p
}
