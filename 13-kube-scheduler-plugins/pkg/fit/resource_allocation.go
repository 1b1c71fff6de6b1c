package fit

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
)

// resourceAllocationScorer scores a node by the resources of a scoring
// strategy, each with its weight. It mirrors resource_allocation.go of
// noderesources, for Fit's use of it.
type resourceAllocationScorer struct {
	// Name is the strategy's, for the log.
	Name      string
	scorer    func(requested, allocatable []int64) int64
	resources []config.ResourceSpec
}

// newScorer builds the strategy's scorer. Fit has two of upstream's
// three; the third, RequestedToCapacityRatio, scores by a piecewise
// linear function of the fraction used.
func newScorer(strategy *config.ScoringStrategy) (*resourceAllocationScorer, error) {
	if strategy == nil {
		return nil, fmt.Errorf("scoring strategy not specified")
	}
	r := &resourceAllocationScorer{Name: string(strategy.Type), resources: strategy.Resources}
	switch strategy.Type {
	case config.LeastAllocated:
		r.scorer = leastResourceScorer(strategy.Resources)
	case config.MostAllocated:
		r.scorer = mostResourceScorer(strategy.Resources)
	default:
		return nil, fmt.Errorf("scoring strategy %s is not supported by %s (it has LeastAllocated and MostAllocated; NodeResourcesFit has all three)", strategy.Type, Name)
	}
	return r, nil
}

// podRequestList is the pod's request of each of the strategy's
// resources, as NodeResourcesFit scores them in v1.37.1:
//   - a container that names no CPU or memory request counts as asking
//     for 100m and 200Mi. The node's NonZeroRequested counts its pods the
//     same way (PodInfo.CalculateResource in pkg/scheduler/framework/types.go),
//     so a node full of pods without requests does not look empty;
//   - pod-level requests are left out: NewFit never passes the
//     PodLevelResources gate to the scorer it embeds, so its scores use the
//     containers' sum even where its Filter uses the pod-level requests.
//     On the node's side, NonZeroRequested does count the pod-level
//     requests of the pods already there: the two sides disagree
//     (NodeResourcesBalancedAllocation passes the gate, and agrees).
//
// Both make the CPU a node seems to have in use differ from the sum
// kubectl describe node shows, which is what kubernetes/kubernetes#130445
// reports. Fit keeps the behaviour: it is what v1.37.1 does.
//
//workshop:part 13/4
func (r *resourceAllocationScorer) podRequestList(pod *v1.Pod) []int64 {
	reqs := podRequests(pod, requestOptions{podLevel: false, nonMissing: defaultRequests})
	out := make([]int64, len(r.resources))
	for i, res := range r.resources {
		q := reqs[v1.ResourceName(res.Name)]
		if res.Name == string(v1.ResourceCPU) {
			out[i] = q.MilliValue()
		} else {
			out[i] = q.Value()
		}
	}
	return out
}

// score is the strategy's score of the node, from each resource's
// allocatable and what the node's pods and this pod request.
func (r *resourceAllocationScorer) score(ctx context.Context, pod *v1.Pod, nodeInfo fwk.NodeInfo, podRequests []int64) (int64, *fwk.Status) {
	if len(r.resources) == 0 {
		return 0, fwk.NewStatus(fwk.Error, "resources not found")
	}
	// One request per scored resource, or podRequestList has a bug: an
	// error status then, where upstream's would index past the end and
	// panic (the workshop's stub of podRequestList returns nil).
	if len(podRequests) != len(r.resources) {
		return 0, fwk.AsStatus(fmt.Errorf("%d pod requests for %d scored resources", len(podRequests), len(r.resources)))
	}
	requested := make([]int64, len(r.resources))
	allocatable := make([]int64, len(r.resources))
	for i, res := range r.resources {
		name := v1.ResourceName(res.Name)
		// An extended resource the pod does not ask for is not scored.
		if podRequests[i] == 0 && schedutil.IsScalarResourceName(name) {
			continue
		}
		alloc, used := allocatableAndRequested(nodeInfo, name)
		if alloc == 0 {
			continue
		}
		allocatable[i] = alloc
		requested[i] = used + podRequests[i]
	}
	score := r.scorer(requested, allocatable)
	if loggerV := klog.FromContext(ctx).V(10); loggerV.Enabled() {
		loggerV.Info("Listed internal info for allocatable resources, requested resources and score", "pod", klog.KObj(pod), "node", klog.KObj(nodeInfo.Node()),
			"resourceAllocationScorer", r.Name, "allocatableResource", allocatable, "requestedResource", requested, "resourceScore", score)
	}
	return score, nil
}

// allocatableAndRequested is the node's allocatable of a resource and what
// its pods request of it. For CPU and memory that is NonZeroRequested,
// where a pod without a request counts the defaults, as podRequestList
// counts this pod.
func allocatableAndRequested(nodeInfo fwk.NodeInfo, name v1.ResourceName) (int64, int64) {
	nonZero := nodeInfo.GetNonZeroRequested()
	switch name {
	case v1.ResourceCPU:
		return nodeInfo.GetAllocatable().GetMilliCPU(), nonZero.GetMilliCPU()
	case v1.ResourceMemory:
		return nodeInfo.GetAllocatable().GetMemory(), nonZero.GetMemory()
	case v1.ResourceEphemeralStorage:
		return nodeInfo.GetAllocatable().GetEphemeralStorage(), nodeInfo.GetRequested().GetEphemeralStorage()
	}
	if alloc, ok := nodeInfo.GetAllocatable().GetScalarResources()[name]; ok {
		return alloc, nodeInfo.GetRequested().GetScalarResources()[name]
	}
	return 0, 0
}
