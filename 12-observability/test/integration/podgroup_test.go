package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"

	"minisched/12-observability/scheduler"
)

// gang returns a PodGroup with a gang policy of minCount.
func gang(namespace, name string, minCount int32) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount},
		}},
	}
}

// member returns pod i of group g, requesting cpu.
func member(namespace, g string, i int, cpu string) *v1.Pod {
	p := requesting(pod(namespace, podName(g, i), scheduler.DefaultSchedulerName), cpu)
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
	return p
}

// bound returns the names of the group's pods that have a node.
func bound(ctx context.Context, t *testing.T, client kubernetes.Interface, namespace, g string) []string {
	t.Helper()
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.Spec.SchedulingGroup != nil && *p.Spec.SchedulingGroup.PodGroupName == g && p.Spec.NodeName != "" {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// groupCycles counts the pod-group cycles the scheduler started for g.
func groupCycles(logs ktesting.Underlier, namespace, g string) int {
	n := 0
	for _, kv := range logEntries(logs, "Attempting to schedule pod group") {
		if kv["podGroup"] == namespace+"/"+g {
			n++
		}
	}
	return n
}

// scheduledPerCycle lists, for each pod-group cycle of g that placed
// members, how many it placed.
func scheduledPerCycle(logs ktesting.Underlier, namespace, g string) []string {
	var out []string
	for _, kv := range logEntries(logs, "Successfully scheduled a pod group") {
		if kv["podGroup"] == namespace+"/"+g {
			out = append(out, kv["scheduledPods"])
		}
	}
	return out
}

// initiallyScheduled returns the PodGroup's PodGroupInitiallyScheduled
// condition as "Status Reason", or "".
func initiallyScheduled(ctx context.Context, t *testing.T, client kubernetes.Interface, namespace, g string) string {
	t.Helper()
	pg, err := client.SchedulingV1beta1().PodGroups(namespace).Get(ctx, g, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := apimeta.FindStatusCondition(pg.Status.Conditions, "PodGroupInitiallyScheduled")
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s %s", c.Status, c.Reason)
}

// TestPodGroups runs gangs of the Workload API against a real apiserver:
//   - a gang of 4 with room for 3 binds none, and its PodGroup says why;
//   - once a node is added, all 4 are bound, in one pod-group cycle;
//   - two gangs that compete for room for one of them: one is bound whole,
//     the other not at all, never half;
//   - a gang whose members are not all created waits in the queue without a
//     single scheduling cycle, and is bound once the last one comes.
func TestPodGroups(t *testing.T) {
	ctx, logs := newBufferedContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)
	const ns = "podgroups"
	createNamespace(ctx, t, admin, ns)
	createGroup := func(g string, minCount int32, members int, cpu string) {
		t.Helper()
		if _, err := admin.SchedulingV1beta1().PodGroups(ns).Create(ctx, gang(ns, g, minCount), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range members {
			createPod(ctx, t, admin, member(ns, g, i, cpu))
		}
	}
	// Three nodes of 1 CPU: room for three members of 1 CPU.
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, withCPU(node(n), "1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counter := runScheduler(ctx, t, cfg)

	createGroup("four", 4, 4, "1")
	waitFor(ctx, t, "the gang of four to be found unschedulable", func() (bool, error) {
		return initiallyScheduled(ctx, t, admin, ns, "four") == "False Unschedulable", nil
	})
	if diff := cmp.Diff([]string(nil), bound(ctx, t, admin, ns, "four")); diff != "" {
		t.Fatalf("members bound with room for three of four (-want, +got):\n%s", diff)
	}
	for i := range 4 {
		if codes := counter.get()[ns+"/"+podName("four", i)]; len(codes) != 0 {
			t.Errorf("%s got Binding requests %v with room for three of four", podName("four", i), codes)
		}
	}
	for i := range 4 {
		p := getPod(ctx, t, admin, ns, podName("four", i))
		c := podScheduled(p)
		if c == nil || c.Status != v1.ConditionFalse || c.Reason != v1.PodReasonUnschedulable {
			t.Errorf("%s: PodScheduled %v, want False Unschedulable", p.Name, c)
		}
	}

	if _, err := admin.CoreV1().Nodes().Create(ctx, withCPU(node("node-d"), "1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the gang of four to be bound once a node is added", func() (bool, error) {
		return len(bound(ctx, t, admin, ns, "four")) == 4, nil
	})
	// One cycle placed all four: the group is retried after each backoff
	// until then, and every cycle places all or none.
	if diff := cmp.Diff([]string{"4"}, scheduledPerCycle(logs, ns, "four")); diff != "" {
		t.Errorf("pods placed by each pod-group cycle that placed any (-want, +got):\n%s", diff)
	}
	waitFor(ctx, t, "the PodGroup's condition", func() (bool, error) {
		return initiallyScheduled(ctx, t, admin, ns, "four") == "True Scheduled", nil
	})

	// Two gangs of two, of 1 CPU each, and a node of 2 CPU: room for one.
	// (The four nodes of 1 CPU are full.)
	if _, err := admin.CoreV1().Nodes().Create(ctx, withCPU(node("node-e"), "2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Both PodGroups first, then their members in turn, so that both
	// gangs are complete in the queue at about the same time.
	for _, g := range []string{"red", "blue"} {
		if _, err := admin.SchedulingV1beta1().PodGroups(ns).Create(ctx, gang(ns, g, 2), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		createPod(ctx, t, admin, member(ns, "red", i, "1"))
		createPod(ctx, t, admin, member(ns, "blue", i, "1"))
	}
	waitFor(ctx, t, "one of the competing gangs to be bound", func() (bool, error) {
		return len(bound(ctx, t, admin, ns, "red"))+len(bound(ctx, t, admin, ns, "blue")) == 2, nil
	})
	waitFor(ctx, t, "the other gang to be found unschedulable", func() (bool, error) {
		return initiallyScheduled(ctx, t, admin, ns, "red") == "False Unschedulable" || initiallyScheduled(ctx, t, admin, ns, "blue") == "False Unschedulable", nil
	})
	red, blue := len(bound(ctx, t, admin, ns, "red")), len(bound(ctx, t, admin, ns, "blue"))
	if !(red == 2 && blue == 0 || red == 0 && blue == 2) {
		t.Errorf("competing gangs: red has %d of 2 bound, blue %d of 2; want one whole and the other none", red, blue)
	}
	loser := "blue"
	if red == 0 {
		loser = "red"
	}
	for i := range 2 {
		if codes := counter.get()[ns+"/"+podName(loser, i)]; len(codes) != 0 {
			t.Errorf("%s of the gang that lost got Binding requests %v", podName(loser, i), codes)
		}
	}

	// A gang of three whose third member comes later: no cycle until then.
	if _, err := admin.CoreV1().Nodes().Create(ctx, withCPU(node("node-f"), "3"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SchedulingV1beta1().PodGroups(ns).Create(ctx, gang(ns, "late", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(ctx, t, admin, member(ns, "late", 0, "1"))
	createPod(ctx, t, admin, member(ns, "late", 1, "1"))
	waitFor(ctx, t, "the two members to be parked by GangScheduling", func() (bool, error) {
		parked := 0
		for _, kv := range logEntries(logs, "Status after running PreEnqueue plugin") {
			if kv["plugin"] == "GangScheduling" && (kv["pod"] == ns+"/late-00" || kv["pod"] == ns+"/late-01") {
				parked++
			}
		}
		return parked >= 2, nil
	})
	if diff := cmp.Diff([3]int{0, 0, 0}, [3]int{groupCycles(logs, ns, "late"), decisions(logs, ns+"/late-00"), decisions(logs, ns+"/late-01")}); diff != "" {
		t.Errorf("pod-group cycles of the incomplete gang, and its members' decisions (-want, +got):\n%s", diff)
	}
	createPod(ctx, t, admin, member(ns, "late", 2, "1"))
	waitFor(ctx, t, "the completed gang to be bound", func() (bool, error) {
		return len(bound(ctx, t, admin, ns, "late")) == 3, nil
	})
	if diff := cmp.Diff(1, groupCycles(logs, ns, "late")); diff != "" {
		t.Errorf("pod-group cycles of the completed gang (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"3"}, scheduledPerCycle(logs, ns, "late")); diff != "" {
		t.Errorf("pods placed by the gang's cycle (-want, +got):\n%s", diff)
	}
	for p, codes := range counter.get() {
		if !cmp.Equal([]int{201}, codes) {
			t.Errorf("pod %s: Binding status codes %v, want one 201", p, codes)
		}
	}
}

// podScheduled returns the pod's PodScheduled condition, or nil.
func podScheduled(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
