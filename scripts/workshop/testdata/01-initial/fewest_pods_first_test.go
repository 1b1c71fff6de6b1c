package scheduler

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
)

// honorFieldSelectors makes the fake clientset answer a List of pods as the
// apiserver does: with only the pods its field selector matches. On its own
// the fake ignores field selectors and returns every pod.
func honorFieldSelectors(client *fake.Clientset, pods []*v1.Pod) {
	client.PrependReactor("list", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		selector := a.(clienttesting.ListAction).GetListRestrictions().Fields
		list := &v1.PodList{}
		for _, p := range pods {
			if ns := a.GetNamespace(); ns != "" && p.Namespace != ns {
				continue
			}
			if selector.Matches(fields.Set{
				"metadata.name":      p.Name,
				"metadata.namespace": p.Namespace,
				"spec.nodeName":      p.Spec.NodeName,
				"spec.schedulerName": p.Spec.SchedulerName,
				"status.phase":       string(p.Status.Phase),
			}) {
				list.Items = append(list.Items, *p)
			}
		}
		return true, list, nil
	})
}

// TestFewestPodsFirst: schedulePod picks the node that runs the fewest pods.
// Each case has one such node, so every seed must pick it; a random pick
// misses it for some of the 20 seeds.
func TestFewestPodsFirst(t *testing.T) {
	podOn := func(namespace, name, node string) *v1.Pod {
		p := makePod(name).node(node).obj()
		p.Namespace = namespace
		return p
	}
	tests := []struct {
		name  string
		nodes []string
		pods  []*v1.Pod
		want  string
	}{
		{
			name:  "the node with the fewest pods",
			nodes: []string{"node-a", "node-b", "node-c", "node-d"},
			pods: []*v1.Pod{
				podOn("default", "a-0", "node-a"), podOn("default", "a-1", "node-a"),
				podOn("default", "b-0", "node-b"),
				podOn("default", "d-0", "node-d"), podOn("default", "d-1", "node-d"), podOn("default", "d-2", "node-d"),
			},
			want: "node-c",
		},
		{
			name:  "pending pods are on no node",
			nodes: []string{"node-a", "node-b"},
			pods: []*v1.Pod{
				podOn("default", "running", "node-a"),
				makePod("pending-0").obj(), makePod("pending-1").obj(), makePod("pending-2").obj(),
			},
			want: "node-b",
		},
		{
			name:  "the pods of every namespace count",
			nodes: []string{"node-a", "node-b"},
			pods: []*v1.Pod{
				podOn("other", "x", "node-a"), podOn("other", "y", "node-a"),
				podOn("default", "z", "node-b"),
			},
			want: "node-b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var objs []runtime.Object
			for _, n := range tt.nodes {
				objs = append(objs, makeNode(n))
			}
			for _, p := range tt.pods {
				objs = append(objs, p)
			}
			client := fake.NewClientset(objs...)
			honorFieldSelectors(client, tt.pods)
			for seed := range uint64(20) {
				sched := New(client, events.NewFakeRecorder(10), WithRand(rand.New(rand.NewPCG(seed, seed))))
				got, err := sched.schedulePod(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Fatalf("seed %d: node (-want, +got):\n%s", seed, diff)
				}
			}
		})
	}
}
