// Package cache is the scheduler's cache of the cluster. It mirrors
// pkg/scheduler/backend/cache/cache.go of k8s.io/kubernetes: a NodeInfo per
// node, kept up to date by the informers' event handlers, plus the pods
// this scheduler has assumed but whose binding the informers have not
// confirmed yet. Each scheduling cycle works on a Snapshot of it, so the
// cycle sees one consistent cluster while events keep arriving.
package cache

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Cache is safe for concurrent use: the event handlers, the scheduling loop
// and the binding goroutines all use it. Its one lock is taken last, after
// any other lock a caller holds.
type Cache struct {
	mu sync.Mutex
	// nodes holds a NodeInfo per node name. A NodeInfo may exist without a
	// node: its pods arrived before the node did, or outlived it.
	nodes map[string]*framework.NodeInfo
	// pods holds every pod the cache counts: bound ones from the informer,
	// and assumed ones, by UID.
	pods map[types.UID]*v1.Pod
	// assumed holds the UIDs of pods assumed and not yet confirmed by the
	// informer.
	assumed map[types.UID]bool
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{nodes: map[string]*framework.NodeInfo{}, pods: map[types.UID]*v1.Pod{}, assumed: map[types.UID]bool{}}
}

func (c *Cache) nodeInfo(name string) *framework.NodeInfo {
	n, ok := c.nodes[name]
	if !ok {
		n = framework.NewNodeInfo()
		c.nodes[name] = n
	}
	return n
}

func (c *Cache) addPodLocked(pod *v1.Pod) {
	c.nodeInfo(pod.Spec.NodeName).AddPod(pod)
	c.pods[pod.UID] = pod
}

func (c *Cache) removePodLocked(logger klog.Logger, pod *v1.Pod) error {
	n, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		return fmt.Errorf("node %q of pod %s is not in the cache", pod.Spec.NodeName, klog.KObj(pod))
	}
	if err := n.RemovePod(logger, pod); err != nil {
		return err
	}
	if n.Node() == nil && len(n.GetPods()) == 0 {
		delete(c.nodes, pod.Spec.NodeName)
	}
	delete(c.pods, pod.UID)
	return nil
}

// AssumePod counts a pod on pod.Spec.NodeName before it is bound, so the
// next scheduling cycle cannot give the same room away.
func (c *Cache) AssumePod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[pod.UID]; ok {
		return fmt.Errorf("pod %s is in the cache already", klog.KObj(pod))
	}
	c.addPodLocked(pod)
	c.assumed[pod.UID] = true
	return nil
}

// ForgetPod undoes AssumePod when the pod was not bound after all.
func (c *Cache) ForgetPod(logger klog.Logger, pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.assumed[pod.UID] {
		return fmt.Errorf("pod %s is not assumed", klog.KObj(pod))
	}
	delete(c.assumed, pod.UID)
	return c.removePodLocked(logger, c.pods[pod.UID])
}

// FinishBinding records that the Binding succeeded. The pod stays assumed
// until the informer reports it bound (AddPod); upstream would also expire
// it if that never came.
func (c *Cache) FinishBinding(*v1.Pod) {}

// IsAssumedPod says whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumedPod(pod *v1.Pod) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.assumed[pod.UID]
}

// AddPod records a bound pod the informer reports. If it was assumed, this
// confirms it, with the informer's copy replacing the assumed one (on the
// node it was really bound to).
func (c *Cache) AddPod(logger klog.Logger, pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.pods[pod.UID]; ok {
		if !c.assumed[pod.UID] {
			return fmt.Errorf("pod %s was added twice", klog.KObj(pod))
		}
		delete(c.assumed, pod.UID)
		if err := c.removePodLocked(logger, old); err != nil {
			return err
		}
	}
	c.addPodLocked(pod)
	return nil
}

// UpdatePod replaces a bound pod's old copy with its new one.
func (c *Cache) UpdatePod(logger klog.Logger, oldPod, newPod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.pods[oldPod.UID]
	if !ok || c.assumed[oldPod.UID] {
		return fmt.Errorf("pod %s is not in the cache as a bound pod", klog.KObj(oldPod))
	}
	if err := c.removePodLocked(logger, old); err != nil {
		return err
	}
	c.addPodLocked(newPod)
	return nil
}

// RemovePod forgets a bound pod that was deleted (or terminated).
func (c *Cache) RemovePod(logger klog.Logger, pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.pods[pod.UID]
	if !ok {
		return fmt.Errorf("pod %s is not in the cache", klog.KObj(pod))
	}
	delete(c.assumed, pod.UID)
	return c.removePodLocked(logger, old)
}

// AddNode and UpdateNode record a node as the informer reports it.
func (c *Cache) AddNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodeInfo(node.Name).SetNode(node)
}

// UpdateNode records a node's new state.
func (c *Cache) UpdateNode(_, newNode *v1.Node) { c.AddNode(newNode) }

// RemoveNode drops a deleted node. Its NodeInfo stays while pods on it do
// (they are deleted by the pod garbage collector, and reported then), but
// no snapshot shows it any more.
func (c *Cache) RemoveNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.nodes[node.Name]
	if !ok {
		return
	}
	n.RemoveNode()
	if len(n.GetPods()) == 0 {
		delete(c.nodes, node.Name)
	}
}

// Snapshot returns a copy of every node's NodeInfo, sorted by name, for one
// scheduling cycle. Later changes to the cache do not show in it. Upstream
// updates one snapshot incrementally, by NodeInfo generation; copying them
// all is simpler and fast enough for the clusters of this tutorial.
func (c *Cache) Snapshot() []fwk.NodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]fwk.NodeInfo, 0, len(c.nodes))
	for _, n := range c.nodes {
		if n.Node() != nil {
			out = append(out, n.Snapshot())
		}
	}
	sortByName(out)
	return out
}

// Dump returns the pods the cache holds and which of them are assumed, for
// tests.
func (c *Cache) Dump() (pods []types.UID, assumed []types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid := range c.pods {
		pods = append(pods, uid)
	}
	for uid := range c.assumed {
		assumed = append(assumed, uid)
	}
	return pods, assumed
}

// sortByName orders NodeInfos by node name, so every snapshot lists the
// nodes in the same order, as the apiserver's List did in earlier chapters.
func sortByName(nodes []fwk.NodeInfo) {
	slices.SortFunc(nodes, func(a, b fwk.NodeInfo) int { return strings.Compare(a.Node().Name, b.Node().Name) })
}
