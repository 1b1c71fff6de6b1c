package cache

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

func node(name string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}}}
}

func pod(name, nodeName string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)},
		Spec: v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
		}}}},
	}
}

// view is what a snapshot shows: node -> its pods' names.
func view(c *Cache) map[string][]string {
	out := map[string][]string{}
	for _, n := range c.Snapshot() {
		names := []string{}
		for _, p := range n.GetPods() {
			names = append(names, p.GetPod().Name)
		}
		sort.Strings(names)
		out[n.Node().Name] = names
	}
	return out
}

func TestCache(t *testing.T) {
	tests := []struct {
		name        string
		ops         func(t *testing.T, c *Cache)
		want        map[string][]string
		wantAssumed int
	}{
		{
			name: "nodes and bound pods",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(node("a"))
				c.AddNode(node("b"))
				must(t, c.AddPod(logger(t), pod("p", "a")))
			},
			want: map[string][]string{"a": {"p"}, "b": {}},
		},
		{
			name: "a pod that arrives before its node is shown once the node is",
			ops: func(t *testing.T, c *Cache) {
				must(t, c.AddPod(logger(t), pod("p", "late")))
				c.AddNode(node("late"))
			},
			want: map[string][]string{"late": {"p"}},
		},
		{
			name: "an assumed pod counts until it is confirmed",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(node("a"))
				must(t, c.AssumePod(pod("p", "a")))
			},
			want:        map[string][]string{"a": {"p"}},
			wantAssumed: 1,
		},
		{
			name: "the informer confirms an assumed pod",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(node("a"))
				must(t, c.AssumePod(pod("p", "a")))
				must(t, c.AddPod(logger(t), pod("p", "a")))
			},
			want: map[string][]string{"a": {"p"}},
		},
		{
			name: "a forgotten pod no longer counts",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(node("a"))
				must(t, c.AssumePod(pod("p", "a")))
				must(t, c.ForgetPod(logger(t), pod("p", "a")))
			},
			want: map[string][]string{"a": {}},
		},
		{
			name: "a pod moves with its update; a removed pod leaves",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(node("a"))
				c.AddNode(node("b"))
				must(t, c.AddPod(logger(t), pod("p", "a")))
				must(t, c.AddPod(logger(t), pod("q", "a")))
				must(t, c.UpdatePod(logger(t), pod("p", "a"), pod("p", "b")))
				must(t, c.RemovePod(logger(t), pod("q", "a")))
			},
			want: map[string][]string{"a": {}, "b": {"p"}},
		},
		{
			name: "a deleted node leaves the next snapshot, even with pods on it",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(node("a"))
				c.AddNode(node("b"))
				must(t, c.AddPod(logger(t), pod("p", "a")))
				c.RemoveNode(node("a"))
			},
			want: map[string][]string{"b": {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			tt.ops(t, c)
			if diff := cmp.Diff(tt.want, view(c)); diff != "" {
				t.Errorf("snapshot (-want, +got):\n%s", diff)
			}
			if _, assumed := c.Dump(); len(assumed) != tt.wantAssumed {
				t.Errorf("assumed pods = %d, want %d", len(assumed), tt.wantAssumed)
			}
		})
	}
}

// TestSnapshotIsACopy: a cycle's snapshot does not change when the cache
// does.
func TestSnapshotIsACopy(t *testing.T) {
	c := New()
	c.AddNode(node("a"))
	snap := c.Snapshot()
	must(t, c.AddPod(logger(t), pod("p", "a")))
	if n := len(snap[0].GetPods()); n != 0 {
		t.Errorf("the snapshot taken before the pod arrived shows %d pods", n)
	}
}

func TestErrors(t *testing.T) {
	c := New()
	c.AddNode(node("a"))
	if err := c.ForgetPod(logger(t), pod("p", "a")); err == nil {
		t.Error("forgetting a pod that is not assumed succeeded")
	}
	must(t, c.AssumePod(pod("p", "a")))
	if err := c.AssumePod(pod("p", "a")); err == nil {
		t.Error("assuming a pod twice succeeded")
	}
	if err := c.RemovePod(logger(t), pod("ghost", "a")); err == nil {
		t.Error("removing an unknown pod succeeded")
	}
}

func logger(t *testing.T) klog.Logger {
	l, _ := ktesting.NewTestContext(t)
	return l
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
