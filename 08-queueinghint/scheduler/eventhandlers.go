package scheduler

// This file mirrors pkg/scheduler/eventhandlers.go of k8s.io/kubernetes:
// addAllEventHandlers routes each informer event to where it belongs. Pods
// without a node that name this scheduler go to the queue; pods with a node
// and all nodes go to the cache. Every change to the cache is also a
// cluster event, which may move pods out of the queue's unschedulable pool
// (MoveAllToActiveOrBackoffQueue), with the object before and after the
// change for the plugins' queueing hints to look at. Function names are
// upstream's.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// addAllEventHandlers registers the scheduler's handlers on the informers
// and keeps their registrations, whose HasSynced says when a handler has
// seen every object of the informer's first list.
func addAllEventHandlers(sched *Scheduler, informerFactory informers.SharedInformerFactory) error {
	pods := informerFactory.Core().V1().Pods().Informer()
	// Bound pods (anyone's) feed the cache: they use their node's room.
	reg, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := podOf(obj)
			return pod != nil && assignedPod(pod)
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    sched.addPodToCache,
			UpdateFunc: sched.updatePodInCache,
			DeleteFunc: sched.deletePodFromCache,
		},
	})
	if err != nil {
		return err
	}
	sched.registrations = append(sched.registrations, reg)
	// Pending pods for this scheduler feed the queue. When a pod gets its
	// node it stops matching the filter, and the handler sees a Delete.
	reg, err = pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := podOf(obj)
			return pod != nil && !assignedPod(pod) && sched.responsibleForPod(pod)
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    sched.addPodToSchedulingQueue,
			UpdateFunc: sched.updatePodInSchedulingQueue,
			DeleteFunc: sched.deletePodFromSchedulingQueue,
		},
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

// podOf unwraps a pod from an informer event, including the final state of
// a pod whose deletion the informer missed (DeletedFinalStateUnknown).
func podOf(obj any) *v1.Pod {
	switch t := obj.(type) {
	case *v1.Pod:
		return t
	case cache.DeletedFinalStateUnknown:
		pod, _ := t.Obj.(*v1.Pod)
		return pod
	}
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

func (sched *Scheduler) addPodToSchedulingQueue(obj any) {
	pod := podOf(obj)
	sched.logger.V(3).Info("Add event for unscheduled pod", "pod", klog.KObj(pod))
	sched.queue.Add(sched.logger, pod)
	// A new pending pod may be what a waiting pod needs: the member its gang
	// lacks (the Gang plugin). Upstream v1.37 sends this event only when its
	// GenericWorkload feature gate is on, for its own pod groups.
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, framework.EventUnscheduledPodAdd, nil, pod, nil)
}

func (sched *Scheduler) updatePodInSchedulingQueue(oldObj, newObj any) {
	oldPod, newPod := podOf(oldObj), podOf(newObj)
	// A resync delivers the same version twice: nothing changed.
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return
	}
	// An assumed pod is being bound; it is in no queue, and must not be
	// queued again.
	if sched.cache.IsAssumedPod(newPod) {
		return
	}
	sched.logger.V(4).Info("Update event for unscheduled pod", "pod", klog.KObj(newPod))
	sched.queue.Update(sched.logger, oldPod, newPod)
}

func (sched *Scheduler) deletePodFromSchedulingQueue(obj any) {
	pod := podOf(obj)
	sched.logger.V(3).Info("Delete event for unscheduled pod", "pod", klog.KObj(pod))
	sched.queue.Delete(pod)
	// A pod deleted while it waits at Permit must not be bound.
	sched.framework.RejectWaitingPod(pod.UID)
}

func (sched *Scheduler) addPodToCache(obj any) {
	pod := podOf(obj)
	sched.logger.V(3).Info("Add event for scheduled pod", "pod", klog.KObj(pod))
	if err := sched.cache.AddPod(sched.logger, pod); err != nil {
		sched.logger.Error(err, "Scheduler cache AddPod failed", "pod", klog.KObj(pod))
	}
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, framework.EventAssignedPodAdd, nil, pod, nil)
}

func (sched *Scheduler) updatePodInCache(oldObj, newObj any) {
	oldPod, newPod := podOf(oldObj), podOf(newObj)
	sched.logger.V(4).Info("Update event for scheduled pod", "pod", klog.KObj(oldPod))
	if err := sched.cache.UpdatePod(sched.logger, oldPod, newPod); err != nil {
		sched.logger.Error(err, "Scheduler cache UpdatePod failed", "pod", klog.KObj(oldPod))
	}
	// What changed decides which plugins care: a label change, a smaller
	// request... (AssignedPod events: this pod is not the one waiting).
	for _, evt := range framework.PodSchedulingPropertiesChange(newPod, oldPod, false) {
		sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, oldPod, newPod, nil)
	}
}

func (sched *Scheduler) deletePodFromCache(obj any) {
	pod := podOf(obj)
	sched.logger.V(3).Info("Delete event for scheduled pod", "pod", klog.KObj(pod))
	if err := sched.cache.RemovePod(sched.logger, pod); err != nil {
		sched.logger.Error(err, "Scheduler cache RemovePod failed", "pod", klog.KObj(pod))
	}
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, framework.EventAssignedPodDelete, pod, nil, nil)
}

func (sched *Scheduler) addNodeToCache(obj any) {
	node := nodeOf(obj)
	sched.logger.V(3).Info("Add event for node", "node", klog.KObj(node))
	sched.cache.AddNode(node)
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}, nil, node, nil)
}

func (sched *Scheduler) updateNodeInCache(oldObj, newObj any) {
	oldNode, newNode := nodeOf(oldObj), nodeOf(newObj)
	sched.logger.V(4).Info("Update event for node", "node", klog.KObj(newNode))
	sched.cache.UpdateNode(oldNode, newNode)
	// A heartbeat changes nothing a plugin looks at and gives no event; a
	// label, a taint or the allocatable resources give one each.
	for _, evt := range framework.NodeSchedulingPropertiesChange(newNode, oldNode) {
		sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, evt, oldNode, newNode, nil)
	}
}

func (sched *Scheduler) deleteNodeFromCache(obj any) {
	node := nodeOf(obj)
	sched.queue.MoveAllToActiveOrBackoffQueue(sched.logger, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Delete}, node, nil, nil)
	sched.cache.RemoveNode(node)
	// Logged once the node is out of the cache (upstream logs just before):
	// every scheduling cycle that starts after this line cannot choose it,
	// which is what make chaos checks.
	sched.logger.V(3).Info("Delete event for node", "node", klog.KObj(node))
}
