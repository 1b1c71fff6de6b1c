// Package cache is the scheduler's cache of the cluster. It mirrors
// pkg/scheduler/backend/cache/cache.go of k8s.io/kubernetes: a NodeInfo per
// node, kept up to date by the informers' event handlers, plus the pods
// this scheduler has assumed but whose binding the informers have not
// confirmed yet, plus the state of every pod group (podgroupstate.go). Each
// scheduling cycle works on a Snapshot of it, so the cycle sees one
// consistent cluster while events keep arriving.
package cache

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Cache is safe for concurrent use: the event handlers, the scheduling loop
// and the binding goroutines all use it. Its one lock is taken last, after
// any other lock a caller holds.
type Cache struct {
	mu sync.Mutex
	// nodes holds a NodeInfo per node name. A NodeInfo may exist without a
	// node: its pods arrived before the node did, or outlived it.
	nodes map[string]*nodeInfoListItem
	// headNode is the most recently changed NodeInfo. The items form a list
	// from the newest change to the oldest, so UpdateSnapshot finds the
	// NodeInfos changed since its last call without looking at the others.
	headNode *nodeInfoListItem
	// nodeTree holds the names of the nodes a snapshot lists (the
	// NodeInfos that have a node), by zone, and counts them.
	nodeTree *nodeTree
	// pods holds every pod the cache counts: bound ones from the informer,
	// and assumed ones, by UID.
	pods map[types.UID]*v1.Pod
	// assumed holds the UIDs of pods assumed and not yet confirmed by the
	// informer.
	assumed map[types.UID]bool
	// podGroupStates holds what the scheduler knows of each pod group: its
	// PodGroup object and its member pods, unscheduled, assumed or bound.
	podGroupStates map[fwk.EntityKey]*podGroupState
}

// nodeInfoListItem is a NodeInfo in the cache's list of changes. Every
// change to a NodeInfo raises its Generation (the framework's NodeInfo does
// it in AddPod, RemovePod, SetNode and RemoveNode) and moves it to the
// head, so the list is ordered by Generation, newest first.
type nodeInfoListItem struct {
	info       *framework.NodeInfo
	next, prev *nodeInfoListItem
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{nodes: map[string]*nodeInfoListItem{}, nodeTree: newNodeTree(), pods: map[types.UID]*v1.Pod{}, assumed: map[types.UID]bool{}, podGroupStates: map[fwk.EntityKey]*podGroupState{}}
}

// nodeInfo returns the item of the named node, making an empty one if the
// cache has none.
func (c *Cache) nodeInfo(name string) *nodeInfoListItem {
	n, ok := c.nodes[name]
	if !ok {
		n = &nodeInfoListItem{info: framework.NewNodeInfo()}
		c.nodes[name] = n
	}
	return n
}

// moveNodeInfoToHead records that n just changed. Call it after every
// change to n.info.
func (c *Cache) moveNodeInfoToHead(n *nodeInfoListItem) {
	if n == c.headNode {
		return
	}
	c.unlink(n)
	if c.headNode != nil {
		c.headNode.prev = n
	}
	n.next = c.headNode
	c.headNode = n
}

// removeNodeInfoFromList forgets the named NodeInfo: it has neither a node
// nor pods any more.
func (c *Cache) removeNodeInfoFromList(name string) {
	n, ok := c.nodes[name]
	if !ok {
		return
	}
	if n == c.headNode {
		c.headNode = n.next
	}
	c.unlink(n)
	delete(c.nodes, name)
}

func (c *Cache) unlink(n *nodeInfoListItem) {
	if n.prev != nil {
		n.prev.next = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	}
	n.next, n.prev = nil, nil
}

// addPodLocked counts a pod on its node. A pod group member becomes
// assumed in its group's state, or bound.
func (c *Cache) addPodLocked(pod *v1.Pod, assume bool) {
	n := c.nodeInfo(pod.Spec.NodeName)
	n.info.AddPod(pod)
	c.moveNodeInfoToHead(n)
	c.pods[pod.UID] = pod
	if !isPodGroupMember(pod) {
		return
	}
	if assume {
		c.assumePodGroupMemberLocked(pod)
		return
	}
	c.podGroupStateFor(pod).update(func(d *podGroupStateData) { d.addPod(pod) })
}

