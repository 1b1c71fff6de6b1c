package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podHistory records, from a watch on one namespace, what a List at the end
// cannot show: every node each pod was nominated to, however briefly
// (status.nominatedNodeName may be cleared once the pod is bound), and every
// pod that was deleted, as it was last seen (a preemption victim carries the
// DisruptionTarget condition the scheduler set before deleting it).
type podHistory struct {
	mu        sync.Mutex
	nominated map[string][]string
	deleted   map[string]*v1.Pod
	// disrupted holds the pods seen, at any moment, with the
	// DisruptionTarget condition that preemption sets (reason
	// PreemptionByScheduler).
	disrupted map[string]bool
	// tombstones holds the pods whose deletion the watch missed (it
	// relisted, e.g. across an apiserver restart): their last state is
	// unknown.
	tombstones map[string]bool
	stop       context.CancelFunc
}

// watchPods starts recording the pods of namespace ns. It returns once the
// watch has listed the namespace, so nothing created afterwards is missed.
func watchPods(ctx context.Context, client kubernetes.Interface, ns string) (*podHistory, error) {
	ctx, cancel := context.WithCancel(ctx)
	h := &podHistory{
		nominated: map[string][]string{},
		deleted:   map[string]*v1.Pod{}, disrupted: map[string]bool{}, tombstones: map[string]bool{}, stop: cancel,
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	informer := factory.Core().V1().Pods().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.seen(obj) },
		UpdateFunc: func(_, obj any) { h.seen(obj) },
		DeleteFunc: h.gone,
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	syncCtx, done := context.WithTimeout(ctx, 30*time.Second)
	defer done()
	for _, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			cancel()
			factory.Shutdown()
			return nil, fmt.Errorf("watching the pods of %s: the informer did not sync within 30s", ns)
		}
	}
	h.stop = func() { cancel(); factory.Shutdown() }
	return h, nil
}

func (h *podHistory) seen(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if hasCondition(pod, v1.DisruptionTarget, v1.PodReasonPreemptionByScheduler) {
		h.disrupted[pod.Name] = true
	}
	if pod.Status.NominatedNodeName == "" {
		return
	}
	if !slices.Contains(h.nominated[pod.Name], pod.Status.NominatedNodeName) {
		h.nominated[pod.Name] = append(h.nominated[pod.Name], pod.Status.NominatedNodeName)
	}
}

func (h *podHistory) gone(obj any) {
	tombstone := false
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, tombstone = t.Obj, true
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	h.seen(pod)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tombstones[pod.Name] = tombstone
	h.deleted[pod.Name] = pod
}

// Nominations returns, for each pod ever nominated, the nodes in the order
// they were first seen.
func (h *podHistory) Nominations() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]string{}
	for pod, nodes := range h.nominated {
		out[pod] = slices.Clone(nodes)
	}
	return out
}

// NominatedTo says whether pod was ever nominated to node.
func (h *podHistory) NominatedTo(pod, node string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.nominated[pod], node)
}

// Deleted returns the deleted pods, by name, as last seen.
func (h *podHistory) Deleted() map[string]*v1.Pod {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.deleted)
}

// Disrupted says whether pod was seen with the DisruptionTarget condition
// of a preemption.
func (h *podHistory) Disrupted(pod string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.disrupted[pod]
}

// Missed says whether the watch missed the pod's deletion, and with it
// perhaps its last states.
func (h *podHistory) Missed(pod string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tombstones[pod]
}

// Stop ends the watch.
func (h *podHistory) Stop() { h.stop() }
