package integration

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
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
// once they are gone. A pod of lower priority created in between, when
// half of that room is free, is tried and must not take it. It runs with
// asynchronous preemption (upstream's default) and without.
//
// Two nodes of 2 CPUs, full of 1-CPU pods placed beforehand:
//   - node-a: low-10 (priority 10) and low-20 (priority 20);
//   - node-b: mid-100 (priority 100) and low-15 (priority 15).
//
// The preemptor (priority 1000, 2 CPUs) needs a whole node: on either, the
// dry run can reprieve no pod, and both are victims.
// pickOneNodeForPreemption's second criterion, the lowest priority of the
// most important victim, picks node-a (20 < 100).
//
// No kubelet runs: the victims stay terminating (their grace period) until
// the test deletes them for good, as a kubelet would once they stopped.
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
		createPriorityClass(ctx, t, admin, ns, pc.name, pc.value)
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

	runScheduler(ctx, t, cfg)
	createPod(ctx, t, admin, prioritized(requesting(pod(ns, "preemptor", scheduler.DefaultSchedulerName), "2"), "p1000"))

	waitFor(ctx, t, "the preemptor to be nominated", func() (bool, error) {
		return getPod(ctx, t, admin, ns, "preemptor").Status.NominatedNodeName != "", nil
	})
	if got := getPod(ctx, t, admin, ns, "preemptor").Status.NominatedNodeName; got != "node-a" {
		t.Fatalf("nominated node = %q, want node-a", got)
	}
	for _, name := range []string{"low-10", "low-20"} {
		waitFor(ctx, t, name+" to be terminating", func() (bool, error) {
			return getPod(ctx, t, admin, ns, name).DeletionTimestamp != nil, nil
		})
		var disruption string
		for _, c := range getPod(ctx, t, admin, ns, name).Status.Conditions {
			if c.Type == v1.DisruptionTarget {
				disruption = string(c.Status) + " " + c.Reason + ": " + c.Message
			}
		}
		if diff := cmp.Diff("True PreemptionByScheduler: mini-scheduler: preempting to accommodate a higher priority pod", disruption); diff != "" {
			t.Errorf("%s's DisruptionTarget condition (-want, +got):\n%s", name, diff)
		}
	}
	for _, r := range running[2:] {
		if p := getPod(ctx, t, admin, ns, r.name); p.DeletionTimestamp != nil {
			t.Errorf("pod %s is being deleted; only node-a's should be", r.name)
		}
	}

	// The kubelet's part, for one victim: low-10 stopped, and half the room
	// is free. The preemptor is tried again and fails (1 CPU is not enough,
	// and low-20, terminating on its nominated node, makes it not eligible
	// to preempt more); it keeps its nomination.
	zero := int64(0)
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "low-10", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	// A pod of lower priority than the preemptor, and no higher than any
	// running pod (it can preempt none), arrives while node-a has 1 CPU free.
	createPod(ctx, t, admin, prioritized(requesting(pod(ns, "latecomer", scheduler.DefaultSchedulerName), "1"), "p10"))
	waitUnschedulable(ctx, t, admin, ns, "latecomer", "")
	// The kubelet's part, for the other victim.
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "low-20", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}

	waitFor(ctx, t, "the preemptor to be bound", func() (bool, error) {
		return getPod(ctx, t, admin, ns, "preemptor").Spec.NodeName != "", nil
	})
	if got := getPod(ctx, t, admin, ns, "preemptor").Spec.NodeName; got != "node-a" {
		t.Errorf("preemptor bound to %q, want its nominated node-a", got)
	}
	// The latecomer was tried while node-a had room for it, before the
	// preemptor was bound: the nomination alone kept it off. The binding
	// goroutine logs the preemptor's decision after its Binding returns:
	// wait for the line.
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
	for _, r := range running[2:] {
		if p := getPod(ctx, t, admin, ns, r.name); p.DeletionTimestamp != nil {
			t.Errorf("pod %s is being deleted; only node-a's should be", r.name)
		}
	}
}

// prioritized sets the pod's priority class.
func prioritized(p *v1.Pod, class string) *v1.Pod {
	p.Spec.PriorityClassName = class
	return p
}
