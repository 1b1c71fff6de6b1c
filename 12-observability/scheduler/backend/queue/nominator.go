package queue

// This file mirrors pkg/scheduler/backend/queue/nominator.go of
// k8s.io/kubernetes (nominator, addNominatedPodUnlocked, UpdateNominatedPod,
// DeleteNominatedPodIfExists, nominatedPodsForNode) and the PriorityQueue
// methods of scheduling_queue.go that serve it (AddNominatedPod,
// NominatedPodsForNode).

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// nominator remembers which pending pods were promised which node: a
// preemptor gets its node nominated while its victims terminate. The
// scheduler cannot rely on status.nominatedNodeName alone: the patch that
// sets it reaches the informer some time after the decision, and the next
// cycles must see the nomination at once, or a pod behind the preemptor
// would take the room its victims are freeing.
//
// Lock order, as upstream's: PriorityQueue.lock before nLock, never the
// other way round.
type nominator struct {
	nLock sync.RWMutex
	// podLister checks that a pod still exists and has no node before it is
	// nominated.
	podLister listersv1.PodLister
	// nominatedPods lists, per node, the pods nominated to it.
	nominatedPods map[string][]podRef
	// nominatedPodToNode maps a pod's UID to its nominated node.
	nominatedPodToNode map[types.UID]string
}

func newPodNominator(podLister listersv1.PodLister) *nominator {
	return &nominator{
		podLister:          podLister,
		nominatedPods:      map[string][]podRef{},
		nominatedPodToNode: map[types.UID]string{},
	}
}

// addNominatedPodUnlocked records the pod's nomination. nominatingInfo says
// where: ModeOverride names the node (an empty name clears it), and a nil
// nominatingInfo (ModeNoop) keeps what the pod's status says. A pod that is
// gone or already bound is not nominated. The caller holds nLock.
//
//workshop:part 09/1
func (npm *nominator) addNominatedPodUnlocked(logger klog.Logger, pi fwk.PodInfo, nominatingInfo *fwk.NominatingInfo) {
	// A pod is nominated to one node at most.
	npm.deleteUnlocked(pi.GetPod())

	var nodeName string
	if nominatingInfo.Mode() == fwk.ModeOverride {
		nodeName = nominatingInfo.NominatedNodeName
	} else if nominatingInfo.Mode() == fwk.ModeNoop {
		nodeName = pi.GetPod().Status.NominatedNodeName
	}
	if nodeName == "" {
		return
	}
	if npm.podLister != nil {
		updatedPod, err := npm.podLister.Pods(pi.GetPod().Namespace).Get(pi.GetPod().Name)
		if err != nil {
			logger.V(4).Info("Pod doesn't exist in podLister, aborted adding it to the nominator", "pod", klog.KObj(pi.GetPod()))
			return
		}
		if updatedPod.Spec.NodeName != "" {
			logger.V(4).Info("Pod is already scheduled to a node, aborted adding it to the nominator", "pod", klog.KObj(pi.GetPod()), "node", updatedPod.Spec.NodeName)
			return
		}
	}
	npm.nominatedPodToNode[pi.GetPod().UID] = nodeName
	npm.nominatedPods[nodeName] = append(npm.nominatedPods[nodeName], podToRef(pi.GetPod()))
}

// updateNominatedPodUnlocked replaces oldPod's entry with newPod's. An update
// that carries no nomination in either version (one that arrived before
// the patch setting nominatedNodeName did) keeps the nomination the
// scheduler made in memory. The caller holds nLock.
func (npm *nominator) updateNominatedPodUnlocked(logger klog.Logger, oldPod *v1.Pod, newPodInfo fwk.PodInfo) {
	var nominatingInfo *fwk.NominatingInfo
	if oldPod.Status.NominatedNodeName == "" && newPodInfo.GetPod().Status.NominatedNodeName == "" {
		if nnn, ok := npm.nominatedPodToNode[oldPod.UID]; ok {
			nominatingInfo = &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: nnn}
		}
	}
	npm.deleteUnlocked(oldPod)
	npm.addNominatedPodUnlocked(logger, newPodInfo, nominatingInfo)
}

