package queue

// This file mirrors pkg/scheduler/backend/queue/pod_group_member_pods.go
// of k8s.io/kubernetes: member pods that the queue holds apart from their
// group's entity, by group and by pod.

import (
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// podGroupMemberPods holds member pods by group key, then pod key. The
// queue keeps two: the members whose PodGroup it has not seen yet
// (incomplete), and the members that arrive, or fail, while their group is
// in its scheduling cycle (pending), which join the group's entity when the
// cycle ends. It is guarded by the PriorityQueue's lock.
type podGroupMemberPods struct {
	pods map[fwk.EntityKey]map[string]*framework.QueuedPodInfo
}

func newPodGroupMemberPods() *podGroupMemberPods {
	return &podGroupMemberPods{pods: map[fwk.EntityKey]map[string]*framework.QueuedPodInfo{}}
}

func (m *podGroupMemberPods) add(pInfo *framework.QueuedPodInfo) {
	key := podGroupKeyForPod(pInfo.Pod)
	if m.pods[key] == nil {
		m.pods[key] = map[string]*framework.QueuedPodInfo{}
	}
	m.pods[key][podKey(pInfo.Pod)] = pInfo
}

func (m *podGroupMemberPods) get(pod *v1.Pod) *framework.QueuedPodInfo {
	return m.pods[podGroupKeyForPod(pod)][podKey(pod)]
}

// update replaces a held pod with its new version; it returns nil if the
// pod is not held.
func (m *podGroupMemberPods) update(newPod *v1.Pod) *framework.QueuedPodInfo {
	pInfo := m.get(newPod)
	if pInfo == nil {
		return nil
	}
	_, _ = pInfo.Update(newPod)
	return pInfo
}

// delete drops a held pod and returns it, or nil.
func (m *podGroupMemberPods) delete(pod *v1.Pod) *framework.QueuedPodInfo {
	key := podGroupKeyForPod(pod)
	pInfo := m.pods[key][podKey(pod)]
	if pInfo == nil {
		return nil
	}
	delete(m.pods[key], podKey(pod))
	if len(m.pods[key]) == 0 {
		delete(m.pods, key)
	}
	return pInfo
}

// clear drops and returns every pod held for one group.
func (m *podGroupMemberPods) clear(namespace, name string) []*framework.QueuedPodInfo {
	key := fwk.PodGroupKey(namespace, name)
	var out []*framework.QueuedPodInfo
	for _, pInfo := range m.pods[key] {
		out = append(out, pInfo)
	}
	delete(m.pods, key)
	return out
}

// list returns every pod held.
func (m *podGroupMemberPods) list() []*v1.Pod {
	var out []*v1.Pod
	for _, group := range m.pods {
		for _, pInfo := range group {
			out = append(out, pInfo.Pod)
		}
	}
	return out
}

// len returns how many pods are held.
func (m *podGroupMemberPods) len() int {
	n := 0
	for _, group := range m.pods {
		n += len(group)
	}
	return n
}
