package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
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
func view(snap *Snapshot) map[string][]string {
	out := map[string][]string{}
	for _, n := range snap.List() {
		names := []string{}
		for _, p := range n.GetPods() {
			names = append(names, p.GetPod().Name)
		}
		sort.Strings(names)
		out[n.Node().Name] = names
	}
	return out
}

// fresh returns a snapshot of c built from nothing: every NodeInfo copied.
func fresh(t *testing.T, c *Cache) *Snapshot {
	t.Helper()
	snap := NewEmptySnapshot()
	must(t, c.UpdateSnapshot(logger(t), snap))
	return snap
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
				c.AddNode(logger(t), node("a"))
				c.AddNode(logger(t), node("b"))
				must(t, c.AddPod(logger(t), pod("p", "a")))
			},
			want: map[string][]string{"a": {"p"}, "b": {}},
		},
		{
			name: "a pod that arrives before its node is shown once the node is",
			ops: func(t *testing.T, c *Cache) {
				must(t, c.AddPod(logger(t), pod("p", "late")))
				c.AddNode(logger(t), node("late"))
			},
			want: map[string][]string{"late": {"p"}},
		},
		{
			name: "an assumed pod counts until it is confirmed",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(logger(t), node("a"))
				must(t, c.AssumePod(pod("p", "a")))
			},
			want:        map[string][]string{"a": {"p"}},
			wantAssumed: 1,
		},
		{
			name: "the informer confirms an assumed pod",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(logger(t), node("a"))
				must(t, c.AssumePod(pod("p", "a")))
				must(t, c.AddPod(logger(t), pod("p", "a")))
			},
			want: map[string][]string{"a": {"p"}},
		},
		{
			name: "a forgotten pod no longer counts",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(logger(t), node("a"))
				must(t, c.AssumePod(pod("p", "a")))
				must(t, c.ForgetPod(logger(t), pod("p", "a")))
			},
			want: map[string][]string{"a": {}},
		},
		{
			name: "a pod moves with its update; a removed pod leaves",
			ops: func(t *testing.T, c *Cache) {
				c.AddNode(logger(t), node("a"))
				c.AddNode(logger(t), node("b"))
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
				c.AddNode(logger(t), node("a"))
				c.AddNode(logger(t), node("b"))
				must(t, c.AddPod(logger(t), pod("p", "a")))
				c.RemoveNode(logger(t), node("a"))
			},
			want: map[string][]string{"b": {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			tt.ops(t, c)
			if diff := cmp.Diff(tt.want, view(fresh(t, c))); diff != "" {
				t.Errorf("snapshot (-want, +got):\n%s", diff)
			}
			if _, assumed := c.Dump(); len(assumed) != tt.wantAssumed {
				t.Errorf("assumed pods = %d, want %d", len(assumed), tt.wantAssumed)
			}
		})
	}
}

// TestSnapshotIsACopy: a cycle's snapshot does not change when the cache
// does, until the next UpdateSnapshot.
func TestSnapshotIsACopy(t *testing.T) {
	c := New()
	c.AddNode(logger(t), node("a"))
	snap := fresh(t, c)
	must(t, c.AddPod(logger(t), pod("p", "a")))
	if n := len(snap.List()[0].GetPods()); n != 0 {
		t.Errorf("the snapshot taken before the pod arrived shows %d pods", n)
	}
	must(t, c.UpdateSnapshot(logger(t), snap))
	if n := len(snap.List()[0].GetPods()); n != 1 {
		t.Errorf("the updated snapshot shows %d pods, want 1", n)
	}
}

