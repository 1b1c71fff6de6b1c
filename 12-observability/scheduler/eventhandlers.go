package scheduler

// This file mirrors pkg/scheduler/eventhandlers.go of k8s.io/kubernetes:
// addAllEventHandlers routes each informer event to where it belongs. Pods
// without a node that name this scheduler go to the queue; pods with a node
// and all nodes go to the cache; PodGroups go to both, and so do the
// pending members of a pod group (the cache counts them for its group). Every change to the cache is also a
// cluster event, which may move pods out of the queue's unschedulable pool
// (MoveAllToActiveOrBackoffQueue), with the object before and after the
// change for the plugins' queueing hints to look at. Function names are
// upstream's.

import (
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// addAllEventHandlers registers the scheduler's handlers on the informers
// and keeps their registrations, whose HasSynced says when a handler has
// seen every object of the informer's first list.
func addAllEventHandlers(sched *Scheduler, informerFactory informers.SharedInformerFactory) error {
	// One handler sees every pod, so each pod's events reach the cache and
	// the queue in the order the informer delivers them. (Two filtering
	// handlers, one for the queue and one for the cache, would each run
	// in a goroutine of its own, with no order between them.)
	reg, err := informerFactory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sched.addPod,
		UpdateFunc: sched.updatePod,
		DeleteFunc: sched.deletePod,
	})
	if err != nil {
		return err
	}
	sched.registrations = append(sched.registrations, reg)
	reg, err = informerFactory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sched.addNodeToCache,
		UpdateFunc: sched.updateNodeInCache,
		DeleteFunc: sched.deleteNodeFromCache,
	})
	if err != nil {
		return err
	}
	sched.registrations = append(sched.registrations, reg)
	reg, err = informerFactory.Scheduling().V1beta1().PodGroups().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sched.addPodGroup,
		UpdateFunc: sched.updatePodGroup,
		DeleteFunc: sched.deletePodGroup,
	})
	if err != nil {
		return err
	}
	sched.registrations = append(sched.registrations, reg)
	return nil
}

func podGroupOf(obj any) *schedulingv1beta1.PodGroup {
	switch t := obj.(type) {
	case *schedulingv1beta1.PodGroup:
		return t
	case cache.DeletedFinalStateUnknown:
		pg, _ := t.Obj.(*schedulingv1beta1.PodGroup)
		return pg
	}
	return nil
}

// addPodGroup records a new PodGroup in the cache, then in the queue, in
// that order: the queue runs GangScheduling's PreEnqueue on the members
// that waited for it, which reads the group from the cache. Then the
// event may move members that GangScheduling rejected.
//
//workshop:part 11/1
func (sched *Scheduler) addPodGroup(obj any) {
	evt := fwk.ClusterEvent{Resource: fwk.PodGroup, ActionType: fwk.Add}
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), evt.Label())()
	pg := podGroupOf(obj)
	if pg == nil {
		sched.logger.Error(nil, "Cannot convert to *v1beta1.PodGroup", "obj", obj)
		return
	}
	sched.logger.V(3).Info("Add event for pod group", "podGroup", klog.KObj(pg))
	sched.cache.AddPodGroup(pg)
	sched.queue.AddPodGroup(sched.logger, pg)
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, nil, pg, nil)
}

// updatePodGroup records a PodGroup's change: a smaller minCount may let a
// gang through.
func (sched *Scheduler) updatePodGroup(oldObj, newObj any) {
	evt := fwk.ClusterEvent{Resource: fwk.PodGroup, ActionType: fwk.Update}
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), evt.Label())()
	oldPG, newPG := podGroupOf(oldObj), podGroupOf(newObj)
	if oldPG == nil || newPG == nil {
		sched.logger.Error(nil, "Cannot convert to *v1beta1.PodGroup", "oldObj", oldObj, "newObj", newObj)
		return
	}
	if oldPG.ResourceVersion == newPG.ResourceVersion {
		return
	}
	sched.logger.V(4).Info("Update event for pod group", "podGroup", klog.KObj(newPG))
	sched.cache.UpdatePodGroup(sched.logger, oldPG, newPG)
	sched.queue.UpdatePodGroup(sched.logger, newPG)
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, oldPG, newPG, nil)
}