// removePodLocked frees a pod's room on its node. A pod group member that
// is forgotten goes back to the unscheduled members of its group; one that
// is removed leaves the group.
func (c *Cache) removePodLocked(logger klog.Logger, pod *v1.Pod, forget bool) error {
	if err := c.removePodFromNodeLocked(logger, pod); err != nil {
		return err
	}
	if !isPodGroupMember(pod) {
		return nil
	}
	if forget {
		if s, ok := c.podGroupStates[podGroupKeyForPod(pod)]; ok {
			s.update(func(d *podGroupStateData) { d.forgetPod(pod.UID) })
		}
		return nil
	}
	c.removePodGroupMemberLocked(pod)
	return nil
}

func (c *Cache) removePodFromNodeLocked(logger klog.Logger, pod *v1.Pod) error {
	n, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		return fmt.Errorf("node %q of pod %s is not in the cache", pod.Spec.NodeName, klog.KObj(pod))
	}
	if err := n.info.RemovePod(logger, pod); err != nil {
		return err
	}
	if n.info.Node() == nil && len(n.info.GetPods()) == 0 {
		c.removeNodeInfoFromList(pod.Spec.NodeName)
	} else {
		c.moveNodeInfoToHead(n)
	}
	delete(c.pods, pod.UID)
	return nil
}

// AssumePod counts a pod on pod.Spec.NodeName before it is bound, so the
// next scheduling cycle cannot give the same room away.
//
//workshop:part 05/1
func (c *Cache) AssumePod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.updateMetrics()
	if _, ok := c.pods[pod.UID]; ok {
		return fmt.Errorf("pod %s is in the cache already", klog.KObj(pod))
	}
	c.addPodLocked(pod, true)
	c.assumed[pod.UID] = true
	return nil
}

// ForgetPod undoes AssumePod when the pod was not bound after all. A pod
// that is no longer in the cache was deleted meanwhile and removed
// (RemoveAssumedPod): there is nothing left to undo. A pod group member
// goes back to its group's unscheduled members.
//
//workshop:part 05/1
func (c *Cache) ForgetPod(logger klog.Logger, pod *v1.Pod) error {
	return c.removeAssumedPod(logger, pod, true)
}

// RemoveAssumedPod drops an assumed pod that was deleted while its binding
// cycle ran, so that its node's room is free at once. Its binding cycle
// then finds nothing to forget. Unlike ForgetPod, it takes a pod group
// member out of its group: the pod is gone.
func (c *Cache) RemoveAssumedPod(logger klog.Logger, pod *v1.Pod) error {
	return c.removeAssumedPod(logger, pod, false)
}

func (c *Cache) removeAssumedPod(logger klog.Logger, pod *v1.Pod, forget bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.updateMetrics()
	if _, ok := c.pods[pod.UID]; !ok {
		return nil
	}
	if !c.assumed[pod.UID] {
		return fmt.Errorf("pod %s is not assumed, so it cannot be forgotten", klog.KObj(pod))
	}
	delete(c.assumed, pod.UID)
	return c.removePodLocked(logger, c.pods[pod.UID], forget)
}

// GetPod returns the cache's copy of a pod: for an assumed pod, the one
// with the node it was assumed on.
func (c *Cache) GetPod(pod *v1.Pod) (*v1.Pod, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pods[pod.UID]
	return p, ok
}

// IsAssumedPod says whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumedPod(pod *v1.Pod) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.assumed[pod.UID]
}

// AddPod records a bound pod the informer reports. If it was assumed, this
// confirms it, with the informer's copy replacing the assumed one (on the
// node it was really bound to).
//
//workshop:part 05/1
func (c *Cache) AddPod(logger klog.Logger, pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.updateMetrics()
	if old, ok := c.pods[pod.UID]; ok {
		if !c.assumed[pod.UID] {
			return fmt.Errorf("pod %s was added twice", klog.KObj(pod))
		}
		delete(c.assumed, pod.UID)
		if err := c.removePodLocked(logger, old, false); err != nil {
			return err
		}
	}
	c.addPodLocked(pod, false)
	return nil
}

// UpdatePod replaces a bound pod's old copy with its new one.
//
//workshop:part 05/1
func (c *Cache) UpdatePod(logger klog.Logger, oldPod, newPod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.updateMetrics()
	old, ok := c.pods[oldPod.UID]
	if !ok || c.assumed[oldPod.UID] {
		return fmt.Errorf("pod %s is not in the cache as a bound pod", klog.KObj(oldPod))
	}
	if err := c.removePodLocked(logger, old, false); err != nil {
		return err
	}
	c.addPodLocked(newPod, false)
	return nil
}