// TestUpdateSnapshot starts from a snapshot of nodes a and b, with pod p on
// a, makes changes, and updates the snapshot. Only the NodeInfos the
// changes touched may be copied, and the result must be what a snapshot
// built from nothing shows, in the node tree's order.
func TestUpdateSnapshot(t *testing.T) {
	tests := []struct {
		name       string
		ops        func(t *testing.T, c *Cache)
		wantCopied []string
		wantNodes  []string
	}{
		{
			name:      "nothing changed: nothing is copied",
			ops:       func(t *testing.T, c *Cache) {},
			wantNodes: []string{"a", "b"},
		},
		{
			name:       "a pod bound to b",
			ops:        func(t *testing.T, c *Cache) { must(t, c.AddPod(logger(t), pod("q", "b"))) },
			wantCopied: []string{"b"},
			wantNodes:  []string{"a", "b"},
		},
		{
			name:       "a pod assumed on b",
			ops:        func(t *testing.T, c *Cache) { must(t, c.AssumePod(pod("q", "b"))) },
			wantCopied: []string{"b"},
			wantNodes:  []string{"a", "b"},
		},
		{
			name:       "a pod removed from a",
			ops:        func(t *testing.T, c *Cache) { must(t, c.RemovePod(logger(t), pod("p", "a"))) },
			wantCopied: []string{"a"},
			wantNodes:  []string{"a", "b"},
		},
		{
			name:       "a node's labels changed",
			ops:        func(t *testing.T, c *Cache) { c.UpdateNode(logger(t), nil, withLabel(node("b"), "disk", "ssd")) },
			wantCopied: []string{"b"},
			wantNodes:  []string{"a", "b"},
		},
		{
			name:       "a node added joins the end of its zone's list",
			ops:        func(t *testing.T, c *Cache) { c.AddNode(logger(t), node("aa")) },
			wantCopied: []string{"aa"},
			wantNodes:  []string{"a", "b", "aa"},
		},
		{
			name:      "a deleted node with a pod on it leaves",
			ops:       func(t *testing.T, c *Cache) { c.RemoveNode(logger(t), node("a")) },
			wantNodes: []string{"b"},
		},
		{
			name:      "a deleted empty node leaves",
			ops:       func(t *testing.T, c *Cache) { c.RemoveNode(logger(t), node("b")) },
			wantNodes: []string{"a"},
		},
		{
			name: "a node deleted and added again under the same name is copied",
			ops: func(t *testing.T, c *Cache) {
				c.RemoveNode(logger(t), node("b"))
				c.AddNode(logger(t), withLabel(node("b"), "new", "yes"))
			},
			wantCopied: []string{"b"},
			wantNodes:  []string{"a", "b"},
		},
		{
			name:      "a pod bound to a node the cache has not seen shows nowhere",
			ops:       func(t *testing.T, c *Cache) { must(t, c.AddPod(logger(t), pod("q", "late"))) },
			wantNodes: []string{"a", "b"},
		},
		{
			name: "a node whose pod came first is copied with it",
			ops: func(t *testing.T, c *Cache) {
				must(t, c.AddPod(logger(t), pod("q", "late")))
				c.AddNode(logger(t), node("late"))
			},
			wantCopied: []string{"late"},
			wantNodes:  []string{"a", "b", "late"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			c.AddNode(logger(t), node("a"))
			c.AddNode(logger(t), node("b"))
			must(t, c.AddPod(logger(t), pod("p", "a")))
			snap := fresh(t, c)
			// A copy carries the cache's Generation, so a NodeInfo whose
			// Generation is still 0 afterwards was left alone.
			for _, n := range snap.nodeInfoMap {
				n.Generation = 0
			}
			tt.ops(t, c)
			must(t, c.UpdateSnapshot(logger(t), snap))

			copied := []string{}
			nodes := []string{}
			for _, n := range snap.List() {
				nodes = append(nodes, n.Node().Name)
				if n.GetGeneration() != 0 {
					copied = append(copied, n.Node().Name)
				}
			}
			if diff := cmp.Diff(tt.wantNodes, nodes); diff != "" {
				t.Errorf("nodes listed (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCopied, copied, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("NodeInfos copied (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(view(fresh(t, c)), view(snap)); diff != "" {
				t.Errorf("the updated snapshot differs from a new one (-new, +updated):\n%s", diff)
			}
		})
	}
}

// TestUpdateSnapshotMatchesACopy plays random changes on a few nodes and
// pods, and after every few of them checks that the snapshot the scheduler
// keeps updating shows what a snapshot built from nothing shows: the same
// nodes, with the same pods and requested resources. The order may differ:
// a node deleted and added again between two updates is at the end of the
// node tree, but the updated list is rebuilt only when the set of nodes it
// holds changes, as upstream's UpdateSnapshot does. The order only decides
// where a cycle starts looking.
func TestUpdateSnapshotMatchesACopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := New()
	snap := NewEmptySnapshot()
	nodes := []string{"n0", "n1", "n2", "n3", "n4"}
	bound := map[string]*v1.Pod{}
	assumed := map[string]*v1.Pod{}
	var listed []string
	rebuilt := 0
	defer func() {
		if rebuilt < 10 {
			t.Errorf("the list was rebuilt %d times, too few to check its order", rebuilt)
		}
	}()
	for step := range 5000 {
		name := fmt.Sprintf("p%d", rng.IntN(30))
		nodeName := nodes[rng.IntN(len(nodes))]
		switch op := rng.IntN(7); {
		case op == 0:
			// Two zones, so a node's zone may change too.
			n := withLabel(node(nodeName), "step", fmt.Sprint(step))
			n.Labels[v1.LabelTopologyZone] = fmt.Sprint("z", rng.IntN(2))
			c.AddNode(logger(t), n)
		case op == 1:
			c.RemoveNode(logger(t), node(nodeName))
		case bound[name] == nil && assumed[name] == nil && op == 2:
			must(t, c.AddPod(logger(t), pod(name, nodeName)))
			bound[name] = pod(name, nodeName)
		case bound[name] == nil && assumed[name] == nil:
			must(t, c.AssumePod(pod(name, nodeName)))
			assumed[name] = pod(name, nodeName)
		case assumed[name] != nil && op < 4:
			must(t, c.ForgetPod(logger(t), assumed[name]))
			delete(assumed, name)
		case assumed[name] != nil:
			// The informer confirms it, on the node it was assumed on.
			must(t, c.AddPod(logger(t), assumed[name]))
			bound[name] = assumed[name]
			delete(assumed, name)
		case op < 4:
			must(t, c.RemovePod(logger(t), bound[name]))
			delete(bound, name)
		default:
			must(t, c.UpdatePod(logger(t), bound[name], pod(name, nodeName)))
			bound[name] = pod(name, nodeName)
		}
		if step%3 != 0 {
			continue
		}
		must(t, c.UpdateSnapshot(logger(t), snap))
		want := fresh(t, c)
		if diff := cmp.Diff(summary(want), summary(snap), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Fatalf("step %d: the updated snapshot differs from a new one (-new, +updated):\n%s", step, diff)
		}
		// When the set of nodes changed, the list was rebuilt from the
		// tree: then the order must be the tree's too.
		if names := nodeNames(snap); !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(listed))) {
			if diff := cmp.Diff(nodeNames(want), names); diff != "" {
				t.Fatalf("step %d: a rebuilt list is not in the tree's order (-tree, +updated):\n%s", step, diff)
			}
			rebuilt++
		}
		listed = nodeNames(snap)
	}
}

