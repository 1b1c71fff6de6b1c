// Package defaultpreemption is chapter 09's DefaultPreemption plugin. It
// mirrors pkg/scheduler/framework/plugins/defaultpreemption of
// k8s.io/kubernetes (default_preemption.go): the PostFilter that preempts,
// the PreEnqueue that holds a preemptor back while its victims are being
// evicted, and the choices the Evaluator of the preemption package leaves
// to a plugin: how many candidate nodes to look at, who may preempt, and
// which pods to evict on a node.
package defaultpreemption

import (
	"context"
	"fmt"
	"math/rand"
	"sort"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/util"

	"minisched/09-preemption/scheduler/framework/preemption"
)

// Name is upstream's name for the plugin, so that kube-scheduler's
// configuration and this chapter's enable the same thing.
const Name = names.DefaultPreemption

// DefaultPreemption preempts lower-priority pods for a pod that fits
// nowhere.
type DefaultPreemption struct {
	fh   preemption.Handle
	fts  feature.Features
	args config.DefaultPreemptionArgs

	Executor  *preemption.Executor
	Evaluator *preemption.Evaluator
}

var (
	_ fwk.PostFilterPlugin  = &DefaultPreemption{}
	_ fwk.PreEnqueuePlugin  = &DefaultPreemption{}
	_ fwk.EnqueueExtensions = &DefaultPreemption{}
)

// Name returns the plugin's name.
func (pl *DefaultPreemption) Name() string { return Name }

// New builds the plugin from its arguments, which the framework takes from
// upstream's defaulted configuration (MinCandidateNodesPercentage 10,
// MinCandidateNodesAbsolute 100). The handle must serve the snapshot's
// nodes (preemption.Handle).
func New(_ context.Context, dpArgs runtime.Object, fh fwk.Handle, fts feature.Features) (*DefaultPreemption, error) {
	args, ok := dpArgs.(*config.DefaultPreemptionArgs)
	if !ok {
		return nil, fmt.Errorf("got args of type %T, want *DefaultPreemptionArgs", dpArgs)
	}
	if err := validation.ValidateDefaultPreemptionArgs(nil, args); err != nil {
		return nil, err
	}
	h, ok := fh.(preemption.Handle)
	if !ok {
		return nil, fmt.Errorf("the framework handle %T does not serve the snapshot's NodeInfos", fh)
	}
	pl := &DefaultPreemption{fh: h, fts: fts, args: *args}
	pl.Executor = preemption.NewExecutor(h, fts)
	pl.Evaluator = preemption.NewEvaluator(Name, h, pl, pl.Executor)
	return pl, nil
}

// PostFilter runs preemption for a pod the filters found no node for.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	result, status := pl.Evaluator.Preempt(ctx, state, pod, m)
	if msg := status.Message(); len(msg) > 0 {
		return result, fwk.NewStatus(status.Code(), "preemption: "+msg)
	}
	return result, status
}

// PreEnqueue keeps a pod out of activeQ while its asynchronous preemption
// runs. The queue parks it, gated by this plugin, until an event this
// plugin registered (an assigned pod's deletion: a victim's) moves it
// again.
//
//workshop:part 09/5
func (pl *DefaultPreemption) PreEnqueue(ctx context.Context, p *v1.Pod) *fwk.Status {
	if !pl.fts.EnableAsyncPreemption {
		return nil
	}
	if pl.Executor.IsPodRunningPreemption(p.GetUID()) {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "waiting for the preemption for this pod to be finished")
	}
	return nil
}

// EventsToRegister registers an assigned pod's deletion, so that a pod this
// plugin gated is looked at again when a victim goes. Without asynchronous
// preemption the plugin never gates a pod and registers nothing.
func (pl *DefaultPreemption) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	if pl.fts.EnableAsyncPreemption {
		return []fwk.ClusterEventWithHint{
			{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: pl.isPodSchedulableAfterAssignedPodDeletion},
		}, nil
	}
	return nil, nil
}

