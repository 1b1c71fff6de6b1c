package preemption

// This file mirrors pkg/scheduler/framework/preemption/types.go of
// k8s.io/kubernetes for what a single pod's preemption needs with the
// GenericWorkload feature gate on: the Victim, the unit that is evicted
// or spared whole (NewPodVictim, NewVictim), and the DomainVictim, a
// victim with the nodes its pods run on (getCrossNodesVictims,
// searchCrossNodesVictimPods). Left out: composite pod groups (their
// hierarchy walk, TraverseHierarchyUp) and pod-group preemptors
// (podGroupPreemptor, domain), which these chapters do not have.

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// Victim is what preemption evicts or spares whole: one pod, or every
// scheduled member of a pod group whose disruptionMode is All.
type Victim interface {
	// Priority is the pod's priority, or for a pod group's member (and
	// a whole group) the PodGroup's priority.
	Priority() int32
	// Pods are the pods evicted with the victim.
	Pods() []fwk.PodInfo
	// EarliestStartTime is the earliest start time of its pods.
	EarliestStartTime() *metav1.Time
	// IsGroup says whether the victim belongs to a pod group.
	IsGroup() bool
	// Type is fwk.PodKeyType for a pod on its own, fwk.PodGroupKeyType
	// for a pod group's member or a whole pod group.
	Type() fwk.EntityKeyType
}

type victim struct {
	pods              []fwk.PodInfo
	priority          int32
	earliestStartTime *metav1.Time
	keyType           fwk.EntityKeyType
}

var _ Victim = &victim{}

func (v *victim) Pods() []fwk.PodInfo             { return v.pods }
func (v *victim) Priority() int32                 { return v.priority }
func (v *victim) EarliestStartTime() *metav1.Time { return v.earliestStartTime }
func (v *victim) IsGroup() bool                   { return v.keyType == fwk.PodGroupKeyType }
func (v *victim) Type() fwk.EntityKeyType         { return v.keyType }

// NewPodVictim makes one pod a victim. A pod group's member (when
// pgLister is set, that is when GenericWorkload is on) takes its
// PodGroup's priority and the type fwk.PodGroupKeyType, even when the
// group's disruptionMode is Single: MoreImportantVictim then spares it
// before a pod on its own of the same priority, since evicting it may
// take a bound gang below minCount.
func NewPodVictim(podInfo fwk.PodInfo, pgLister fwk.PodGroupLister) Victim {
	priority := GetPodPriority(podInfo.GetPod(), pgLister)
	keyType := fwk.PodKeyType
	if podInfo.GetPod().Spec.SchedulingGroup != nil && pgLister != nil {
		keyType = fwk.PodGroupKeyType
	}
	vi, _ := NewVictim([]fwk.PodInfo{podInfo}, priority, keyType)
	return vi
}

// NewVictim makes the pods one victim of the given priority and type.
func NewVictim(pods []fwk.PodInfo, priority int32, keyType fwk.EntityKeyType) (Victim, error) {
	if len(pods) == 0 {
		return nil, fmt.Errorf("no pods provided")
	}
	if keyType == "" {
		return nil, fmt.Errorf("keyType cannot be empty")
	}
	var earliest *metav1.Time
	for _, pi := range pods {
		t := util.GetPodStartTime(pi.GetPod())
		if earliest == nil || (t != nil && t.Before(earliest)) {
			earliest = t
		}
	}
	return &victim{pods: pods, priority: priority, earliestStartTime: earliest, keyType: keyType}, nil
}

// DomainVictim is a victim with the nodes its pods run on: a pod group
// evicted whole may have members on nodes other than the one the
// preemptor is tried on.
type DomainVictim struct {
	Victim
	affectedNodes map[string]fwk.NodeInfo
}

// AffectedNodes returns the nodes that run the victim's pods.
func (dv *DomainVictim) AffectedNodes() map[string]fwk.NodeInfo { return dv.affectedNodes }