// RemovePod forgets a pod that was deleted (or terminated), bound or
// assumed. The pod given may have no node: when the informer missed the
// deletion, it hands over the last state it saw, which may predate the
// binding. The cache's own copy says which node to free.
//
//workshop:part 05/1
func (c *Cache) RemovePod(logger klog.Logger, pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.updateMetrics()
	old, ok := c.pods[pod.UID]
	if !ok {
		return fmt.Errorf("pod %s is not in the cache", klog.KObj(pod))
	}
	// Upstream treats a node that differs from the cached one as a corrupt
	// cache and exits (klog.FlushAndExit); this logs it and goes on.
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != old.Spec.NodeName {
		logger.Error(nil, "Pod was removed from a different node than the cache holds it on", "pod", klog.KObj(pod), "node", pod.Spec.NodeName, "cachedNode", old.Spec.NodeName)
	}
	delete(c.assumed, pod.UID)
	return c.removePodLocked(logger, old, false)
}

// AddNode and UpdateNode record a node as the informer reports it.
func (c *Cache) AddNode(logger klog.Logger, node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.updateMetrics()
	n := c.nodeInfo(node.Name)
	if old := n.info.Node(); old == nil {
		c.nodeTree.addNode(logger, node)
	} else {
		c.nodeTree.updateNode(logger, old, node)
	}
	n.info.SetNode(node)
	c.moveNodeInfoToHead(n)
}

// UpdateNode records a node's new state.
func (c *Cache) UpdateNode(logger klog.Logger, _, newNode *v1.Node) { c.AddNode(logger, newNode) }

// RemoveNode drops a deleted node. Its NodeInfo stays while pods on it do
// (they are deleted by the pod garbage collector, and reported then), but
// no snapshot shows it any more.
func (c *Cache) RemoveNode(logger klog.Logger, node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.updateMetrics()
	n, ok := c.nodes[node.Name]
	if !ok {
		return
	}
	if old := n.info.Node(); old != nil {
		// The tree holds the node under the zone it was added with. An
		// error is logged there.
		_ = c.nodeTree.removeNode(logger, old)
	}
	n.info.RemoveNode()
	if len(n.info.GetPods()) == 0 {
		c.removeNodeInfoFromList(node.Name)
	} else {
		c.moveNodeInfoToHead(n)
	}
}

// updateMetrics sets scheduler_cache_size. The caller holds the lock.
// Upstream sets it once a second from a goroutine; setting it at each
// change costs little and lets a test read it without waiting.
func (c *Cache) updateMetrics() {
	metrics.CacheSize.WithLabelValues("assumed_pods").Set(float64(len(c.assumed)))
	metrics.CacheSize.WithLabelValues("pods").Set(float64(len(c.pods)))
	metrics.CacheSize.WithLabelValues("nodes").Set(float64(len(c.nodes)))
}

// UpdateSnapshot brings snap up to date for one scheduling cycle. Later
// changes to the cache do not show in it until the next call.
//
// A cycle reads every node, but between two cycles only a few change: the
// node the last pod was assumed on, and whatever the informers reported.
// Copying every NodeInfo each cycle costs nearly as much as filtering and
// scoring them on a large cluster, so UpdateSnapshot copies only the
// NodeInfos changed since snap's generation, walking the list of changes
// from its head. The list of nodes is rebuilt, in the node tree's order
// (the zones interleaved), only when a node was added or removed. This is upstream's algorithm, without
// the extra lists its inter-pod affinity and volume plugins need.
//
// First it forgets any pod a pod-group cycle left assumed in snap, as
// upstream's does: see forgetAllAssumedPods.
//
//workshop:part 05/2
func (c *Cache) UpdateSnapshot(logger klog.Logger, snap *Snapshot) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	snap.forgetAllAssumedPods(logger)
	updateAllLists := false
	for n := c.headNode; n != nil && n.info.Generation > snap.generation; n = n.next {
		node := n.info.Node()
		if node == nil {
			continue
		}
		existing, ok := snap.nodeInfoMap[node.Name]
		if !ok {
			updateAllLists = true
			existing = &framework.NodeInfo{}
			snap.nodeInfoMap[node.Name] = existing
		}
		// The list holds existing, so its content is replaced, not the
		// pointer.
		*existing = *n.info.SnapshotConcrete()
	}
	if c.headNode != nil {
		snap.generation = c.headNode.info.Generation
	}
	// Every node the cache has is in the map now, so a map larger than the
	// cache holds nodes deleted since the last call.
	if len(snap.nodeInfoMap) > c.nodeTree.numNodes {
		for name := range snap.nodeInfoMap {
			if n, ok := c.nodes[name]; !ok || n.info.Node() == nil {
				delete(snap.nodeInfoMap, name)
			}
		}
		updateAllLists = true
	}
	if updateAllLists {
		names, err := c.nodeTree.list()
		if err != nil {
			logger.Error(err, "Error occurred while retrieving the list of names of the nodes from node tree")
		}
		snap.updateNodeInfoList(names)
	}
	c.updatePodGroupStatesSnapshot(snap)
	if len(snap.nodeInfoList) != c.nodeTree.numNodes {
		// This would be a bug in the cache. The next cycle starts afresh.
		err := fmt.Errorf("the snapshot lists %d nodes, the cache has %d", len(snap.nodeInfoList), c.nodeTree.numNodes)
		logger.Error(err, "Snapshot is not consistent, rebuilding it")
		*snap = *NewEmptySnapshot()
		return err
	}
	return nil
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