// isPodSchedulableAfterAssignedPodDeletion always answers QueueSkip. A pod
// this plugin gated was rejected by other plugins too (the ones that found
// no room), and their hints decide whether a deletion helps it; the queue
// then runs PreEnqueue again, which lets it through once its preemption
// is over.
func (pl *DefaultPreemption) isPodSchedulableAfterAssignedPodDeletion(_ klog.Logger, _ *v1.Pod, _, _ any) (fwk.QueueingHint, error) {
	return fwk.QueueSkip, nil
}

// calculateNumCandidates returns how many candidate nodes to dry run: the
// larger of MinCandidateNodesPercentage of the nodes and
// MinCandidateNodesAbsolute, at most all of them.
//
//workshop:part 09/4
func (pl *DefaultPreemption) calculateNumCandidates(numNodes int32) int32 {
	n := (numNodes * pl.args.MinCandidateNodesPercentage) / 100
	if n < pl.args.MinCandidateNodesAbsolute {
		n = pl.args.MinCandidateNodesAbsolute
	}
	if n > numNodes {
		n = numNodes
	}
	return n
}

// getOffsetRand picks the node the dry runs start at. Tests replace it.
var getOffsetRand = rand.Int31n

// GetOffsetAndNumCandidates returns a random offset, so that successive
// preemptions do not all start at the same node, and the number of
// candidates to look for.
func (pl *DefaultPreemption) GetOffsetAndNumCandidates(numNodes int32) (int32, int32) {
	return getOffsetRand(numNodes), pl.calculateNumCandidates(numNodes)
}

// CandidatesToVictimsMap maps each candidate node to its victims.
func (pl *DefaultPreemption) CandidatesToVictimsMap(candidates []preemption.Candidate) map[string]*extenderv1.Victims {
	m := make(map[string]*extenderv1.Victims, len(candidates))
	for _, c := range candidates {
		m[c.Name()] = c.Victims()
	}
	return m
}

