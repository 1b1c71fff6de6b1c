package cache

// This file mirrors pkg/scheduler/backend/cache/podgroupstate.go of
// k8s.io/kubernetes, for plain pod groups (no composite groups): what the
// scheduler knows of each pod group, built from the PodGroup object and
// from the pods that name the group in spec.schedulingGroup. The cache
// keeps a live podGroupState per group; each snapshot keeps a
// podGroupStateSnapshot, which a pod-group cycle changes while it
// simulates the group's placement.

import (
	"maps"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
)

// podGroupGeneration numbers every change of any pod group's state. One
// counter for all groups, as upstream's nextPodGroupGeneration, so that a
// group deleted and created again under the same name never reuses a
// number a snapshot has seen.
var podGroupGeneration atomic.Int64

// podGroupStateData is what the live state and its snapshots share. Each
// member pod is in exactly one of unscheduled, assumed and assigned; the
// PodGroup object may be missing (its pods came first, or it was deleted
// while they remain).
type podGroupStateData struct {
	// generation changes with every change, so UpdateSnapshot copies only
	// the groups that changed since its last call.
	generation int64
	// allPods holds every member pod the scheduler knows of, by UID.
	allPods map[types.UID]*v1.Pod
	// unscheduledPods are the members neither assumed nor bound.
	unscheduledPods sets.Set[types.UID]
	// assumedPods are the members assumed on a node and not yet bound: they
	// passed Reserve and may wait at Permit for the rest of the gang.
	assumedPods map[types.UID]*v1.Pod
	// assignedPods are the members the informer reports bound.
	assignedPods sets.Set[types.UID]
	podGroup     *schedulingv1beta1.PodGroup
}

func newPodGroupStateData() podGroupStateData {
	return podGroupStateData{
		allPods:         map[types.UID]*v1.Pod{},
		unscheduledPods: sets.New[types.UID](),
		assumedPods:     map[types.UID]*v1.Pod{},
		assignedPods:    sets.New[types.UID](),
	}
}

func (d *podGroupStateData) touch() { d.generation = podGroupGeneration.Add(1) }

// addPod records a member, bound or not.
func (d *podGroupStateData) addPod(pod *v1.Pod) {
	d.touch()
	d.allPods[pod.UID] = pod
	if pod.Spec.NodeName == "" {
		d.unscheduledPods.Insert(pod.UID)
		return
	}
	// Bound, possibly by someone else while it was queued or assumed here.
	d.assignedPods.Insert(pod.UID)
	d.unscheduledPods.Delete(pod.UID)
	delete(d.assumedPods, pod.UID)
}

// updatePod records a member's new version; one that got its node moves to
// the assigned ones.
func (d *podGroupStateData) updatePod(oldPod, newPod *v1.Pod) {
	d.touch()
	d.allPods[newPod.UID] = newPod
	if oldPod.Spec.NodeName == "" && newPod.Spec.NodeName != "" {
		d.assignedPods.Insert(newPod.UID)
		d.unscheduledPods.Delete(newPod.UID)
		delete(d.assumedPods, newPod.UID)
	}
}

// deletePod forgets a member, whatever its state.
func (d *podGroupStateData) deletePod(uid types.UID) {
	d.touch()
	delete(d.allPods, uid)
	d.unscheduledPods.Delete(uid)
	delete(d.assumedPods, uid)
	d.assignedPods.Delete(uid)
}

// assumePod moves a member from unscheduled to assumed. A member the state
// does not know (deleted meanwhile) is ignored, as upstream ignores it.
func (d *podGroupStateData) assumePod(pod *v1.Pod) {
	known, ok := d.allPods[pod.UID]
	if !ok {
		return
	}
	d.touch()
	d.unscheduledPods.Delete(pod.UID)
	if known.Spec.NodeName != "" {
		d.assignedPods.Insert(pod.UID)
		return
	}
	d.assumedPods[pod.UID] = pod
}

// forgetPod undoes assumePod.
func (d *podGroupStateData) forgetPod(uid types.UID) {
	known, ok := d.allPods[uid]
	if !ok {
		return
	}
	d.touch()
	delete(d.assumedPods, uid)
	if known.Spec.NodeName != "" {
		d.assignedPods.Insert(uid)
		return
	}
	d.unscheduledPods.Insert(uid)
}

func (d *podGroupStateData) setPodGroup(pg *schedulingv1beta1.PodGroup) {
	d.touch()
	d.podGroup = pg
}

// empty says whether the state can go: no member and no object.
func (d *podGroupStateData) empty() bool { return len(d.allPods) == 0 && d.podGroup == nil }

func (d *podGroupStateData) scheduledPods() []*v1.Pod {
	out := make([]*v1.Pod, 0, len(d.assignedPods)+len(d.assumedPods))
	for uid := range d.assignedPods {
		out = append(out, d.allPods[uid])
	}
	for _, pod := range d.assumedPods {
		out = append(out, pod)
	}
	return out
}