// nodeNames lists a snapshot's nodes in its order.
func nodeNames(snap *Snapshot) []string {
	var out []string
	for _, n := range snap.List() {
		out = append(out, n.Node().Name)
	}
	return out
}

// summary is what a cycle reads of a snapshot, in its order.
func summary(snap *Snapshot) []string {
	out := []string{}
	for _, n := range snap.List() {
		names := []string{}
		for _, p := range n.GetPods() {
			names = append(names, p.GetPod().Name)
		}
		sort.Strings(names)
		out = append(out, fmt.Sprintf("%s step=%s cpu=%d pods=%v", n.Node().Name, n.Node().Labels["step"], n.GetRequested().GetMilliCPU(), names))
	}
	return out
}

func withLabel(n *v1.Node, key, value string) *v1.Node {
	n.Labels = map[string]string{key: value}
	return n
}

func TestErrors(t *testing.T) {
	c := New()
	c.AddNode(logger(t), node("a"))
	must(t, c.AddPod(logger(t), pod("bound", "a")))
	if err := c.ForgetPod(logger(t), pod("bound", "a")); err == nil {
		t.Error("forgetting a bound pod succeeded")
	}
	// A pod no longer in the cache was removed after its deletion:
	// forgetting it has nothing to undo.
	must(t, c.ForgetPod(logger(t), pod("gone", "a")))
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

// TestRemovePodFromTombstone: the informer missed a pod's deletion and
// hands over its last state, from before the binding: no node. The cache
// frees the node the pod is counted on, assumed or bound, as upstream's
// RemovePod does.
func TestRemovePodFromTombstone(t *testing.T) {
	tests := []struct {
		name string
		add  func(c *Cache, p *v1.Pod) error
	}{
		{name: "assumed", add: func(c *Cache, p *v1.Pod) error { return c.AssumePod(p) }},
		{name: "bound", add: func(c *Cache, p *v1.Pod) error { return c.AddPod(klog.Background(), p) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			c.AddNode(logger(t), node("a"))
			must(t, tt.add(c, pod("p", "a")))
			must(t, c.RemovePod(logger(t), pod("p", "")))
			pods, assumed := c.Dump()
			if diff := cmp.Diff([2]int{0, 0}, [2]int{len(pods), len(assumed)}); diff != "" {
				t.Errorf("pods and assumed pods in the cache (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string][]string{"a": {}}, view(fresh(t, c))); diff != "" {
				t.Errorf("snapshot (-want, +got):\n%s", diff)
			}
		})
	}
}

// member returns pod name of pod group g, on nodeName ("" for pending).
func member(name, g, nodeName string) *v1.Pod {
	p := pod(name, nodeName)
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
	return p
}

// groupCounts is what a pod group state says: all members, unscheduled,
// assumed, bound.
func groupCounts(t *testing.T, s fwk.PodGroupState) [4]int {
	t.Helper()
	return [4]int{s.AllPodsCount(), len(s.UnscheduledPods()), s.AssumedPods().Len(), s.AssignedPods().Len()}
}

// TestPodGroupState follows a gang's members through the cache: pending
// (AddPodGroupMember), assumed, confirmed by the informer, forgotten,
// deleted; and the state outlives its PodGroup object while members
// remain.
func TestPodGroupState(t *testing.T) {
	c := New()
	l := logger(t)
	c.AddNode(l, node("n"))
	c.AddPodGroup(&schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}})
	a, b, cc := member("a", "g", ""), member("b", "g", ""), member("c", "g", "")
	for _, p := range []*v1.Pod{a, b, cc} {
		c.AddPodGroupMember(p)
	}
	state := func() fwk.PodGroupState {
		s, err := c.PodGroupStates().Get("ns", "g")
		must(t, err)
		return s
	}
	steps := []struct {
		name string
		op   func()
		want [4]int
	}{
		{name: "three pending members", op: func() {}, want: [4]int{3, 3, 0, 0}},
		{name: "a and b assumed", op: func() {
			must(t, c.AssumePod(member("a", "g", "n")))
			must(t, c.AssumePod(member("b", "g", "n")))
		}, want: [4]int{3, 1, 2, 0}},
		{name: "a confirmed by the informer", op: func() { must(t, c.AddPod(l, member("a", "g", "n"))) }, want: [4]int{3, 1, 1, 1}},
		{name: "b forgotten: pending again", op: func() { must(t, c.ForgetPod(l, member("b", "g", "n"))) }, want: [4]int{3, 2, 0, 1}},
		{name: "c assumed, then deleted while assumed", op: func() {
			must(t, c.AssumePod(member("c", "g", "n")))
			must(t, c.RemoveAssumedPod(l, member("c", "g", "n")))
		}, want: [4]int{2, 1, 0, 1}},
		{name: "b deleted while pending", op: func() { c.RemovePodGroupMember(b) }, want: [4]int{1, 0, 0, 1}},
	}
	for _, st := range steps {
		st.op()
		if diff := cmp.Diff(st.want, groupCounts(t, state())); diff != "" {
			t.Errorf("%s: all, unscheduled, assumed, bound (-want, +got):\n%s", st.name, diff)
		}
	}
	// The PodGroup goes; the state stays for its bound member, and goes
	// with it.
	c.RemovePodGroup(l, &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}})
	if _, err := c.PodGroups().Get("ns", "g"); err == nil {
		t.Error("the PodGroup is still listed after its removal")
	}
	if diff := cmp.Diff([4]int{1, 0, 0, 1}, groupCounts(t, state())); diff != "" {
		t.Errorf("the state without its PodGroup (-want, +got):\n%s", diff)
	}
	must(t, c.RemovePod(l, member("a", "g", "n")))
	if _, err := c.PodGroupStates().Get("ns", "g"); err == nil {
		t.Error("the state outlived its PodGroup and its last member")
	}
}

