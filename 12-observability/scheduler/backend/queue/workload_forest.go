package queue

// This file mirrors pkg/scheduler/backend/queue/workload_forest.go of
// k8s.io/kubernetes, for plain pod groups: upstream's forest also links
// pod groups to their parent CompositePodGroups (behind the
// CompositePodGroup feature gate), which these chapters leave out, so here
// every pod group is a tree of its own, its own root.

import (
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// workloadForest is the queue's own view of the PodGroup objects. The queue
// decides from it alone whether a member pod can be queued with its group,
// so that its decisions do not depend on when the cache, which the event
// handlers update separately, hears of a PodGroup. It is guarded by the
// PriorityQueue's lock.
type workloadForest struct {
	podGroups map[fwk.EntityKey]*schedulingv1beta1.PodGroup
}

func newWorkloadForest() *workloadForest {
	return &workloadForest{podGroups: map[fwk.EntityKey]*schedulingv1beta1.PodGroup{}}
}

func (wf *workloadForest) addPodGroup(pg *schedulingv1beta1.PodGroup) {
	wf.podGroups[podGroupKey(pg)] = pg
}

func (wf *workloadForest) updatePodGroup(pg *schedulingv1beta1.PodGroup) {
	wf.podGroups[podGroupKey(pg)] = pg
}

func (wf *workloadForest) deletePodGroup(pg *schedulingv1beta1.PodGroup) {
	delete(wf.podGroups, podGroupKey(pg))
}

// getRootLookupInfoForPod returns a lookup key for the queue entity of the
// pod's group, or false if the queue has not seen the group's PodGroup.
func (wf *workloadForest) getRootLookupInfoForPod(pod *v1.Pod) (*framework.QueuedPodGroupInfo, bool) {
	pg, ok := wf.podGroups[podGroupKeyForPod(pod)]
	if !ok {
		return nil, false
	}
	return wf.getRootLookupInfoForPodGroup(pg)
}

// getRootLookupInfoForPodGroup returns a lookup key for the group's queue
// entity: only its type, namespace and name are set.
func (wf *workloadForest) getRootLookupInfoForPodGroup(pg *schedulingv1beta1.PodGroup) (*framework.QueuedPodGroupInfo, bool) {
	if _, ok := wf.podGroups[podGroupKey(pg)]; !ok {
		return nil, false
	}
	return &framework.QueuedPodGroupInfo{PodGroupInfo: &framework.PodGroupInfo{
		Namespace: pg.Namespace,
		Name:      pg.Name,
		Type:      fwk.PodGroupKeyType,
	}}, true
}

// buildQueuedPodGroupInfo returns a new, empty queue entity for the group
// that lookup names, holding the forest's PodGroup object, or nil if the
// forest no longer has it.
func (wf *workloadForest) buildQueuedPodGroupInfo(lookup framework.QueuedEntityInfo) *framework.QueuedPodGroupInfo {
	pg, ok := wf.podGroups[fwk.PodGroupKey(lookup.GetNamespace(), lookup.GetName())]
	if !ok {
		return nil
	}
	return &framework.QueuedPodGroupInfo{
		PodGroupInfo: &framework.PodGroupInfo{
			Namespace: pg.Namespace,
			Name:      pg.Name,
			Type:      fwk.PodGroupKeyType,
			PodGroup:  pg,
		},
		QueuedPodInfos: map[fwk.EntityKey][]*framework.QueuedPodInfo{},
	}
}

// podGroupKeyForPod returns the key of the group the pod names.
func podGroupKeyForPod(pod *v1.Pod) fwk.EntityKey {
	return fwk.PodGroupKey(pod.Namespace, *pod.Spec.SchedulingGroup.PodGroupName)
}

func podGroupKey(pg *schedulingv1beta1.PodGroup) fwk.EntityKey {
	return fwk.PodGroupKey(pg.Namespace, pg.Name)
}

// isPodGroupMember says whether a pod names a pod group, and so is queued
// as part of its group's entity, not on its own.
func isPodGroupMember(pod *v1.Pod) bool {
	return pod.Spec.SchedulingGroup != nil && pod.Spec.SchedulingGroup.PodGroupName != nil
}
