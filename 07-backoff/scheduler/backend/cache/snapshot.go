package cache

// This file mirrors pkg/scheduler/backend/cache/snapshot.go of
// k8s.io/kubernetes, for the nodes only.

import (
	"slices"
	"strings"

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
	// nodeInfoList holds the same NodeInfos, sorted by node name, so every
	// cycle lists the nodes in the same order, as the apiserver's List did
	// in the chapters before the cache.
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

// List returns the nodes, sorted by name. The caller must not change the
// slice or its NodeInfos.
func (s *Snapshot) List() []fwk.NodeInfo { return s.nodeInfoList }

// NumNodes returns how many nodes the snapshot lists.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// updateNodeInfoList rebuilds the sorted list from the map, after a node
// was added or removed. Upstream orders it by zone instead, through its
// node tree, which the scoring in this tutorial does not need.
func (s *Snapshot) updateNodeInfoList() {
	s.nodeInfoList = make([]fwk.NodeInfo, 0, len(s.nodeInfoMap))
	for _, n := range s.nodeInfoMap {
		s.nodeInfoList = append(s.nodeInfoList, n)
	}
	slices.SortFunc(s.nodeInfoList, func(a, b fwk.NodeInfo) int { return strings.Compare(a.Node().Name, b.Node().Name) })
}
