package scheduler

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
)

// TestNodeEvents: the node informer's events reach the cache, so a
// snapshot taken after an event lists what the cluster has, and a pod is
// scheduled on that. An added node is used, a label change counts, and a
// deleted node is gone, even with a pod still bound to it (the pod garbage
// collector deletes such pods later). A cache that kept a deleted node
// would bind a pod to a node that no longer exists.
func TestNodeEvents(t *testing.T) {
	deleteNodeB := func(ctx context.Context, client *fake.Clientset) error {
		return client.CoreV1().Nodes().Delete(ctx, "node-b", metav1.DeleteOptions{})
	}
	tests := []struct {
		name         string
		boundPods    []*v1.Pod
		change       func(ctx context.Context, client *fake.Clientset) error
		wantNodes    []string // what a snapshot lists, as "name role=value"
		pod          *v1.Pod  // scheduled once the cache shows the change
		wantBindings []string
	}{
		{
			name: "an added node is listed and used",
			change: func(ctx context.Context, client *fake.Clientset) error {
				_, err := client.CoreV1().Nodes().Create(ctx, makeNode("node-c").label("role", "c").obj(), metav1.CreateOptions{})
				return err
			},
			wantNodes:    []string{"node-a role=a", "node-b role=b", "node-c role=c"},
			pod:          makePod("p").nodeSelector("role", "c").obj(),
			wantBindings: []string{"default/p->node-c"},
		},
		{
			name: "a label change counts",
			change: func(ctx context.Context, client *fake.Clientset) error {
				node, err := client.CoreV1().Nodes().Get(ctx, "node-b", metav1.GetOptions{})
				if err != nil {
					return err
				}
				node.Labels["role"] = "c"
				_, err = client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
				return err
			},
			wantNodes:    []string{"node-a role=a", "node-b role=c"},
			pod:          makePod("p").nodeSelector("role", "c").obj(),
			wantBindings: []string{"default/p->node-b"},
		},
		{
			name:      "a deleted node is gone",
			change:    deleteNodeB,
			wantNodes: []string{"node-a role=a"},
			pod:       makePod("p").nodeSelector("role", "b").obj(),
		},
		{
			name:      "a deleted node is gone, even with a pod bound to it",
			boundPods: []*v1.Pod{makePod("bound").node("node-b").obj()},
			change:    deleteNodeB,
			wantNodes: []string{"node-a role=a"},
			pod:       makePod("p").nodeSelector("role", "b").obj(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			objs := []runtime.Object{makeNode("node-a").label("role", "a").obj(), makeNode("node-b").label("role", "b").obj(), tt.pod}
			for _, p := range tt.boundPods {
				objs = append(objs, p)
			}
			client := fake.NewClientset(objs...)
			sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
			if err := tt.change(ctx, client); err != nil {
				t.Fatal(err)
			}
			listed := func() []string {
				var out []string
				for _, n := range cachedNodes(t, sched) {
					out = append(out, n.Node().Name+" role="+n.Node().Labels["role"])
				}
				return out
			}
			got := listed()
			for i := 0; i < 500 && !cmp.Equal(tt.wantNodes, got); i++ {
				time.Sleep(10 * time.Millisecond)
				got = listed()
			}
			if diff := cmp.Diff(tt.wantNodes, got); diff != "" {
				t.Errorf("nodes in a snapshot of the cache (-want, +got):\n%s", diff)
			}

			sched.scheduleOnePod(ctx, popped(t, sched, tt.pod))
			sched.bindings.Wait()
			if diff := cmp.Diff(tt.wantBindings, bindings(client)); diff != "" {
				t.Errorf("bindings (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestPodGroupEvents: members created before their PodGroup wait apart in
// the queue; the PodGroup's add event records it in the cache (the cycle
// reads it from the snapshot) and in the queue, where the members join one
// entity. GangScheduling's PreEnqueue then sends the entity to activeQ if
// minCount members exist, and to the unschedulable pool if not.
func TestPodGroupEvents(t *testing.T) {
	tests := []struct {
		name       string
		minCount   int32
		wantActive []string
		wantPool   []string
	}{
		{name: "a complete gang goes to activeQ", minCount: 2, wantActive: []string{"a", "b"}},
		{name: "a gang short of members waits in the pool", minCount: 3, wantPool: []string{"a", "b"}},
	}
	podNames := func(pods []*v1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			client := fake.NewClientset(makeNode("node").obj(), makePod("a").group("g").obj(), makePod("b").group("g").obj())
			sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
			if diff := cmp.Diff([]string{"a", "b"}, podNames(sched.queue.IncompletePodGroupPods())); diff != "" {
				t.Fatalf("members waiting for their PodGroup (-want, +got):\n%s", diff)
			}
			if _, err := client.SchedulingV1beta1().PodGroups("default").Create(ctx, makePodGroup("g", tt.minCount), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "the members to leave the wait for their PodGroup", func() bool { return len(sched.queue.IncompletePodGroupPods()) == 0 })
			if diff := cmp.Diff(tt.wantActive, podNames(sched.queue.PodsInActiveQ())); diff != "" {
				t.Errorf("pods in activeQ (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPool, podNames(sched.queue.UnschedulablePods())); diff != "" {
				t.Errorf("pods in the unschedulable pool (-want, +got):\n%s", diff)
			}
			if err := sched.cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot); err != nil {
				t.Fatal(err)
			}
			if _, err := sched.nodeInfoSnapshot.PodGroups().Get("default", "g"); err != nil {
				t.Errorf("the snapshot has no PodGroup g: %v", err)
			}
		})
	}
}
