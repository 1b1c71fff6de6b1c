package integration

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"

	"minisched/02-filter/scheduler"
)

// TestSchedulerBindsOwnPodsOnly: 3 nodes, 20 pods for mini-scheduler and 2
// for another scheduler. Each of the 20 is bound exactly once, to one of the
// 3 nodes, and the apiserver accepts every Binding; the 2 are never touched.
func TestSchedulerBindsOwnPodsOnly(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)

	const ns = "binds-own-pods"
	createNamespace(ctx, t, admin, ns)
	nodes := []string{"node-a", "node-b", "node-c"}
	createNodes(ctx, t, admin, nodes...)
	for i := range 2 {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod(ns, podName("other", i), "other-scheduler"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	counter := runScheduler(ctx, t, cfg, scheduler.WithRand(rand.New(rand.NewPCG(1, 1))))

	for i := range 20 {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod(ns, podName("mine", i), scheduler.DefaultSchedulerName), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var got map[string]string
	waitFor(ctx, t, "all 20 pods to be bound", func() (bool, error) {
		var err error
		got, err = placements(ctx, admin, ns)
		if err != nil {
			return false, err
		}
		for i := range 20 {
			if got[podName("mine", i)] == "" {
				return false, nil
			}
		}
		return true, nil
	})

	isNode := map[string]bool{}
	for _, n := range nodes {
		isNode[n] = true
	}
	wantBindings := map[string][]int{}
	for i := range 20 {
		name := podName("mine", i)
		wantBindings[ns+"/"+name] = []int{201}
		if !isNode[got[name]] {
			t.Errorf("pod %s is bound to %q, which is not one of %v", name, got[name], nodes)
		}
	}
	for i := range 2 {
		if n := got[podName("other", i)]; n != "" {
			t.Errorf("pod %s of another scheduler was bound to %s", podName("other", i), n)
		}
	}
	counter.waitCounted(ctx, t, len(wantBindings))
	if diff := cmp.Diff(wantBindings, counter.get()); diff != "" {
		t.Errorf("Binding requests and their status codes, per pod (-want, +got):\n%s", diff)
	}
}

// TestFilters: four nodes that each turn some pods away (a taint, a cordon,
// a label, little cpu). Every pod that fits lands only where it fits, each
// with one accepted Binding; the pods that fit nowhere carry upstream's
// aggregated reason in their PodScheduled condition.
func TestFilters(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)

	const ns = "filters"
	createNamespace(ctx, t, admin, ns)
	nodes := []*v1.Node{
		withLabel(withTaint(node("tainted"), "dedicated", "db"), "disk", "hdd"),
		cordoned(node("cordoned")),
		withLabel(node("ssd"), "disk", "ssd"),
		withCPU(node("small"), "1"),
	}
	for _, n := range nodes {
		if _, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	db := tolerating(pod(ns, "db", scheduler.DefaultSchedulerName), "dedicated", "db")
	db.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"hdd"}}}}},
	}}}
	pods := []*v1.Pod{
		withSelector(requesting(pod(ns, "needs-ssd", scheduler.DefaultSchedulerName), "100m"), "disk", "ssd"),
		db,
		requesting(pod(ns, "big", scheduler.DefaultSchedulerName), "3"),
		requesting(pod(ns, "too-big", scheduler.DefaultSchedulerName), "8"),
		withSelector(pod(ns, "wants-nvme", scheduler.DefaultSchedulerName), "disk", "nvme"),
	}
	for _, p := range pods {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	counter := runScheduler(ctx, t, cfg)

	want := map[string]string{
		"needs-ssd":  "ssd",
		"db":         "tainted",
		"big":        "ssd",
		"too-big":    "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 Insufficient cpu.",
		"wants-nvme": "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector.",
	}
	var got map[string]string
	waitFor(ctx, t, "every pod bound or marked unschedulable", func() (bool, error) {
		list, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		got = map[string]string{}
		for _, p := range list.Items {
			got[p.Name] = p.Spec.NodeName
			for _, c := range p.Status.Conditions {
				if p.Spec.NodeName == "" && c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
					got[p.Name] = c.Message
				}
			}
		}
		return cmp.Equal(want, got), nil
	})
	wantBindings := map[string][]int{ns + "/needs-ssd": {201}, ns + "/db": {201}, ns + "/big": {201}}
	counter.waitCounted(ctx, t, len(wantBindings))
	if diff := cmp.Diff(wantBindings, counter.get()); diff != "" {
		t.Errorf("Binding requests and their status codes, per pod (-want, +got):\n%s", diff)
	}
}