// deletePodGroup forgets a PodGroup: its pending members wait until one of
// that name comes back.
func (sched *Scheduler) deletePodGroup(obj any) {
	evt := fwk.ClusterEvent{Resource: fwk.PodGroup, ActionType: fwk.Delete}
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), evt.Label())()
	pg := podGroupOf(obj)
	if pg == nil {
		sched.logger.Error(nil, "Cannot convert to *v1beta1.PodGroup", "obj", obj)
		return
	}
	sched.logger.V(3).Info("Delete event for pod group", "podGroup", klog.KObj(pg))
	sched.cache.RemovePodGroup(sched.logger, pg)
	sched.queue.DeletePodGroup(sched.logger, pg)
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, pg, nil, nil)
}

func nodeOf(obj any) *v1.Node {
	switch t := obj.(type) {
	case *v1.Node:
		return t
	case cache.DeletedFinalStateUnknown:
		node, _ := t.Obj.(*v1.Node)
		return node
	}
	return nil
}

// addPod routes a new pod: a pending pod of this scheduler to the queue, a
// bound pod (anyone's) to the cache, where it uses its node's room.
//
//workshop:part 05/3
func (sched *Scheduler) addPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		sched.logger.Error(nil, "Cannot convert to *v1.Pod", "obj", obj)
		return
	}
	if sched.responsibleForPod(pod) && !assignedPod(pod) {
		sched.addPodToSchedulingQueue(pod)
	}
	if assignedPod(pod) {
		sched.addAssignedPodToCache(pod)
	}
}

// updatePod routes a pod's change. A pod that gets its node in this update
// was just bound: the cache adds it (which confirms an assumed pod), and
// the queue forgets it, in that order.
//
//workshop:part 05/3
func (sched *Scheduler) updatePod(oldObj, newObj any) {
	oldPod, ok := oldObj.(*v1.Pod)
	if !ok {
		sched.logger.Error(nil, "Cannot convert oldObj to *v1.Pod", "oldObj", oldObj)
		return
	}
	newPod, ok := newObj.(*v1.Pod)
	if !ok {
		sched.logger.Error(nil, "Cannot convert newObj to *v1.Pod", "newObj", newObj)
		return
	}
	switch {
	case assignedPod(oldPod):
		sched.updateAssignedPodInCache(oldPod, newPod)
	case assignedPod(newPod):
		sched.addAssignedPodToCache(newPod)
		if sched.responsibleForPod(oldPod) {
			// Bound by us, the pod is in no queue; bound by someone else,
			// it may be, and must leave it.
			sched.deletePodFromSchedulingQueue(oldPod, true)
		}
	case sched.responsibleForPod(oldPod):
		sched.updatePodInSchedulingQueue(oldPod, newPod)
	}
}

// deletePod routes a pod's deletion. When the informer missed the deletion
// (its watch dropped) it hands over the last state it saw, which may be
// stale: a pod that looked pending may have been bound, or assumed, since.
// So the cache is cleaned up whatever that state says, as upstream does.
//
//workshop:part 05/3
func (sched *Scheduler) deletePod(obj any) {
	switch t := obj.(type) {
	case *v1.Pod:
		if assignedPod(t) {
			sched.deleteAssignedPodFromCache(t)
		} else if sched.responsibleForPod(t) {
			sched.deletePodFromSchedulingQueue(t, false)
		}
	case cache.DeletedFinalStateUnknown:
		pod, ok := t.Obj.(*v1.Pod)
		if !ok {
			sched.logger.Error(nil, "Cannot convert to *v1.Pod", "obj", t.Obj)
			return
		}
		// The queue first: if the pod was assumed, handleAssumedPodDeletion
		// rejects it at Permit, where its gang could still count it.
		// (Upstream cleans the cache first, and so leaves such a pod
		// waiting.) Then the cache, if it holds the pod, whatever the copy
		// says.
		if sched.responsibleForPod(pod) {
			sched.deletePodFromSchedulingQueue(pod, false)
		}
		if _, ok := sched.cache.GetPod(pod); ok {
			sched.deleteAssignedPodFromCache(pod)
		}
	default:
		sched.logger.Error(nil, "Unable to handle object", "obj", obj)
	}
}