// newDomainVictim finds the victim's pods' nodes in the snapshot.
func newDomainVictim(nodes fwk.NodeInfoLister, pods []fwk.PodInfo, priority int32, keyType fwk.EntityKeyType) (*DomainVictim, error) {
	affected := map[string]fwk.NodeInfo{}
	for _, pi := range pods {
		nodeName := pi.GetPod().Spec.NodeName
		if _, ok := affected[nodeName]; ok {
			continue
		}
		nodeInfo, err := nodes.Get(nodeName)
		if err != nil {
			return nil, fmt.Errorf("failed to get node info for node %q from snapshot: %w", nodeName, err)
		}
		affected[nodeName] = nodeInfo
	}
	vi, err := NewVictim(pods, priority, keyType)
	if err != nil {
		return nil, err
	}
	return &DomainVictim{Victim: vi, affectedNodes: affected}, nil
}

// createDomainVictims makes each victim a DomainVictim.
func createDomainVictims(nodes fwk.NodeInfoLister, victims []Victim) ([]*DomainVictim, error) {
	var out []*DomainVictim
	for _, vi := range victims {
		dv, err := newDomainVictim(nodes, vi.Pods(), vi.Priority(), vi.Type())
		if err != nil {
			return nil, err
		}
		out = append(out, dv)
	}
	return out, nil
}

// getHighestAllAncestor returns the key of the pod's PodGroup if the
// group's disruptionMode is All. (Upstream walks up to the highest
// composite pod group with disruptionMode All; without composite groups
// the PodGroup is the only level.)
func getHighestAllAncestor(pod *v1.Pod, pgLister fwk.PodGroupLister) (fwk.EntityKey, bool) {
	if pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil || pgLister == nil {
		return fwk.EntityKey{}, false
	}
	pg, err := pgLister.Get(pod.Namespace, *pod.Spec.SchedulingGroup.PodGroupName)
	if err != nil || pg == nil {
		return fwk.EntityKey{}, false
	}
	if pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.All != nil {
		return fwk.PodGroupKey(pod.Namespace, *pod.Spec.SchedulingGroup.PodGroupName), true
	}
	return fwk.EntityKey{}, false
}

// getCrossNodesVictims makes the victims of the pods on the given nodes:
// a victim per pod, except that every member of a pod group with
// disruptionMode All makes one victim together, with the group's
// scheduled members on every node, so that the group is evicted whole or
// not at all.
func getCrossNodesVictims(logger klog.Logger, snapshot fwk.SharedLister, pgLister fwk.PodGroupLister, nodes []fwk.NodeInfo) ([]*DomainVictim, error) {
	existing := sets.New[fwk.EntityKey]()
	var victims []Victim
	for _, node := range nodes {
		for _, pi := range node.GetPods() {
			p := pi.GetPod()
			groupKey, all := getHighestAllAncestor(p, pgLister)
			if !all {
				key := fwk.PodKey(p.Namespace, p.Name)
				if !existing.Has(key) {
					existing.Insert(key)
					victims = append(victims, NewPodVictim(pi, pgLister))
				}
				continue
			}
			if !existing.Has(groupKey) {
				existing.Insert(groupKey)
				victims = append(victims, searchCrossNodesVictimPods(logger, groupKey, pi, snapshot, pgLister))
			}
		}
	}
	return createDomainVictims(snapshot.NodeInfos(), victims)
}

// searchCrossNodesVictimPods makes one victim of the group's scheduled
// members (assumed or bound, on any node), of the group's priority. If the
// snapshot has no state for the group, the pod is a victim on its own.
func searchCrossNodesVictimPods(logger klog.Logger, groupKey fwk.EntityKey, podInfo fwk.PodInfo, snapshot fwk.SharedLister, pgLister fwk.PodGroupLister) Victim {
	pgState, err := snapshot.PodGroupStates().Get(podInfo.GetPod().Namespace, groupKey.Name)
	if err != nil {
		logger.V(5).Info("No pod group state for a victim's group, the pod is a victim on its own", "pod", klog.KObj(podInfo.GetPod()), "err", err)
		return NewPodVictim(podInfo, pgLister)
	}
	scheduled := pgState.ScheduledPods()
	if len(scheduled) == 0 {
		return NewPodVictim(podInfo, pgLister)
	}
	podInfos := make([]fwk.PodInfo, len(scheduled))
	for i, p := range scheduled {
		// Scheduled pods passed Filter and Reserve already.
		podInfos[i], _ = framework.NewPodInfo(p)
	}
	vi, _ := NewVictim(podInfos, GetPodPriority(podInfo.GetPod(), pgLister), groupKey.Type)
	return vi
}