// deleteUnlocked forgets the pod's nomination, if it has one. The caller
// holds nLock.
func (npm *nominator) deleteUnlocked(p *v1.Pod) {
	nnn, ok := npm.nominatedPodToNode[p.UID]
	if !ok {
		return
	}
	npm.nominatedPods[nnn] = slices.DeleteFunc(npm.nominatedPods[nnn], func(np podRef) bool { return np.uid == p.UID })
	if len(npm.nominatedPods[nnn]) == 0 {
		delete(npm.nominatedPods, nnn)
	}
	delete(npm.nominatedPodToNode, p.UID)
}

// nominatedPodsForNode returns a copy of the pods nominated to the node.
func (npm *nominator) nominatedPodsForNode(nodeName string) []podRef {
	npm.nLock.RLock()
	defer npm.nLock.RUnlock()
	return slices.Clone(npm.nominatedPods[nodeName])
}

// podRef is what the nominator keeps of a pod: enough to find it in the
// queue again. Keeping a pointer would keep a stale copy of the pod.
type podRef struct {
	name      string
	namespace string
	uid       types.UID
}

func podToRef(pod *v1.Pod) podRef {
	return podRef{name: pod.Name, namespace: pod.Namespace, uid: pod.UID}
}

func (np podRef) toPod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: np.name, Namespace: np.namespace, UID: np.uid}}
}

// AddNominatedPod records a nomination. The scheduler calls it when a
// pod's preemption chose a node, before it patches the pod's status, so
// the next cycle already sees it.
func (p *PriorityQueue) AddNominatedPod(logger klog.Logger, pi fwk.PodInfo, nominatingInfo *fwk.NominatingInfo) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.nominator.nLock.Lock()
	defer p.nominator.nLock.Unlock()
	p.nominator.addNominatedPodUnlocked(logger, pi, nominatingInfo)
}

// DeleteNominatedPodIfExists forgets a pod's nomination: the pod was
// assumed on a node, or deleted.
func (p *PriorityQueue) DeleteNominatedPodIfExists(pod *v1.Pod) {
	p.nominator.nLock.Lock()
	defer p.nominator.nLock.Unlock()
	p.nominator.deleteUnlocked(pod)
}

// UpdateNominatedPod replaces a pod's nomination entry with its new version.
func (p *PriorityQueue) UpdateNominatedPod(logger klog.Logger, oldPod *v1.Pod, newPodInfo fwk.PodInfo) {
	p.nominator.nLock.Lock()
	defer p.nominator.nLock.Unlock()
	p.nominator.updateNominatedPodUnlocked(logger, oldPod, newPodInfo)
}

// NominatedPodsForNode returns copies of the pods nominated to the node, in
// the version the queue holds (the newest it saw), so that Filter counts
// their current requests. It must not be called under the queue's lock.
func (p *PriorityQueue) NominatedPodsForNode(nodeName string) []fwk.PodInfo {
	// From chapter 10 on, the Filter loop asks for every node on up to 16
	// goroutines, and most nodes have no nominated pod. The nominator's
	// read lock answers those, so the goroutines do not queue up behind
	// the queue's lock (upstream's is an RWMutex, which they share).
	if len(p.nominator.nominatedPodsForNode(nodeName)) == 0 {
		return []fwk.PodInfo{}
	}
	p.lock.Lock()
	defer p.lock.Unlock()
	refs := p.nominator.nominatedPodsForNode(nodeName)
	pods := make([]fwk.PodInfo, 0, len(refs))
	for _, np := range refs {
		pods = append(pods, p.nominatedPodToInfo(np).DeepCopy())
	}
	return pods
}

// nominatedPodToInfo finds the queued version of a nominated pod. A pod in
// flight is in none of the queue's parts: it comes back as a bare pod with
// its name and UID only, as upstream's does. The Filter of the pod being
// scheduled skips its own nomination anyway; but the executor's goroutine,
// asking while another pod is in flight, sees that pod with priority 0 and
// no nominatedNodeName, so it does not clear that pod's nomination. The
// caller holds the lock.
func (p *PriorityQueue) nominatedPodToInfo(np podRef) *framework.PodInfo {
	pod := np.toPod()
	if pInfo, ok := p.getPodUnlocked(pod); ok {
		return pInfo.PodInfo
	}
	return &framework.PodInfo{Pod: pod}
}
