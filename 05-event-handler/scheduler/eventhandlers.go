package scheduler

// This file mirrors pkg/scheduler/eventhandlers.go of k8s.io/kubernetes:
// addAllEventHandlers routes each informer event to where it belongs. Pods
// without a node that name this scheduler go to the queue; pods with a node
// and all nodes go to the cache. Function names are upstream's.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
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
	return nil
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
		// The queue first: if the pod was assumed, the cache still says
		// so, and handleAssumedPodDeletion rejects it at Permit. Were the
		// cache cleaned first, the pod would no longer look assumed and
		// would be left waiting at Permit, where the last member of its
		// gang would count it and let the gang be bound one member short.
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

func (sched *Scheduler) addPodToSchedulingQueue(pod *v1.Pod) {
	sched.logger.V(3).Info("Add event for unscheduled pod", "pod", klog.KObj(pod))
	sched.queue.Add(pod)
}

func (sched *Scheduler) updatePodInSchedulingQueue(oldPod, newPod *v1.Pod) {
	// A resync delivers the same version twice: nothing changed.
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return
	}
	// An assumed pod is being bound; it is in no queue, and must not be
	// queued again. If its deletion has just begun, its room is freed now.
	if sched.cache.IsAssumedPod(newPod) {
		if newPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
			sched.handleAssumedPodDeletion(newPod)
		}
		return
	}
	sched.logger.V(4).Info("Update event for unscheduled pod", "pod", klog.KObj(newPod))
	sched.queue.Update(newPod)
}

// deletePodFromSchedulingQueue removes a pod from the queue. inBinding says
// the pod left the queue's view because it was bound, not deleted: then
// there is nothing more to do.
func (sched *Scheduler) deletePodFromSchedulingQueue(pod *v1.Pod, inBinding bool) {
	sched.logger.V(3).Info("Delete event for unscheduled pod", "pod", klog.KObj(pod))
	sched.queue.Delete(pod)
	if inBinding {
		return
	}
	if sched.cache.IsAssumedPod(pod) {
		sched.handleAssumedPodDeletion(pod)
	}
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
	if !sched.framework.RejectWaitingPod(assumedPod.UID) {
		if err := sched.cache.RemoveAssumedPod(sched.logger, assumedPod); err != nil {
			sched.logger.Error(err, "Scheduler cache RemoveAssumedPod failed", "pod", klog.KObj(assumedPod))
		}
	}
}

func (sched *Scheduler) addAssignedPodToCache(pod *v1.Pod) {
	sched.logger.V(3).Info("Add event for scheduled pod", "pod", klog.KObj(pod))
	if err := sched.cache.AddPod(sched.logger, pod); err != nil {
		sched.logger.Error(err, "Scheduler cache AddPod failed", "pod", klog.KObj(pod))
	}
}

func (sched *Scheduler) updateAssignedPodInCache(oldPod, newPod *v1.Pod) {
	sched.logger.V(4).Info("Update event for scheduled pod", "pod", klog.KObj(oldPod))
	if err := sched.cache.UpdatePod(sched.logger, oldPod, newPod); err != nil {
		sched.logger.Error(err, "Scheduler cache UpdatePod failed", "pod", klog.KObj(oldPod))
	}
}

func (sched *Scheduler) deleteAssignedPodFromCache(pod *v1.Pod) {
	sched.logger.V(3).Info("Delete event for scheduled pod", "pod", klog.KObj(pod))
	if err := sched.cache.RemovePod(sched.logger, pod); err != nil {
		sched.logger.Error(err, "Scheduler cache RemovePod failed", "pod", klog.KObj(pod))
	}
}

func (sched *Scheduler) addNodeToCache(obj any) {
	node := nodeOf(obj)
	sched.logger.V(3).Info("Add event for node", "node", klog.KObj(node))
	sched.cache.AddNode(node)
}

func (sched *Scheduler) updateNodeInCache(oldObj, newObj any) {
	oldNode, newNode := nodeOf(oldObj), nodeOf(newObj)
	sched.logger.V(4).Info("Update event for node", "node", klog.KObj(newNode))
	sched.cache.UpdateNode(oldNode, newNode)
}

func (sched *Scheduler) deleteNodeFromCache(obj any) {
	node := nodeOf(obj)
	sched.cache.RemoveNode(node)
	// Logged once the node is out of the cache (upstream logs just before):
	// every scheduling cycle that starts after this line cannot choose it,
	// which is what make chaos checks.
	sched.logger.V(3).Info("Delete event for node", "node", klog.KObj(node))
}
