package fit

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
)

// This file computes what a pod that is not yet on a node asks for. It
// mirrors PodRequests in k8s.io/component-helpers/resource/helpers.go, the
// function the API, the kubelet and kube-scheduler share ("the computation
// is part of the API"), for a pod's spec: its status only matters once it
// runs, and a pod being scheduled does not run yet. The chapter writes it
// out because this is where naive schedulers go wrong: init containers,
// sidecars, pod-level requests and overhead each change the answer.

// requestOptions are the two ways NodeResourcesFit asks for a pod's
// requests: to filter (the pod-level requests count, if the PodLevelResources
// gate is on) and to score (every container without a CPU or memory
// request counts as asking for a default amount).
type requestOptions struct {
	// podLevel uses spec.resources.requests, where set, in place of the
	// containers' sum for CPU, memory and huge pages.
	podLevel bool
	// nonMissing is added to each container that has no request at all
	// for that resource (an explicit 0 stays 0).
	nonMissing v1.ResourceList
}

// podRequests returns what the pod asks for:
//
//  1. its containers run together: their requests add up;
//  2. its init containers run one after another, before the containers:
//     the pod needs at least the largest of them;
//  3. but a sidecar (an init container with restartPolicy Always, KEP-753)
//     starts and keeps running: it adds to the containers, and to every
//     init container that starts after it;
//  4. pod-level requests (spec.resources, KEP-2837) replace the result for
//     the resources they name;
//  5. the RuntimeClass's overhead (spec.overhead, set at admission) comes
//     on top.
//
// For example, init containers [sidecar 600m, job 1000m] and a container of
// 500m ask for max(500m+600m, 600m, 1000m+600m) = 1600m; with the job
// first, max(1100m, 1000m, 600m) = 1100m.
//
//workshop:part 13/2
func podRequests(pod *v1.Pod, opts requestOptions) v1.ResourceList {
	reqs := v1.ResourceList{}
	for i := range pod.Spec.Containers {
		add(reqs, containerRequests(&pod.Spec.Containers[i], opts.nonMissing))
	}
	sidecars := v1.ResourceList{} // the sidecars started so far
	initMax := v1.ResourceList{}  // the most any init container's turn needs
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		r := containerRequests(c, opts.nonMissing)
		var turn v1.ResourceList
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(reqs, r)
			add(sidecars, r)
			turn = sidecars
		} else {
			turn = v1.ResourceList{}
			add(turn, r)
			add(turn, sidecars)
		}
		maxOf(initMax, turn)
	}
	maxOf(reqs, initMax)

	if opts.podLevel && podLevelRequestsSet(pod) {
		for name, q := range pod.Spec.Resources.Requests {
			if podLevelResource(name) {
				reqs[name] = q.DeepCopy()
			}
		}
	}
	if pod.Spec.Overhead != nil {
		add(reqs, pod.Spec.Overhead)
	}
	return reqs
}

// containerRequests is a container's requests, with nonMissing added for
// the resources it does not name (applyNonMissing in helpers.go).
func containerRequests(c *v1.Container, nonMissing v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for name, q := range c.Resources.Requests {
		out[name] = q.DeepCopy()
	}
	for name, q := range nonMissing {
		if _, ok := c.Resources.Requests[name]; !ok {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// podLevelResource says whether pod-level requests may set a resource:
// CPU, memory and huge pages (IsSupportedPodLevelResource).
func podLevelResource(name v1.ResourceName) bool {
	return name == v1.ResourceCPU || name == v1.ResourceMemory || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// podLevelRequestsSet says whether the pod has pod-level requests for a
// resource they may set (IsPodLevelRequestsSet).
func podLevelRequestsSet(pod *v1.Pod) bool {
	if pod.Spec.Resources == nil {
		return false
	}
	for name := range pod.Spec.Resources.Requests {
		if podLevelResource(name) {
			return true
		}
	}
	return false
}

// add adds b to a, resource by resource.
func add(a, b v1.ResourceList) {
	for name, q := range b {
		sum, ok := a[name]
		if !ok {
			a[name] = q.DeepCopy()
			continue
		}
		sum.Add(q)
		a[name] = sum
	}
}

// maxOf raises a to b, resource by resource.
func maxOf(a, b v1.ResourceList) {
	for name, q := range b {
		if cur, ok := a[name]; !ok || q.Cmp(cur) > 0 {
			a[name] = q.DeepCopy()
		}
	}
}

// defaultRequests are what scoring counts for a container that names no
// CPU or no memory request: 100m and 200Mi (DefaultMilliCPURequest and
// DefaultMemoryRequest in pkg/scheduler/util/pod_resources.go). Without
// them a node full of pods that request nothing would look empty.
var defaultRequests = v1.ResourceList{
	v1.ResourceCPU:    *resource.NewMilliQuantity(schedutil.DefaultMilliCPURequest, resource.DecimalSI),
	v1.ResourceMemory: *resource.NewQuantity(schedutil.DefaultMemoryRequest, resource.DecimalSI),
}
