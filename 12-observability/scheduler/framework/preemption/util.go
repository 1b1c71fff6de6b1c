package preemption

// This file mirrors pkg/scheduler/framework/preemption/util.go of
// k8s.io/kubernetes (FilterVictimsWithPDBViolation, MoreImportantVictim,
// GetPodPriority, PodTerminatingByPreemption), without composite pod
// groups.

import (
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// ViolatingVictim is a victim whose eviction would violate a
// PodDisruptionBudget, with how many of its pods would.
type ViolatingVictim[T Victim] struct {
	Victim       T
	ViolateCount int
}

// FilterVictimsWithPDBViolation splits the victims, keeping their order,
// into those whose eviction would violate a PodDisruptionBudget and those
// whose would not. It counts as upstream does: each budget starts at its
// status.disruptionsAllowed, every pod it selects uses one, and a pod
// violates it once the budget is below zero. A pod the budget's status
// lists among disruptedPods is being evicted already and is not counted
// again. A budget with an empty selector selects nothing. A victim is
// evicted or spared whole, so one violating pod makes the whole victim
// violating, and ViolateCount says how many of its pods violate.
//
//workshop:part 09/3
func FilterVictimsWithPDBViolation[T Victim](victims []T, pdbs []*policy.PodDisruptionBudget) (violatingVictims []ViolatingVictim[T], nonViolatingVictims []T) {
	pdbsAllowed := make([]int32, len(pdbs))
	for i, pdb := range pdbs {
		pdbsAllowed[i] = pdb.Status.DisruptionsAllowed
	}
	podIsViolating := func(pod *v1.Pod) bool {
		// A pod with no labels matches no budget.
		if len(pod.Labels) == 0 {
			return false
		}
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
				// The budgets after this one are not charged: the pod
				// is violating already.
				return true
			}
		}
		return false
	}
	for _, victim := range victims {
		violatingPods := 0
		for _, pi := range victim.Pods() {
			if podIsViolating(pi.GetPod()) {
				violatingPods++
			}
		}
		if violatingPods > 0 {
			violatingVictims = append(violatingVictims, ViolatingVictim[T]{Victim: victim, ViolateCount: violatingPods})
		} else {
			nonViolatingVictims = append(nonViolatingVictims, victim)
		}
	}
	return violatingVictims, nonViolatingVictims
}

// MoreImportantVictim says whether vi1 is more important than vi2, that is
// spared first: the higher priority; at equal priority a pod group's (a
// member, or a group evicted whole) before a pod on its own, since
// evicting it may take a gang below minCount; between two pods on their
// own, the one that started earlier; between two of a group, the one with
// more pods, then the one that started earlier. It mirrors upstream's
// MoreImportantVictim (util.go), less composite pod groups, which rank
// above pod groups there.
func MoreImportantVictim(vi1, vi2 Victim) bool {
	if vi1.Priority() != vi2.Priority() {
		return vi1.Priority() > vi2.Priority()
	}
	if rank1, rank2 := victimRank(vi1), victimRank(vi2); rank1 != rank2 {
		return rank1 > rank2
	}
	if len(vi1.Pods()) != len(vi2.Pods()) {
		return len(vi1.Pods()) > len(vi2.Pods())
	}
	return vi1.EarliestStartTime().Before(vi2.EarliestStartTime())
}

func victimRank(vi Victim) int {
	if vi.Type() == fwk.PodGroupKeyType {
		return 2
	}
	return 1
}

// GetPodPriority is the priority preemption uses for a pod: its PodGroup's
// when it is a member and pgLister is set (GenericWorkload on), else its
// own. A member whose PodGroup is not found has its own priority.
func GetPodPriority(p *v1.Pod, pgLister fwk.PodGroupLister) int32 {
	if p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil || pgLister == nil {
		return corev1helpers.PodPriority(p)
	}
	pg, err := pgLister.Get(p.Namespace, *p.Spec.SchedulingGroup.PodGroupName)
	if err != nil || pg == nil {
		return corev1helpers.PodPriority(p)
	}
	return util.PodGroupPriority(pg)
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
