package preemption

// This file mirrors pkg/scheduler/framework/preemption/util.go of
// k8s.io/kubernetes (FilterVictimsWithPDBViolation,
// PodTerminatingByPreemption), for victims that are single pods.

import (
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// FilterVictimsWithPDBViolation splits the victims, keeping their order,
// into those whose eviction would violate a PodDisruptionBudget and those
// whose would not. It counts as upstream does: each budget starts at its
// status.disruptionsAllowed, every victim it selects uses one, and a
// victim violates it once the budget is below zero. A victim the budget's
// status lists among disruptedPods is being evicted already and is not
// counted again. A budget with an empty selector selects nothing.
//
//workshop:part 09/3
func FilterVictimsWithPDBViolation(victims []*v1.Pod, pdbs []*policy.PodDisruptionBudget) (violatingVictims, nonViolatingVictims []*v1.Pod) {
	pdbsAllowed := make([]int32, len(pdbs))
	for i, pdb := range pdbs {
		pdbsAllowed[i] = pdb.Status.DisruptionsAllowed
	}
	for _, pod := range victims {
		pdbForPodIsViolated := false
		// A pod with no labels matches no budget.
		if len(pod.Labels) != 0 {
			for i, pdb := range pdbs {
				if pdb.Namespace != pod.Namespace {
					continue
				}
				selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
				if err != nil {
					// An invalid selector matches no pod.
					continue
				}
				if selector.Empty() || !selector.Matches(labels.Set(pod.Labels)) {
					continue
				}
				if _, exist := pdb.Status.DisruptedPods[pod.Name]; exist {
					continue
				}
				pdbsAllowed[i]--
				if pdbsAllowed[i] < 0 {
					// The budgets after this one are not charged: the
					// pod is violating already.
					pdbForPodIsViolated = true
					break
				}
			}
		}
		if pdbForPodIsViolated {
			violatingVictims = append(violatingVictims, pod)
		} else {
			nonViolatingVictims = append(nonViolatingVictims, pod)
		}
	}
	return violatingVictims, nonViolatingVictims
}

// PodTerminatingByPreemption says whether the pod is terminating because
// the scheduler preempted it: it has a deletion timestamp and the
// DisruptionTarget condition with reason PreemptionByScheduler.
func PodTerminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, condition := range p.Status.Conditions {
		if condition.Type == v1.DisruptionTarget {
			return condition.Status == v1.ConditionTrue && condition.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}
