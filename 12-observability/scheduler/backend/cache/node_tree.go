package cache

// This file mirrors pkg/scheduler/backend/cache/node_tree.go of
// k8s.io/kubernetes.

import (
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	utilnode "k8s.io/component-helpers/node/topology"
	"k8s.io/klog/v2"
)

// nodeTree holds the node names of each zone, in the order the nodes were
// added. Its list interleaves the zones: the first node of every zone, then
// the second of every zone, and so on. A scheduling cycle that stops after
// the first feasible nodes it finds (numFeasibleNodesToFind) has then
// looked at every zone, not at the nodes of one zone only.
//
// A node's zone is its region and zone labels joined
// (utilnode.GetZoneKey); nodes without them are all in the zone "".
//
// nodeTree is not safe for concurrent use: the Cache's lock guards it.
type nodeTree struct {
	tree     map[string][]string // the node names of each zone
	zones    []string            // the zones, in the order they appeared
	numNodes int
}

func newNodeTree() *nodeTree {
	return &nodeTree{tree: map[string][]string{}}
}

// addNode adds the node to its zone, once.
//
//workshop:part 10/1
func (nt *nodeTree) addNode(logger klog.Logger, n *v1.Node) {
	zone := utilnode.GetZoneKey(n)
	if names, ok := nt.tree[zone]; ok {
		if slices.Contains(names, n.Name) {
			logger.Info("Did not add to the NodeTree because it already exists", "node", klog.KObj(n))
			return
		}
		nt.tree[zone] = append(names, n.Name)
	} else {
		nt.zones = append(nt.zones, zone)
		nt.tree[zone] = []string{n.Name}
	}
	logger.V(2).Info("Added node to NodeTree", "node", klog.KObj(n), "zone", zone)
	nt.numNodes++
}

// removeNode removes the node from its zone, and the zone once it is empty.
//
//workshop:part 10/1
func (nt *nodeTree) removeNode(logger klog.Logger, n *v1.Node) error {
	zone := utilnode.GetZoneKey(n)
	names := nt.tree[zone]
	i := slices.Index(names, n.Name)
	if i < 0 {
		logger.Error(nil, "Did not remove Node in NodeTree because it was not found", "node", klog.KObj(n), "zone", zone)
		return fmt.Errorf("node %q in group %q was not found", n.Name, zone)
	}
	nt.tree[zone] = slices.Delete(names, i, i+1)
	if len(nt.tree[zone]) == 0 {
		delete(nt.tree, zone)
		nt.zones = slices.DeleteFunc(nt.zones, func(z string) bool { return z == zone })
	}
	logger.V(2).Info("Removed node from NodeTree", "node", klog.KObj(n), "zone", zone)
	nt.numNodes--
	return nil
}

// updateNode moves a node whose zone labels changed to its new zone; a
// node's name never changes.
func (nt *nodeTree) updateNode(logger klog.Logger, old, new *v1.Node) {
	if utilnode.GetZoneKey(old) == utilnode.GetZoneKey(new) {
		return
	}
	_ = nt.removeNode(logger, old) // logged; addNode puts it right
	nt.addNode(logger, new)
}

// list returns every node name, the zones interleaved round robin: the
// i-th node of each zone, in zone order, before any zone's (i+1)-th.
//
//workshop:part 10/1
func (nt *nodeTree) list() ([]string, error) {
	names := make([]string, 0, nt.numNodes)
	for i, exhausted := 0, 0; len(names) < nt.numNodes; i++ {
		if exhausted >= len(nt.zones) {
			return names, errors.New("all zones exhausted before reaching count of nodes expected")
		}
		for _, zone := range nt.zones {
			inZone := nt.tree[zone]
			if i >= len(inZone) {
				if i == len(inZone) { // the zone ran out at this round
					exhausted++
				}
				continue
			}
			names = append(names, inZone[i])
		}
	}
	return names, nil
}
