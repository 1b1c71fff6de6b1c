package cache

// This file mirrors pkg/scheduler/backend/cache/snapshot.go of
// k8s.io/kubernetes, for the nodes only.

import (
	"fmt"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Snapshot is what one scheduling cycle sees of the cache: a NodeInfo per
// node, which the cycle may read but not change. The scheduling loop keeps
// one Snapshot and has Cache.UpdateSnapshot refresh it before each cycle,
// which changes the NodeInfos in place. So nothing may keep a NodeInfo of
// it beyond the cycle: a binding goroutine gets the node's name.
type Snapshot struct {
	nodeInfoMap map[string]*framework.NodeInfo
	// nodeInfoList holds the same NodeInfos in the cache's node tree
	// order: the zones interleaved, and in each zone the nodes in the order
	// they were added. A cycle that looks at only some nodes starts where
	// the last one stopped, and sees every zone.
	nodeInfoList []fwk.NodeInfo
	// generation is the cache's newest NodeInfo generation at the last
	// update: every change after it is yet to be copied.
	generation int64
}

// NewEmptySnapshot returns a snapshot with no nodes. Its first
// UpdateSnapshot copies every node.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}}
}

// List returns the nodes, the zones interleaved. The caller must not change the
// slice or its NodeInfos.
func (s *Snapshot) List() []fwk.NodeInfo { return s.nodeInfoList }

// NumNodes returns how many nodes the snapshot lists.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// updateNodeInfoList rebuilds the list from the node tree's names, after a
// node was added or removed, as upstream's updateNodeInfoSnapshotList does.
// A name the map lacks is skipped; the caller's count check catches it.
func (s *Snapshot) updateNodeInfoList(names []string) {
	s.nodeInfoList = make([]fwk.NodeInfo, 0, len(names))
	for _, name := range names {
		if n, ok := s.nodeInfoMap[name]; ok {
			s.nodeInfoList = append(s.nodeInfoList, n)
		}
	}
}

// NodeInfos serves the snapshot's nodes as upstream's NodeInfoLister, which
// DefaultPreemption reads: List for the candidates, Get for a nominated
// node.
func (s *Snapshot) NodeInfos() fwk.NodeInfoLister { return nodeInfoLister{s} }

type nodeInfoLister struct{ s *Snapshot }

// List returns every node, the zones interleaved.
func (l nodeInfoLister) List() ([]fwk.NodeInfo, error) { return l.s.nodeInfoList, nil }

// Get returns one node, or an error if the snapshot has no node of that
// name.
func (l nodeInfoLister) Get(nodeName string) (fwk.NodeInfo, error) {
	if n, ok := l.s.nodeInfoMap[nodeName]; ok && n.Node() != nil {
		return n, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", nodeName)
}

// HavePodsWithAffinityList returns the nodes with pods that have affinity
// terms.
func (l nodeInfoLister) HavePodsWithAffinityList() ([]fwk.NodeInfo, error) {
	return l.filter(func(n fwk.NodeInfo) bool { return len(n.GetPodsWithAffinity()) > 0 }), nil
}

// HavePodsWithRequiredAntiAffinityList returns the nodes with pods that have
// required anti-affinity terms.
func (l nodeInfoLister) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) {
	return l.filter(func(n fwk.NodeInfo) bool { return len(n.GetPodsWithRequiredAntiAffinity()) > 0 }), nil
}

// HavePodsWithRequiredNonHostScopedAntiAffinityList is
// HavePodsWithRequiredAntiAffinityList: this chapter does not tell the
// topology keys apart.
func (l nodeInfoLister) HavePodsWithRequiredNonHostScopedAntiAffinityList() ([]fwk.NodeInfo, error) {
	return l.HavePodsWithRequiredAntiAffinityList()
}

func (l nodeInfoLister) filter(keep func(fwk.NodeInfo) bool) []fwk.NodeInfo {
	var out []fwk.NodeInfo
	for _, n := range l.s.nodeInfoList {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}