// Every handler below observes its duration in
// event_handling_duration_seconds, labelled with its event, as upstream's
// handlers do: a slow handler delays every event behind it.
func (sched *Scheduler) addPodToSchedulingQueue(pod *v1.Pod) {
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), framework.EventUnscheduledPodAdd.Label())()
	sched.logger.V(3).Info("Add event for unscheduled pod", "pod", klog.KObj(pod))
	// The cache counts a pod group's members before the queue runs
	// GangScheduling's PreEnqueue on them.
	sched.cache.AddPodGroupMember(pod)
	sched.queue.Add(sched.logger, pod)
	// A new pending pod may be what a gated pod group needs: the member
	// that brings it to minCount (GangScheduling). Upstream v1.37 sends this
	// event only when its GenericWorkload feature gate is on, as here.
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, framework.EventUnscheduledPodAdd, nil, pod, nil)
}

func (sched *Scheduler) updatePodInSchedulingQueue(oldPod, newPod *v1.Pod) {
	start := time.Now()
	// A resync delivers the same version twice: nothing changed.
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return
	}
	defer metrics.EventHandlingLatency.ObserveSince(start, framework.EventUnscheduledPodUpdate.Label())()
	// And once per event the change is, as upstream's: a label change, a
	// smaller request...
	for _, evt := range framework.PodSchedulingPropertiesChange(newPod, oldPod, false) {
		if evt.Label() != framework.EventUnscheduledPodUpdate.Label() {
			defer metrics.EventHandlingLatency.ObserveSince(start, evt.Label())()
		}
	}
	sched.cache.UpdatePodGroupMember(sched.logger, oldPod, newPod)
	// An assumed pod is being bound; it is in no queue, and must not be
	// queued again. If its deletion has just begun, its room is freed now.
	if sched.cache.IsAssumedPod(newPod) {
		if newPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
			sched.handleAssumedPodDeletion(newPod)
		}
		return
	}
	sched.logger.V(4).Info("Update event for unscheduled pod", "pod", klog.KObj(newPod))
	sched.queue.Update(sched.logger, oldPod, newPod)
}

// deletePodFromSchedulingQueue removes a pod from the queue. inBinding says
// the pod left the queue's view because it was bound, not deleted: then
// there is nothing more to do.
func (sched *Scheduler) deletePodFromSchedulingQueue(pod *v1.Pod, inBinding bool) {
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), framework.EventUnscheduledPodDelete.Label())()
	sched.logger.V(3).Info("Delete event for unscheduled pod", "pod", klog.KObj(pod))
	sched.queue.Delete(sched.logger, pod)
	if inBinding {
		return
	}
	if sched.cache.IsAssumedPod(pod) {
		sched.handleAssumedPodDeletion(pod)
		return
	}
	// Not assumed: the cache holds it only as a pending member of its
	// group, if it is one.
	sched.cache.RemovePodGroupMember(pod)
}

// handleAssumedPodDeletion frees the room of an assumed pod that was
// deleted, at once: pending pods must not wait for its binding cycle to
// fail. A pod waiting at Permit is rejected, and its binding cycle forgets
// it. A pod past Permit (in PreBind or Bind) is removed from the cache
// here; its Binding will fail, the pod being gone. A pod deleted between
// its assume and its Permit is removed here too, and Permit may still
// register it as waiting, as upstream's may: its Binding fails the same.
//
//workshop:part 05/3
func (sched *Scheduler) handleAssumedPodDeletion(pod *v1.Pod) {
	assumedPod, ok := sched.cache.GetPod(pod)
	if !ok {
		// Its binding cycle has forgotten it already.
		return
	}
	// A pod group's member leaves its group now: the binding cycle of a
	// member rejected at Permit only forgets it, which would count it
	// among the group's pending members for ever, and let GangScheduling's
	// PreEnqueue take a gang short of a member for a complete one.
	// (Upstream does not, and keeps such a member.)
	sched.cache.RemovePodGroupMember(assumedPod)
	if !sched.framework.RejectWaitingPod(assumedPod.UID) {
		if err := sched.cache.RemoveAssumedPod(sched.logger, assumedPod); err != nil {
			sched.logger.Error(err, "Scheduler cache RemoveAssumedPod failed", "pod", klog.KObj(assumedPod))
		}
	}
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, framework.EventAssignedPodDelete, assumedPod, nil, nil)
}

