package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// TestMaxPods checks the exercise's MaxPods filter: a node that holds 3 pods
// or more is rejected with "node(s) have too many pods", after the in-tree
// filters.
func TestMaxPods(t *testing.T) {
	podsOn := func(node string, n int) []*v1.Pod {
		var pods []*v1.Pod
		for i := range n {
			pods = append(pods, makePod(fmt.Sprintf("%s-%d", node, i)).node(node).obj())
		}
		return pods
	}
	tests := []struct {
		name          string
		nodes         []*v1.Node
		existing      []*v1.Pod
		wantNode      string // where every seed must place the pod; "" if nowhere
		wantCondition string // the pod's PodScheduled condition when it fits nowhere
	}{
		{
			name:     "the pod goes to the node with room",
			nodes:    []*v1.Node{makeNode("full").obj(), makeNode("empty").obj()},
			existing: podsOn("full", 3),
			wantNode: "empty",
		},
		{
			name:     "two pods are not too many",
			nodes:    []*v1.Node{makeNode("two").obj()},
			existing: podsOn("two", 2),
			wantNode: "two",
		},
		{
			name:          "every node full: upstream's message",
			nodes:         []*v1.Node{makeNode("full-1").obj(), makeNode("full-2").obj()},
			existing:      append(podsOn("full-1", 3), podsOn("full-2", 4)...),
			wantCondition: "False Unschedulable: 0/2 nodes are available: 2 node(s) have too many pods.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pod := makePod("p").obj()
			objs := []runtime.Object{pod}
			for _, n := range tt.nodes {
				objs = append(objs, n)
			}
			for _, p := range tt.existing {
				objs = append(objs, p)
			}
			client := fake.NewClientset(objs...)
			sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(10))
			if tt.wantNode != "" {
				for seed := range uint64(20) {
					sched.rand = rand.New(rand.NewPCG(seed, seed))
					result, err := sched.schedulePod(ctx, framework.NewCycleState(), pod)
					if err != nil {
						t.Fatalf("seed %d: %v", seed, err)
					}
					if diff := cmp.Diff(tt.wantNode, result.SuggestedHost); diff != "" {
						t.Fatalf("seed %d: node (-want, +got):\n%s", seed, diff)
					}
				}
				return
			}
			sched.ScheduleOne(ctx, pod)
			if diff := cmp.Diff([]string(nil), bindings(client)); diff != "" {
				t.Errorf("bindings (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCondition, podScheduledCondition(t, ctx, client, pod)); diff != "" {
				t.Errorf("PodScheduled condition (-want, +got):\n%s", diff)
			}
		})
	}
}