// updatePodGroupStatesSnapshot copies into snap the pod group states that
// changed since its last update, and drops those the cache no longer has,
// as upstream's UpdateSnapshot does. The caller holds the lock.
func (c *Cache) updatePodGroupStatesSnapshot(snap *Snapshot) {
	for key := range snap.podGroupStates {
		if _, ok := c.podGroupStates[key]; !ok {
			delete(snap.podGroupStates, key)
		}
	}
	for key, s := range c.podGroupStates {
		if existing, ok := snap.podGroupStates[key]; ok && existing.generation == s.generation {
			continue
		}
		snap.podGroupStates[key] = s.snapshot()
	}
}

// isPodGroupMember says whether a pod names a pod group.
func isPodGroupMember(pod *v1.Pod) bool {
	return pod.Spec.SchedulingGroup != nil && pod.Spec.SchedulingGroup.PodGroupName != nil
}

// podGroupKeyForPod returns the key of the pod group a member names: the
// group is in the pod's namespace.
func podGroupKeyForPod(pod *v1.Pod) fwk.EntityKey {
	return fwk.PodGroupKey(pod.Namespace, *pod.Spec.SchedulingGroup.PodGroupName)
}

// podGroupStateFor returns the state of the pod's group, making an empty
// one if the cache has none yet: a member may come before its PodGroup.
// The caller holds the lock.
func (c *Cache) podGroupStateFor(pod *v1.Pod) *podGroupState {
	key := podGroupKeyForPod(pod)
	s, ok := c.podGroupStates[key]
	if !ok {
		s = newPodGroupState()
		c.podGroupStates[key] = s
	}
	return s
}

// assumePodGroupMemberLocked marks a member assumed in its group's state.
// A member of a group the cache has no state for (its pending add was not
// seen) joins a new state, as upstream's assumePodGroupMember does; one
// the state no longer knows (deleted meanwhile) is not brought back. The
// caller holds the lock.
func (c *Cache) assumePodGroupMemberLocked(pod *v1.Pod) {
	key := podGroupKeyForPod(pod)
	s, ok := c.podGroupStates[key]
	if !ok {
		s = newPodGroupState()
		s.allPods[pod.UID] = pod
		c.podGroupStates[key] = s
	}
	s.update(func(d *podGroupStateData) { d.assumePod(pod) })
}

// removePodGroupMemberLocked takes a pod out of its group, and forgets the
// group's state once it has neither members nor a PodGroup object. The
// caller holds the lock.
func (c *Cache) removePodGroupMemberLocked(pod *v1.Pod) {
	key := podGroupKeyForPod(pod)
	s, ok := c.podGroupStates[key]
	if !ok {
		return
	}
	s.update(func(d *podGroupStateData) { d.deletePod(pod.UID) })
	if s.empty() {
		delete(c.podGroupStates, key)
	}
}

// AddPodGroupMember records a pending pod of a pod group. Bound and
// assumed members reach the group's state through AddPod and AssumePod;
// the event handlers call this for the pending ones, so that the group
// knows how many members exist (GangScheduling's PreEnqueue waits for
// minCount of them).
func (c *Cache) AddPodGroupMember(pod *v1.Pod) {
	if !isPodGroupMember(pod) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.podGroupStateFor(pod).update(func(d *podGroupStateData) { d.addPod(pod) })
}

