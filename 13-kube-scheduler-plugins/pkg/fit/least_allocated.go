package fit

import (
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// leastResourceScorer favours the nodes with the most room left: each
// resource scores the fraction of it that stays free once the pod is
// there, times 100, and the node the weighted average. It mirrors
// least_allocated.go of noderesources, in its integer arithmetic, which
// decides ties.
func leastResourceScorer(resources []config.ResourceSpec) func(requested, allocatable []int64) int64 {
	return func(requested, allocatable []int64) int64 {
		var nodeScore, weightSum int64
		for i := range requested {
			if allocatable[i] == 0 {
				continue
			}
			weight := resources[i].Weight
			nodeScore += leastRequestedScore(requested[i], allocatable[i]) * weight
			weightSum += weight
		}
		if weightSum == 0 {
			return 0
		}
		return nodeScore / weightSum
	}
}

// leastRequestedScore is (capacity - requested) * 100 / capacity, and 0
// for a node asked for more than it has.
//
//workshop:part 13/4
func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * fwk.MaxNodeScore / capacity
}
