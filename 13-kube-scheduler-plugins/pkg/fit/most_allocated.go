package fit

import (
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// mostResourceScorer favours the nodes already most used, to pack pods
// and leave whole nodes free: each resource scores the fraction of it in
// use once the pod is there, times 100, and the node the weighted average.
// It mirrors most_allocated.go of noderesources.
func mostResourceScorer(resources []config.ResourceSpec) func(requested, allocatable []int64) int64 {
	return func(requested, allocatable []int64) int64 {
		var nodeScore, weightSum int64
		for i := range requested {
			if allocatable[i] == 0 {
				continue
			}
			weight := resources[i].Weight
			nodeScore += mostRequestedScore(requested[i], allocatable[i]) * weight
			weightSum += weight
		}
		if weightSum == 0 {
			return 0
		}
		return nodeScore / weightSum
	}
}

// mostRequestedScore is requested * 100 / capacity. requested can exceed
// capacity, because pods without requests count the defaults: it is capped
// at capacity.
func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	requested = min(requested, capacity)
	return requested * fwk.MaxNodeScore / capacity
}
