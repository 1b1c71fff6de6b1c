package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// zoned returns a node in the zone of the given region and zone labels.
func zoned(name, region, zone string) *v1.Node {
	labels := map[string]string{}
	if region != "" {
		labels[v1.LabelTopologyRegion] = region
	}
	if zone != "" {
		labels[v1.LabelTopologyZone] = zone
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// TestNodeTree checks the order the snapshot lists nodes in: zones taken
// round robin, in the order they appeared, each zone's nodes in the order
// they were added, after upstream's node_tree_test.go.
func TestNodeTree(t *testing.T) {
	tests := []struct {
		name     string
		ops      func(nt *nodeTree)
		want     []string
		wantZone map[string][]string
	}{
		{
			name: "no zone labels: one zone, in the order added",
			ops: func(nt *nodeTree) {
				for _, n := range []string{"c", "a", "b"} {
					nt.addNode(logger(t), zoned(n, "", ""))
				}
			},
			want:     []string{"c", "a", "b"},
			wantZone: map[string][]string{"": {"c", "a", "b"}},
		},
		{
			name: "three zones of 3, 1 and 2 nodes are interleaved",
			ops: func(nt *nodeTree) {
				nt.addNode(logger(t), zoned("a1", "r", "a"))
				nt.addNode(logger(t), zoned("a2", "r", "a"))
				nt.addNode(logger(t), zoned("b1", "r", "b"))
				nt.addNode(logger(t), zoned("a3", "r", "a"))
				nt.addNode(logger(t), zoned("c1", "r", "c"))
				nt.addNode(logger(t), zoned("c2", "r", "c"))
			},
			want:     []string{"a1", "b1", "c1", "a2", "c2", "a3"},
			wantZone: map[string][]string{"r:\x00:a": {"a1", "a2", "a3"}, "r:\x00:b": {"b1"}, "r:\x00:c": {"c1", "c2"}},
		},
		{
			name: "the same zone in another region is another zone",
			ops: func(nt *nodeTree) {
				nt.addNode(logger(t), zoned("x", "r1", "a"))
				nt.addNode(logger(t), zoned("y", "r1", "a"))
				nt.addNode(logger(t), zoned("z", "r2", "a"))
			},
			want:     []string{"x", "z", "y"},
			wantZone: map[string][]string{"r1:\x00:a": {"x", "y"}, "r2:\x00:a": {"z"}},
		},
		{
			name: "a node added twice is counted once",
			ops: func(nt *nodeTree) {
				nt.addNode(logger(t), zoned("a", "r", "z"))
				nt.addNode(logger(t), zoned("a", "r", "z"))
			},
			want:     []string{"a"},
			wantZone: map[string][]string{"r:\x00:z": {"a"}},
		},
		{
			name: "removing the last node of a zone removes the zone",
			ops: func(nt *nodeTree) {
				nt.addNode(logger(t), zoned("a1", "r", "a"))
				nt.addNode(logger(t), zoned("b1", "r", "b"))
				nt.addNode(logger(t), zoned("a2", "r", "a"))
				if err := nt.removeNode(logger(t), zoned("b1", "r", "b")); err != nil {
					t.Fatal(err)
				}
			},
			want:     []string{"a1", "a2"},
			wantZone: map[string][]string{"r:\x00:a": {"a1", "a2"}},
		},
		{
			name: "removing a node that is not there fails and changes nothing",
			ops: func(nt *nodeTree) {
				nt.addNode(logger(t), zoned("a1", "r", "a"))
				if err := nt.removeNode(logger(t), zoned("a1", "r", "b")); err == nil {
					t.Error("removing a node from the wrong zone succeeded")
				}
			},
			want:     []string{"a1"},
			wantZone: map[string][]string{"r:\x00:a": {"a1"}},
		},
		{
			name: "a node whose zone changed moves to the end of its new zone",
			ops: func(nt *nodeTree) {
				nt.addNode(logger(t), zoned("a1", "r", "a"))
				nt.addNode(logger(t), zoned("a2", "r", "a"))
				nt.addNode(logger(t), zoned("b1", "r", "b"))
				nt.updateNode(logger(t), zoned("a1", "r", "a"), zoned("a1", "r", "b"))
				// A label change that keeps the zone moves nothing.
				nt.updateNode(logger(t), zoned("a2", "r", "a"), zoned("a2", "r", "a"))
			},
			want:     []string{"a2", "b1", "a1"},
			wantZone: map[string][]string{"r:\x00:a": {"a2"}, "r:\x00:b": {"b1", "a1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nt := newNodeTree()
			tt.ops(nt)
			got, err := nt.list()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("list (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantZone, nt.tree); diff != "" {
				t.Errorf("zones (-want, +got):\n%s", diff)
			}
			if nt.numNodes != len(got) {
				t.Errorf("numNodes = %d, list has %d", nt.numNodes, len(got))
			}
		})
	}
}

// TestSnapshotListsZonesInterleaved: the cache's snapshot lists nodes in
// the node tree's order, and a node deleted from a zone leaves the list.
func TestSnapshotListsZonesInterleaved(t *testing.T) {
	c := New()
	for _, n := range []*v1.Node{zoned("a1", "r", "a"), zoned("a2", "r", "a"), zoned("a3", "r", "a"), zoned("b1", "r", "b"), zoned("b2", "r", "b")} {
		c.AddNode(logger(t), n)
	}
	snap := fresh(t, c)
	list := func() []string {
		var out []string
		for _, n := range snap.List() {
			out = append(out, n.Node().Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"a1", "b1", "a2", "b2", "a3"}, list()); diff != "" {
		t.Errorf("list (-want, +got):\n%s", diff)
	}
	c.RemoveNode(logger(t), zoned("b1", "r", "b"))
	must(t, c.UpdateSnapshot(logger(t), snap))
	if diff := cmp.Diff([]string{"a1", "b2", "a2", "a3"}, list()); diff != "" {
		t.Errorf("list after b1 left (-want, +got):\n%s", diff)
	}
}
