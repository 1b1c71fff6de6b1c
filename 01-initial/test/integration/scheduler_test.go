package integration

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"

	"minisched/01-initial/scheduler"
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
