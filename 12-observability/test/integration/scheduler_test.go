package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"minisched/12-observability/scheduler"
	"minisched/12-observability/scheduler/framework/plugins/nodecost"
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
		"too-big":    "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 Insufficient cpu. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
		"wants-nvme": "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
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

// TestScoring: placement follows the scores. Six identical pods on three
// equal nodes are spread two per node (LeastAllocated and
// BalancedAllocation), a pod that prefers a zone gets it, and a pod that
// opts in to NodeCost gets the cheapest node.
func TestScoring(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)

	const ns = "scoring"
	createNamespace(ctx, t, admin, ns)
	for _, n := range []*v1.Node{
		withLabel(withLabel(node("node-a"), "zone", "a"), nodecost.CostLabel, "5"),
		withLabel(withLabel(node("node-b"), "zone", "b"), nodecost.CostLabel, "9"),
		withLabel(withLabel(node("node-c"), "zone", "c"), nodecost.CostLabel, "2"),
	} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counter := runScheduler(ctx, t, cfg)

	bound := func(names ...string) map[string]string {
		t.Helper()
		var got map[string]string
		waitFor(ctx, t, fmt.Sprintf("pods %v to be bound", names), func() (bool, error) {
			var err error
			got, err = placements(ctx, admin, ns)
			if err != nil {
				return false, err
			}
			for _, n := range names {
				if got[n] == "" {
					return false, nil
				}
			}
			return true, nil
		})
		return got
	}

	var spread []string
	for i := range 6 {
		p := requesting(pod(ns, podName("spread", i), scheduler.DefaultSchedulerName), "1")
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		spread = append(spread, p.Name)
	}
	perNode := map[string]int{}
	for _, n := range bound(spread...) {
		perNode[n]++
	}
	if diff := cmp.Diff(map[string]int{"node-a": 2, "node-b": 2, "node-c": 2}, perNode); diff != "" {
		t.Errorf("pods per node (-want, +got):\n%s", diff)
	}

	zoneB := requesting(pod(ns, "prefers-b", scheduler.DefaultSchedulerName), "100m")
	zoneB.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
		Weight:     50,
		Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}},
	}}}}
	cheap := requesting(pod(ns, "cheap", scheduler.DefaultSchedulerName), "100m")
	cheap.Annotations = map[string]string{nodecost.PreferCheapAnnotation: "true"}
	for _, p := range []*v1.Pod{zoneB, cheap} {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got := bound("prefers-b", "cheap")
	counter.waitCounted(ctx, t, 8)
	if diff := cmp.Diff(map[string]string{"prefers-b": "node-b", "cheap": "node-c"}, map[string]string{"prefers-b": got["prefers-b"], "cheap": got["cheap"]}); diff != "" {
		t.Errorf("placements (-want, +got):\n%s", diff)
	}
	for p, codes := range counter.get() {
		if !cmp.Equal([]int{201}, codes) {
			t.Errorf("pod %s: Binding status codes %v, want one 201", p, codes)
		}
	}
}

// TestAssumeUnderConcurrentBinding: 3 nodes with cpu=1500m, 60 identical
// pods of cpu=100m created at once. Binding runs concurrently with the next
// scheduling cycles, so only the assumed pods keep the scheduler from
// giving the same room twice: exactly 15 pods land on each node, the other
// 15 are unschedulable with upstream's message, and the apiserver rejects
// no Binding.
func TestAssumeUnderConcurrentBinding(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)

	const ns = "assume"
	createNamespace(ctx, t, admin, ns)
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		n := node(name)
		n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("64Gi"), v1.ResourcePods: resource.MustParse("110")}
		n.Status.Capacity = n.Status.Allocatable
		if _, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counter := runScheduler(ctx, t, cfg)

	for i := range 60 {
		p := pod(ns, podName("p", i), scheduler.DefaultSchedulerName)
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// No pod has a lower priority than another: none can preempt.
	const unfitMsg = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	var perNode map[string]int
	waitFor(ctx, t, "45 pods bound and 15 unschedulable", func() (bool, error) {
		list, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		perNode = map[string]int{}
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				perNode[p.Spec.NodeName]++
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable && c.Message == unfitMsg {
					perNode["unschedulable"]++
				}
			}
		}
		return cmp.Equal(map[string]int{"node-a": 15, "node-b": 15, "node-c": 15, "unschedulable": 15}, perNode), nil
	})
	counter.waitCounted(ctx, t, 45)
	for p, codes := range counter.get() {
		if !cmp.Equal([]int{201}, codes) {
			t.Errorf("pod %s: Binding status codes %v, want one 201", p, codes)
		}
	}
	if n := len(counter.get()); n != 45 {
		t.Errorf("%d pods got a Binding, want 45", n)
	}
}

