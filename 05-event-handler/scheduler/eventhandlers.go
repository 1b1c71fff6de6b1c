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
	sched.queue.Add(pod)
}

func (sched *Scheduler) updatePodInSchedulingQueue(_, newObj any) {
	sched.queue.Update(podOf(newObj))
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
}

func (sched *Scheduler) updatePodInCache(oldObj, newObj any) {
	oldPod, newPod := podOf(oldObj), podOf(newObj)
	sched.logger.V(4).Info("Update event for scheduled pod", "pod", klog.KObj(oldPod))
	if err := sched.cache.UpdatePod(sched.logger, oldPod, newPod); err != nil {
		sched.logger.Error(err, "Scheduler cache UpdatePod failed", "pod", klog.KObj(oldPod))
	}
}

func (sched *Scheduler) deletePodFromCache(obj any) {
	pod := podOf(obj)
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