// unscheduledPodsMap returns the unscheduled members by name, the argument
// type of Handle.Activate.
func (d *podGroupStateData) unscheduledPodsMap() map[string]*v1.Pod {
	out := make(map[string]*v1.Pod, len(d.unscheduledPods))
	for uid := range d.unscheduledPods {
		pod := d.allPods[uid]
		out[pod.Name] = pod
	}
	return out
}

// clone copies the sets; the pods and the PodGroup are shared, as nobody
// changes them in place.
func (d *podGroupStateData) clone() podGroupStateData {
	return podGroupStateData{
		generation:      d.generation,
		allPods:         maps.Clone(d.allPods),
		unscheduledPods: d.unscheduledPods.Clone(),
		assumedPods:     maps.Clone(d.assumedPods),
		assignedPods:    d.assignedPods.Clone(),
		podGroup:        d.podGroup,
	}
}

// podGroupState is a group's live state. The cache changes it under its
// own lock; plugins read it through the cache's PodGroupStates lister at
// any time (GangScheduling's PreEnqueue from the event handlers, its
// Permit from the scheduling loop), so it has a lock of its own too.
type podGroupState struct {
	lock sync.RWMutex
	podGroupStateData
}

var _ fwk.PodGroupState = &podGroupState{}

func newPodGroupState() *podGroupState {
	return &podGroupState{podGroupStateData: newPodGroupStateData()}
}

// update changes the state under its lock. The caller holds the cache's.
func (s *podGroupState) update(change func(d *podGroupStateData)) {
	s.lock.Lock()
	defer s.lock.Unlock()
	change(&s.podGroupStateData)
}

// snapshot copies the state for a Snapshot. The caller holds the cache's
// lock, which every writer holds too.
func (s *podGroupState) snapshot() *podGroupStateSnapshot {
	return &podGroupStateSnapshot{podGroupStateData: s.podGroupStateData.clone()}
}

// AllPods returns the UIDs of every member the scheduler knows of.
func (s *podGroupState) AllPods() sets.Set[types.UID] {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return sets.KeySet(s.allPods)
}

// AllPodsCount returns how many members the scheduler knows of: what
// GangScheduling's PreEnqueue compares with minCount.
func (s *podGroupState) AllPodsCount() int {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return len(s.allPods)
}

// UnscheduledPods returns the members neither assumed nor bound, by name.
func (s *podGroupState) UnscheduledPods() map[string]*v1.Pod {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return s.unscheduledPodsMap()
}

// AssumedPods returns the UIDs of the assumed members.
func (s *podGroupState) AssumedPods() sets.Set[types.UID] {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return sets.KeySet(s.assumedPods)
}

// AssignedPods returns the UIDs of the bound members.
func (s *podGroupState) AssignedPods() sets.Set[types.UID] {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return s.assignedPods.Clone()
}

// ScheduledPods returns the members assumed or bound.
func (s *podGroupState) ScheduledPods() []*v1.Pod {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return s.scheduledPods()
}

// ScheduledPodsCount returns how many members are assumed or bound: what
// GangScheduling's Permit compares with minCount.
func (s *podGroupState) ScheduledPodsCount() int {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return len(s.assumedPods) + len(s.assignedPods)
}

// podGroupStateSnapshot is a group's state as one scheduling cycle sees it.
// Only the scheduling loop uses it, so it has no lock.
type podGroupStateSnapshot struct {
	podGroupStateData
}

var _ fwk.PodGroupState = &podGroupStateSnapshot{}

// AllPods returns the UIDs of every member.
func (s *podGroupStateSnapshot) AllPods() sets.Set[types.UID] { return sets.KeySet(s.allPods) }

// AllPodsCount returns how many members there are.
func (s *podGroupStateSnapshot) AllPodsCount() int { return len(s.allPods) }

// UnscheduledPods returns the members neither assumed nor bound, by name.
func (s *podGroupStateSnapshot) UnscheduledPods() map[string]*v1.Pod {
	return s.unscheduledPodsMap()
}

// AssumedPods returns the UIDs of the assumed members.
func (s *podGroupStateSnapshot) AssumedPods() sets.Set[types.UID] {
	return sets.KeySet(s.assumedPods)
}

// AssignedPods returns the UIDs of the bound members.
func (s *podGroupStateSnapshot) AssignedPods() sets.Set[types.UID] { return s.assignedPods.Clone() }

// ScheduledPods returns the members assumed or bound.
func (s *podGroupStateSnapshot) ScheduledPods() []*v1.Pod { return s.scheduledPods() }

// ScheduledPodsCount returns how many members are assumed or bound.
func (s *podGroupStateSnapshot) ScheduledPodsCount() int {
	return len(s.assumedPods) + len(s.assignedPods)
}