// UpdatePodGroupMember records a pending member's new version.
func (c *Cache) UpdatePodGroupMember(logger klog.Logger, oldPod, newPod *v1.Pod) {
	if !isPodGroupMember(newPod) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.podGroupStates[podGroupKeyForPod(newPod)]
	if !ok {
		logger.Error(nil, "Pod group state not found for a member's update; its add event was missed", "pod", klog.KObj(newPod))
		return
	}
	s.update(func(d *podGroupStateData) { d.updatePod(oldPod, newPod) })
}

// RemovePodGroupMember forgets a pending member that was deleted.
func (c *Cache) RemovePodGroupMember(pod *v1.Pod) {
	if !isPodGroupMember(pod) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removePodGroupMemberLocked(pod)
}

// AddPodGroup records a PodGroup object; UpdatePodGroup its new version.
func (c *Cache) AddPodGroup(pg *schedulingv1beta1.PodGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := fwk.PodGroupKey(pg.Namespace, pg.Name)
	s, ok := c.podGroupStates[key]
	if !ok {
		s = newPodGroupState()
		c.podGroupStates[key] = s
	}
	s.update(func(d *podGroupStateData) { d.setPodGroup(pg) })
}

// UpdatePodGroup records a PodGroup's new version.
func (c *Cache) UpdatePodGroup(_ klog.Logger, _, newPG *schedulingv1beta1.PodGroup) {
	c.AddPodGroup(newPG)
}

// RemovePodGroup forgets a deleted PodGroup object. Its members, if any
// remain, keep the state.
func (c *Cache) RemovePodGroup(logger klog.Logger, pg *schedulingv1beta1.PodGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := fwk.PodGroupKey(pg.Namespace, pg.Name)
	s, ok := c.podGroupStates[key]
	if !ok {
		logger.Error(nil, "Pod group state not found for removal", "podGroup", klog.KObj(pg))
		return
	}
	s.update(func(d *podGroupStateData) { d.setPodGroup(nil) })
	if s.empty() {
		delete(c.podGroupStates, key)
	}
}

// The cache is the PodGroupManager that the framework Handle serves to
// GangScheduling: the live state of every pod group, as upstream's cache
// is. Composite pod groups are not in these chapters.
var _ fwk.PodGroupManager = &Cache{}

// PodGroupStates lists the groups' live states.
func (c *Cache) PodGroupStates() fwk.PodGroupStateLister { return podGroupStateLister{c} }

// PodGroups lists the PodGroup objects the cache holds.
func (c *Cache) PodGroups() fwk.PodGroupLister { return podGroupLister{c} }

// CompositePodGroupStates is nil: without the CompositePodGroup feature
// gate, as here, upstream's cache answers nil too.
func (c *Cache) CompositePodGroupStates() fwk.CompositePodGroupStateLister { return nil }

// CompositePodGroups is nil, for the same reason.
func (c *Cache) CompositePodGroups() fwk.CompositePodGroupLister { return nil }

// BuildHierarchySnapshotFromPod serves composite pod groups, which these
// chapters leave out; GangScheduling calls it only with the
// CompositePodGroup feature gate on.
func (c *Cache) BuildHierarchySnapshotFromPod(*v1.Pod) (fwk.PodGroupManager, error) {
	return nil, fmt.Errorf("composite pod groups are not supported")
}

// GetRootKeyForGroup returns the group itself: without composite groups,
// every pod group is its own root.
func (c *Cache) GetRootKeyForGroup(key fwk.EntityKey) (fwk.EntityKey, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.podGroupStates[key]
	if !ok || s.podGroup == nil {
		return fwk.EntityKey{}, false, nil
	}
	return key, true, nil
}

type podGroupStateLister struct{ c *Cache }

// Get returns a group's live state, which changes under the caller: read it
// through its methods, which lock it.
func (l podGroupStateLister) Get(namespace, name string) (fwk.PodGroupState, error) {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	s, ok := l.c.podGroupStates[fwk.PodGroupKey(namespace, name)]
	if !ok {
		return nil, fmt.Errorf("pod group state not found for pod group %s/%s", namespace, name)
	}
	return s, nil
}

type podGroupLister struct{ c *Cache }

// Get returns the PodGroup object, or an error if the cache has none.
func (l podGroupLister) Get(namespace, name string) (*schedulingv1beta1.PodGroup, error) {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	s, ok := l.c.podGroupStates[fwk.PodGroupKey(namespace, name)]
	if !ok || s.podGroup == nil {
		return nil, fmt.Errorf("pod group object not found for pod group %s/%s", namespace, name)
	}
	return s.podGroup, nil
}
