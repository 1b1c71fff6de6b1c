package scheduler

// This file mirrors the assume/forget part of
// pkg/scheduler/backend/cache/cache.go of k8s.io/kubernetes: AssumePod,
// ForgetPod and IsAssumedPod. Upstream's cache also holds
// every node and bound pod, fed by informers; that is chapter 05. Here it
// holds only what the apiserver cannot tell yet: the pods this scheduler has
// placed but not finished binding.

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// cache is shared by the scheduling loop and the binding goroutines.
type cache struct {
	mu sync.Mutex
	// assumed holds pods whose node is chosen but whose Binding has not
	// succeeded yet, with spec.nodeName set to that node. Their requests
	// count on that node in every snapshot, so the next scheduling cycle,
	// which does not wait for the binding, cannot give the same room away.
	assumed map[types.UID]*v1.Pod
	// bound holds pods this scheduler has bound whose departure from the
	// watch has not been seen yet: the watch may still deliver an older
	// update showing no node, and such a pod must not be scheduled again.
	bound sets.Set[types.UID]
}

func newCache() *cache {
	return &cache{assumed: map[types.UID]*v1.Pod{}, bound: sets.New[types.UID]()}
}

// AssumePod records a pod as placed on pod.Spec.NodeName.
func (c *cache) AssumePod(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.assumed[pod.UID] = pod
}

// ForgetPod undoes AssumePod, when the pod was not bound after all.
func (c *cache) ForgetPod(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.assumed, pod.UID)
}

// MarkBound records that the Binding succeeded: from now on the apiserver
// lists the pod on its node, so it need not be assumed. Upstream v1.37.1's
// cache has no such call: a pod stays assumed until the informer delivers
// it bound, which confirms it (AddPod, chapter 05). Without an informer,
// this chapter records the binding itself.
func (c *cache) MarkBound(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.assumed, pod.UID)
	c.bound.Insert(pod.UID)
}

// IsAssumedOrBound says whether the pod is being bound or was bound by this
// scheduler.
func (c *cache) IsAssumedOrBound(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, assumed := c.assumed[uid]
	return assumed || c.bound.Has(uid)
}

// AssumedPods returns the pods being bound.
func (c *cache) AssumedPods() []*v1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	pods := make([]*v1.Pod, 0, len(c.assumed))
	for _, p := range c.assumed {
		pods = append(pods, p)
	}
	return pods
}

// Departed forgets that a pod was bound, once the watch shows it gone.
func (c *cache) Departed(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bound.Delete(uid)
}

// PruneBound keeps only the bound pods that a fresh list of pending pods
// still shows: those are the ones whose Binding finished after the list was
// taken. The others have left the pending pods for good.
func (c *cache) PruneBound(pending sets.Set[types.UID]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bound = c.bound.Intersection(pending)
}