// TestSnapshotAssumePod: a pod-group cycle assumes members in the snapshot
// only, each seeing the ones before it, and undoes them the last first;
// the NodeInfos keep their generation, so the next UpdateSnapshot still
// copies what the cache changed, and the cache never saw the simulation.
func TestSnapshotAssumePod(t *testing.T) {
	c := New()
	l := logger(t)
	c.AddNode(l, node("n"))
	c.AddPodGroup(&schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}})
	a, b := member("a", "g", ""), member("b", "g", "")
	c.AddPodGroupMember(a)
	c.AddPodGroupMember(b)
	snap := fresh(t, c)
	generation := snap.nodeInfoMap["n"].Generation
	assume := func(p *v1.Pod) {
		t.Helper()
		pi, err := framework.NewPodInfo(member(p.Name, "g", "n"))
		must(t, err)
		must(t, snap.AssumePod(pi))
	}
	assume(a)
	assume(b)
	pgs, err := snap.PodGroupStates().Get("ns", "g")
	must(t, err)
	got := [3]any{view(snap)["n"], pgs.ScheduledPodsCount(), snap.nodeInfoMap["n"].Generation == generation}
	if diff := cmp.Diff([3]any{[]string{"a", "b"}, 2, true}, got); diff != "" {
		t.Errorf("pods on n, the group's scheduled members, and whether n kept its generation, after two assumes (-want, +got):\n%s", diff)
	}
	if err := snap.ForgetPod(l, member("a", "g", "n")); err == nil {
		t.Error("forgetting a before b, the last assumed, did not fail")
	}
	must(t, snap.ForgetPod(l, member("b", "g", "n")))
	must(t, snap.ForgetPod(l, member("a", "g", "n")))
	got = [3]any{view(snap)["n"], pgs.ScheduledPodsCount(), snap.nodeInfoMap["n"].Generation == generation}
	if diff := cmp.Diff([3]any{[]string{}, 0, true}, got); diff != "" {
		t.Errorf("after both are forgotten (-want, +got):\n%s", diff)
	}
	if pods, assumed := c.Dump(); len(pods)+len(assumed) != 0 {
		t.Errorf("the cache holds %d pods, %d assumed: the simulation reached it", len(pods), len(assumed))
	}
	// A change in the cache still reaches the snapshot.
	must(t, c.AssumePod(member("a", "g", "n")))
	must(t, c.UpdateSnapshot(l, snap))
	if diff := cmp.Diff([]string{"a"}, view(snap)["n"]); diff != "" {
		t.Errorf("pods on n once the cache assumed a (-want, +got):\n%s", diff)
	}
}

