package cache

// This file mirrors pkg/scheduler/backend/cache/snapshot.go of
// k8s.io/kubernetes, for the nodes and the pod groups: their listers, and
// the AssumePod and ForgetPod with which a pod-group cycle places members
// in the snapshot alone.

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/klog/v2"
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
	// podGroupStates holds a copy of each pod group's state.
	podGroupStates map[fwk.EntityKey]*podGroupStateSnapshot
	// assumedPods are the pods AssumePod placed, the last one last:
	// ForgetPod must undo them in the reverse order.
	assumedPods []*v1.Pod
}

// NewEmptySnapshot returns a snapshot with no nodes. Its first
// UpdateSnapshot copies every node.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}, podGroupStates: map[fwk.EntityKey]*podGroupStateSnapshot{}}
}

// The snapshot is the SharedLister that the framework Handle serves
// (GangScheduling's Permit reads the PodGroup from it).
var _ fwk.SharedLister = &Snapshot{}

// AssumePod places a pod on pod.Spec.NodeName in this snapshot only, not in
// the cache: a pod-group cycle simulates its members' placement one after
// the other, each seeing the ones placed before it, and then keeps or
// undoes them all. The NodeInfo keeps its generation, so that the next
// UpdateSnapshot still knows which nodes the cache changed; the caller
// undoes every AssumePod with ForgetPod, the last first, before then.
// It mirrors upstream's Snapshot.AssumePod.
//
//workshop:part 11/2
func (s *Snapshot) AssumePod(podInfo *framework.PodInfo) error {
	pod := podInfo.Pod
	nodeInfo, ok := s.nodeInfoMap[pod.Spec.NodeName]
	if !ok {
		return fmt.Errorf("node %q of pod %s is not in the snapshot", pod.Spec.NodeName, klog.KObj(pod))
	}
	generation := nodeInfo.Generation
	nodeInfo.AddPodInfo(podInfo)
	nodeInfo.Generation = generation
	s.assumedPods = append(s.assumedPods, pod)
	if isPodGroupMember(pod) {
		if pgs, ok := s.podGroupStates[podGroupKeyForPod(pod)]; ok {
			pgs.assumePod(pod)
		}
	}
	return nil
}

// ForgetPod undoes the last AssumePod. Undoing them in any other order is a
// bug of the caller, and an error.
//
//workshop:part 11/2
func (s *Snapshot) ForgetPod(logger klog.Logger, pod *v1.Pod) error {
	n := len(s.assumedPods)
	if n == 0 || s.assumedPods[n-1].UID != pod.UID {
		return fmt.Errorf("pod %s is not the last pod assumed in the snapshot", klog.KObj(pod))
	}
	assumed := s.assumedPods[n-1]
	s.assumedPods = s.assumedPods[:n-1]
	nodeInfo, ok := s.nodeInfoMap[assumed.Spec.NodeName]
	if !ok {
		return fmt.Errorf("node %q of pod %s is not in the snapshot", assumed.Spec.NodeName, klog.KObj(pod))
	}
	generation := nodeInfo.Generation
	if err := nodeInfo.RemovePod(logger, assumed); err != nil {
		return err
	}
	nodeInfo.Generation = generation
	if isPodGroupMember(assumed) {
		if pgs, ok := s.podGroupStates[podGroupKeyForPod(assumed)]; ok {
			pgs.forgetPod(assumed.UID)
		}
	}
	return nil
}

// forgetAllAssumedPods forgets the pods a cycle assumed and did not forget,
// the last first. Cache.UpdateSnapshot calls it before it copies any
// NodeInfo, as upstream's does (Snapshot.forgetAllAssumedPods, called in
// Cache.UpdateSnapshot before the copy, backend/cache): UpdateSnapshot
// copies only the NodeInfos the cache changed, so a member left assumed on
// another node would stay there, and every later cycle would see room
// taken by a pod that was never bound. A leftover is a bug of the pod-group cycle, which
// undoes its simulation itself, so it is logged as an error; this is a
// safety net, not the way the simulation is undone.
func (s *Snapshot) forgetAllAssumedPods(logger klog.Logger) {
	if len(s.assumedPods) == 0 {
		return
	}
	logger.Error(nil, "Found assumed pods in the snapshot that were not forgotten", "assumedPodsCount", len(s.assumedPods))
	for len(s.assumedPods) > 0 {
		pod := s.assumedPods[len(s.assumedPods)-1]
		if err := s.ForgetPod(logger, pod); err != nil {
			// ForgetPod has taken the pod off the list already.
			logger.Error(err, "Failed to forget assumed pod", "pod", klog.KObj(pod))
		}
	}
}

// PodGroupStates lists the pod groups' states as this cycle sees them.
func (s *Snapshot) PodGroupStates() fwk.PodGroupStateLister { return snapshotPodGroupStateLister{s} }

// PodGroups lists the PodGroup objects as this cycle sees them.
func (s *Snapshot) PodGroups() fwk.PodGroupLister { return snapshotPodGroupLister{s} }

// CompositePodGroupStates is nil: these chapters have no composite pod
// groups (upstream's snapshot has them behind the CompositePodGroup gate).
func (s *Snapshot) CompositePodGroupStates() fwk.CompositePodGroupStateLister { return nil }

// CompositePodGroups is nil, for the same reason.
func (s *Snapshot) CompositePodGroups() fwk.CompositePodGroupLister { return nil }

// StorageInfos answers from the NodeInfos' counts of pods per claim. No
// plugin of these chapters asks; the SharedLister interface requires it.
func (s *Snapshot) StorageInfos() fwk.StorageInfoLister { return storageInfoLister{s} }

type snapshotPodGroupStateLister struct{ s *Snapshot }

func (l snapshotPodGroupStateLister) Get(namespace, name string) (fwk.PodGroupState, error) {
	pgs, ok := l.s.podGroupStates[fwk.PodGroupKey(namespace, name)]
	if !ok {
		return nil, fmt.Errorf("pod group state not found for pod group %s/%s", namespace, name)
	}
	return pgs, nil
}

type snapshotPodGroupLister struct{ s *Snapshot }

func (l snapshotPodGroupLister) Get(namespace, name string) (*schedulingv1beta1.PodGroup, error) {
	pgs, ok := l.s.podGroupStates[fwk.PodGroupKey(namespace, name)]
	if !ok || pgs.podGroup == nil {
		return nil, fmt.Errorf("pod group object not found for pod group %s/%s", namespace, name)
	}
	return pgs.podGroup, nil
}

type storageInfoLister struct{ s *Snapshot }

func (l storageInfoLister) IsPVCUsedByPods(key string) bool {
	for _, n := range l.s.nodeInfoList {
		if n.GetPVCRefCounts()[key] > 0 {
			return true
		}
	}
	return false
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