// SelectVictimsOnNode finds the pods to evict from the node so that the
// preemptor fits there: every pod of lower priority is a potential victim,
// whichever scheduler placed it. It removes them all; if the preemptor
// still does not fit, the node is no candidate. Otherwise it puts them
// back one at a time, the most important first (higher priority, then the
// one that started earlier), and keeps each that still lets the preemptor
// fit: a reprieve. The pods whose eviction would violate a
// PodDisruptionBudget are tried first, so that they are the likeliest to
// be spared. It returns the victims, most important first, and how many of
// them violate a budget. nodeInfo and state are copies it may change.
//
//workshop:part 09/3
func (pl *DefaultPreemption) SelectVictimsOnNode(
	ctx context.Context,
	state fwk.CycleState,
	preemptor *v1.Pod,
	nodeInfo fwk.NodeInfo,
	pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	logger := klog.FromContext(ctx)
	var potentialVictims []fwk.PodInfo
	removePod := func(rpi fwk.PodInfo) error {
		if err := nodeInfo.RemovePod(logger, rpi.GetPod()); err != nil {
			return err
		}
		status := pl.fh.RunPreFilterExtensionRemovePod(ctx, state, preemptor, rpi, nodeInfo)
		if !status.IsSuccess() {
			return status.AsError()
		}
		return nil
	}
	addPod := func(api fwk.PodInfo) error {
		nodeInfo.AddPodInfo(api)
		status := pl.fh.RunPreFilterExtensionAddPod(ctx, state, preemptor, api, nodeInfo)
		if !status.IsSuccess() {
			return status.AsError()
		}
		return nil
	}
	// As the first step, remove all pods eligible for preemption from the
	// node.
	for _, pi := range nodeInfo.GetPods() {
		if pl.isPreemptionAllowed(pi.GetPod(), preemptor) {
			potentialVictims = append(potentialVictims, pi)
		}
	}
	if len(potentialVictims) == 0 {
		return nil, 0, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "No preemption victims found for incoming pod")
	}
	for _, pi := range potentialVictims {
		if err := removePod(pi); err != nil {
			return nil, 0, fwk.AsStatus(err)
		}
	}
	// If the preemptor does not fit with every potential victim gone, the
	// node is no candidate. (A preemptor with affinity to a victim is not
	// considered further, as upstream does not.)
	if status := pl.fh.RunFilterPluginsWithNominatedPods(ctx, state, preemptor, nodeInfo); !status.IsSuccess() {
		return nil, 0, status
	}
	var victims []*v1.Pod
	numViolatingVictim := 0
	sort.Slice(potentialVictims, func(i, j int) bool {
		return util.MoreImportantPod(potentialVictims[i].GetPod(), potentialVictims[j].GetPod())
	})
	pods := make([]*v1.Pod, len(potentialVictims))
	podInfos := make(map[*v1.Pod]fwk.PodInfo, len(potentialVictims))
	for i, pi := range potentialVictims {
		pods[i] = pi.GetPod()
		podInfos[pi.GetPod()] = pi
	}
	violatingVictims, nonViolatingVictims := preemption.FilterVictimsWithPDBViolation(pods, pdbs)
	reprievePod := func(p *v1.Pod) (bool, error) {
		pi := podInfos[p]
		if err := addPod(pi); err != nil {
			return false, err
		}
		status := pl.fh.RunFilterPluginsWithNominatedPods(ctx, state, preemptor, nodeInfo)
		fits := status.IsSuccess()
		if !fits {
			if err := removePod(pi); err != nil {
				return false, err
			}
			victims = append(victims, p)
			// Upstream's line: v1.37.1 logs each victim's group of pods;
			// here a victim is one pod.
			if loggerV := logger.V(5); loggerV.Enabled() {
				loggerV.Info("Pods are potential preemption victims on node", "pods", []klog.ObjectRef{klog.KObj(p)}, "node", nodeInfo.Node().Name)
			}
		}
		return fits, nil
	}
	for _, p := range violatingVictims {
		if fits, err := reprievePod(p); err != nil {
			return nil, 0, fwk.AsStatus(err)
		} else if !fits {
			numViolatingVictim++
		}
	}
	for _, p := range nonViolatingVictims {
		if _, err := reprievePod(p); err != nil {
			return nil, 0, fwk.AsStatus(err)
		}
	}
	// Both loops appended in importance order; together they need sorting
	// again.
	if len(violatingVictims) != 0 && len(nonViolatingVictims) != 0 {
		sort.Slice(victims, func(i, j int) bool { return util.MoreImportantPod(victims[i], victims[j]) })
	}
	return victims, numViolatingVictim, nil
}

// PodEligibleToPreemptOthers says whether the pod may preempt, and if not,
// why:
//  1. its preemptionPolicy is Never;
//  2. it has a nominated node, where pods it could preempt are still
//     terminating because the scheduler preempted them: its earlier
//     preemption is not over, and preempting again would evict more pods
//     for the same room. Unless that node is now out of the question
//     (UnschedulableAndUnresolvable for the filters), then it may preempt
//     elsewhere.
//
//workshop:part 09/2
func (pl *DefaultPreemption) PodEligibleToPreemptOthers(_ context.Context, pod *v1.Pod, nominatedNodeStatus *fwk.Status) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	nomNodeName := pod.Status.NominatedNodeName
	if len(nomNodeName) > 0 {
		if nominatedNodeStatus.Code() == fwk.UnschedulableAndUnresolvable {
			return true, ""
		}
		if nodeInfo, _ := pl.fh.NodeInfos().Get(nomNodeName); nodeInfo != nil {
			for _, p := range nodeInfo.GetPods() {
				if pl.isPreemptionAllowed(p.GetPod(), pod) && preemption.PodTerminatingByPreemption(p.GetPod()) {
					return false, "not eligible due to a terminating pod on the nominated node."
				}
			}
		}
	}
	return true, ""
}

// isPreemptionAllowed says whether the preemptor may evict the victim: only
// a pod of strictly lower priority. Upstream adds an IsEligiblePod hook
// here for custom rules; its default allows every such pod.
func (pl *DefaultPreemption) isPreemptionAllowed(victim, preemptor *v1.Pod) bool {
	return corev1helpers.PodPriority(victim) < corev1helpers.PodPriority(preemptor)
}