// TestEventHandlers checks what the informers change: a deleted node is
// gone from the next snapshot, a queued pod that is updated is scheduled
// with its new spec, a queued pod that is deleted is never bound, and the
// scheduling loop sends no List to the apiserver.
func TestEventHandlers(t *testing.T) {
	ctx, logs := newBufferedContext(t)
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)
	const ns = "handlers"
	createNamespace(ctx, t, admin, ns)
	for _, n := range []*v1.Node{withCPU(node("plain"), "1"), withTaint(node("tainted"), "dedicated", "db"), withLabel(node("doomed"), "role", "doomed")} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counter := runScheduler(ctx, t, cfg)
	boundTo := func(name, node string) {
		t.Helper()
		waitFor(ctx, t, "pod "+name+" to be bound to "+node, func() (bool, error) {
			got := getPod(ctx, t, admin, ns, name).Spec.NodeName
			if got != "" && got != node {
				return false, fmt.Errorf("pod %s went to %s", name, got)
			}
			return got == node, nil
		})
	}

	// A pod that makes the informers sync and the first Binding happen.
	createPod(ctx, t, admin, pod(ns, "first", scheduler.DefaultSchedulerName))
	waitFor(ctx, t, "the first pod to be bound", func() (bool, error) { return getPod(ctx, t, admin, ns, "first").Spec.NodeName != "", nil })

	// A deleted node is gone from the next snapshot.
	if err := admin.CoreV1().Nodes().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The node and pod informers watch apart: a pod created now could
	// reach the scheduler before the node's deletion does, and be bound to
	// it, as kube-scheduler's would. The handler logs the deletion once
	// the node is out of the cache.
	waitFor(ctx, t, "the scheduler to handle the deletion of node doomed", func() (bool, error) {
		for _, kv := range logEntries(logs, "Delete event for node") {
			if kv["node"] == "doomed" {
				return true, nil
			}
		}
		return false, nil
	})
	createPod(ctx, t, admin, withSelector(pod(ns, "wants-doomed", scheduler.DefaultSchedulerName), "role", "doomed"))
	waitUnschedulable(ctx, t, admin, ns, "wants-doomed", "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")

	// A queued pod that is updated is scheduled with its new spec: it needs
	// two CPUs, which only the tainted node has, and gets the toleration.
	createPod(ctx, t, admin, requesting(pod(ns, "needs-toleration", scheduler.DefaultSchedulerName), "2"))
	waitUnschedulable(ctx, t, admin, ns, "needs-toleration", "")
	p := getPod(ctx, t, admin, ns, "needs-toleration")
	tolerating(p, "dedicated", "db")
	if _, err := admin.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	boundTo("needs-toleration", "tainted")

	// A queued pod that is deleted is never bound, even once a node that
	// fits it arrives; a pod created after it is.
	createPod(ctx, t, admin, tolerating(requesting(pod(ns, "deleted", scheduler.DefaultSchedulerName), "8"), "dedicated", "db"))
	waitUnschedulable(ctx, t, admin, ns, "deleted", "")
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "deleted", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Nodes().Create(ctx, withCPU(node("huge"), "16"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(ctx, t, admin, requesting(pod(ns, "after", scheduler.DefaultSchedulerName), "8"))
	boundTo("after", "huge")
	if codes := counter.get()[ns+"/deleted"]; len(codes) != 0 {
		t.Errorf("the deleted pod got Bindings: %v", codes)
	}

	if diff := cmp.Diff(map[string]int{}, counter.listsAfterFirstBinding()); diff != "" {
		t.Errorf("List requests after the informers synced, by resource (-want, +got):\n%s", diff)
	}
}

// TestOnePodHandler: the scheduler binds many pods while their labels keep
// changing, so the informer delivers a stream of updates to each pod
// around its binding. With one pod handler, as upstream has, the cache and
// the queue see each pod's events in order: once the cache has the bound
// pod, no older, unbound copy of it reaches the queue. So each pod costs
// exactly one attempt, and none is an error.
func TestOnePodHandler(t *testing.T) {
	metrics.Register()
	ctx, logs := newBufferedContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)
	const ns = "order"
	createNamespace(ctx, t, admin, ns)
	createNodes(ctx, t, admin, "node-a", "node-b")
	before := scheduleAttempts(t)
	runScheduler(ctx, t, cfg)

	const pods = 100
	var wg sync.WaitGroup
	for i := range pods {
		name := podName("p", i)
		createPod(ctx, t, admin, pod(ns, name, scheduler.DefaultSchedulerName))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				patch := fmt.Sprintf(`{"metadata":{"labels":{"tick":"%d"}}}`, j)
				if _, err := admin.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	waitFor(ctx, t, "every pod bound and its decision logged", func() (bool, error) {
		got, err := placements(ctx, admin, ns)
		if err != nil {
			return false, err
		}
		bound := 0
		for name, node := range got {
			if node != "" && scheduledDecision(logs, ns+"/"+name) {
				bound++
			}
		}
		return bound == pods, nil
	})
	extra := map[string]int{}
	for i := range pods {
		if n := decisions(logs, ns+"/"+podName("p", i)); n != 1 {
			extra[podName("p", i)] = n
		}
	}
	if diff := cmp.Diff(map[string]int{}, extra); diff != "" {
		t.Errorf("pods with other than one decision (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(float64(pods), scheduleAttempts(t)-before); diff != "" {
		t.Errorf("scheduling attempts (-want, +got):\n%s", diff)
	}
}