func (sched *Scheduler) addAssignedPodToCache(pod *v1.Pod) {
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), framework.EventAssignedPodAdd.Label())()
	sched.logger.V(3).Info("Add event for scheduled pod", "pod", klog.KObj(pod))
	if err := sched.cache.AddPod(sched.logger, pod); err != nil {
		sched.logger.Error(err, "Scheduler cache AddPod failed", "pod", klog.KObj(pod))
	}
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, framework.EventAssignedPodAdd, nil, pod, nil)
}

func (sched *Scheduler) updateAssignedPodInCache(oldPod, newPod *v1.Pod) {
	start := time.Now()
	defer metrics.EventHandlingLatency.ObserveSince(start, framework.EventAssignedPodUpdate.Label())()
	sched.logger.V(4).Info("Update event for scheduled pod", "pod", klog.KObj(oldPod))
	if err := sched.cache.UpdatePod(sched.logger, oldPod, newPod); err != nil {
		sched.logger.Error(err, "Scheduler cache UpdatePod failed", "pod", klog.KObj(oldPod))
	}
	updatingDuration := metrics.SinceInSeconds(start)
	// What changed decides which plugins care: a label change, a smaller
	// request... (AssignedPod events: this pod is not the one waiting).
	// Each event's duration is the cache's update and its own move.
	for _, evt := range framework.PodSchedulingPropertiesChange(newPod, oldPod, false) {
		startMoving := time.Now()
		sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, oldPod, newPod, nil)
		metrics.EventHandlingLatency.WithLabelValues(evt.Label()).Observe(updatingDuration + metrics.SinceInSeconds(startMoving))
	}
}

func (sched *Scheduler) deleteAssignedPodFromCache(pod *v1.Pod) {
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), framework.EventAssignedPodDelete.Label())()
	sched.logger.V(3).Info("Delete event for scheduled pod", "pod", klog.KObj(pod))
	if err := sched.cache.RemovePod(sched.logger, pod); err != nil {
		sched.logger.Error(err, "Scheduler cache RemovePod failed", "pod", klog.KObj(pod))
	}
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, framework.EventAssignedPodDelete, pod, nil, nil)
}

func (sched *Scheduler) addNodeToCache(obj any) {
	evt := fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), evt.Label())()
	node := nodeOf(obj)
	sched.logger.V(3).Info("Add event for node", "node", klog.KObj(node))
	sched.cache.AddNode(sched.logger, node)
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, nil, node, nil)
}

func (sched *Scheduler) updateNodeInCache(oldObj, newObj any) {
	start := time.Now()
	oldNode, newNode := nodeOf(oldObj), nodeOf(newObj)
	sched.logger.V(4).Info("Update event for node", "node", klog.KObj(newNode))
	sched.cache.UpdateNode(sched.logger, oldNode, newNode)
	updatingDuration := metrics.SinceInSeconds(start)
	// A heartbeat changes nothing a plugin looks at and gives no event; a
	// label, a taint or the allocatable resources give one each. Each
	// event's duration is the cache's update and its own move, as
	// upstream's; a heartbeat records none.
	for _, evt := range framework.NodeSchedulingPropertiesChange(newNode, oldNode) {
		startMoving := time.Now()
		sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, oldNode, newNode, nil)
		metrics.EventHandlingLatency.WithLabelValues(evt.Label()).Observe(updatingDuration + metrics.SinceInSeconds(startMoving))
	}
}

func (sched *Scheduler) deleteNodeFromCache(obj any) {
	evt := fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Delete}
	defer metrics.EventHandlingLatency.ObserveSince(time.Now(), evt.Label())()
	node := nodeOf(obj)
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, node, nil, nil)
	sched.cache.RemoveNode(sched.logger, node)
	// Logged once the node is out of the cache (upstream logs just before):
	// every scheduling cycle that starts after this line cannot choose it,
	// which is what make chaos checks.
	sched.logger.V(3).Info("Delete event for node", "node", klog.KObj(node))
}