// TestUpdateSnapshotForgetsAssumedPods: a pod-group cycle that failed to
// undo its simulation leaves members assumed in the snapshot. The next
// UpdateSnapshot forgets them, the last first, as upstream's does
// (Snapshot.forgetAllAssumedPods, called in Cache.UpdateSnapshot before
// any NodeInfo is copied):
// otherwise a node the cache did not change would keep pods that were
// never bound, and the next cycle would see its room taken.
func TestUpdateSnapshotForgetsAssumedPods(t *testing.T) {
	c := New()
	l := logger(t)
	c.AddNode(l, node("n"))
	c.AddNode(l, node("m"))
	c.AddPodGroup(&schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}})
	c.AddPodGroupMember(member("a", "g", ""))
	c.AddPodGroupMember(member("b", "g", ""))
	snap := fresh(t, c)
	for _, p := range []*v1.Pod{member("a", "g", "n"), member("b", "g", "m")} {
		pi, err := framework.NewPodInfo(p)
		must(t, err)
		must(t, snap.AssumePod(pi))
	}
	// The cache changes only m: n's NodeInfo is not copied again.
	must(t, c.AssumePod(pod("c", "m")))
	must(t, c.UpdateSnapshot(l, snap))
	pgs, err := snap.PodGroupStates().Get("ns", "g")
	must(t, err)
	got := [3]any{view(snap), pgs.ScheduledPodsCount(), len(snap.assumedPods)}
	want := [3]any{map[string][]string{"n": {}, "m": {"c"}}, 0, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods per node, the group's scheduled members, and pods still assumed in the snapshot (-want, +got):\n%s", diff)
	}
}
