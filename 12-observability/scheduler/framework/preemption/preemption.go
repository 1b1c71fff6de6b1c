// Package preemption finds which pods to evict so that a pod that fits on
// no node can run, and evicts them. It mirrors
// pkg/scheduler/framework/preemption of k8s.io/kubernetes: the Evaluator of
// preemption.go (Preempt, findCandidates, DryRunPreemption,
// SelectCandidate, pickOneNodeForPreemption) here, the Executor of
// executor.go in executor.go, and util.go's PDB counting in util.go.
//
// From chapter 11 on, the victims are upstream's with the GenericWorkload
// feature gate on (types.go): a pod group's member takes its group's
// priority and is spared before a pod on its own, and a group whose
// disruptionMode is All is evicted whole. Left out, as the chapters'
// pages say: pod groups as preemptors (podgrouppreemption.go), composite
// pod groups, extenders (callExtenders), and custom ordering
// (OrderedScoreFuncs). The
// dry runs and the executor's evictions run in parallel on the handle's
// Parallelizer, as upstream's do.
package preemption

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/trace"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// Handle is what preemption needs of the framework: upstream's Handle, plus
// the nodes of the scheduling cycle's snapshot. Upstream reads them through
// Handle.MutableSnapshotSharedLister().NodeInfos(); this chapter's handle
// serves them directly.
type Handle interface {
	fwk.Handle
	NodeInfos() fwk.NodeInfoLister
}

// Interface is what a preemption plugin decides; the Evaluator does the
// rest. DefaultPreemption implements it.
type Interface interface {
	// GetOffsetAndNumCandidates chooses a random offset and the number of
	// candidate nodes to dry run.
	GetOffsetAndNumCandidates(nodes int32) (int32, int32)
	// CandidatesToVictimsMap maps each candidate node to its victims.
	CandidatesToVictimsMap(candidates []Candidate) map[string]*extenderv1.Victims
	// PodEligibleToPreemptOthers says whether the pod may preempt at all,
	// and if not, why.
	PodEligibleToPreemptOthers(ctx context.Context, pod *v1.Pod, nominatedNodeStatus *fwk.Status) (bool, string)
	// SelectVictimsOnNode finds the fewest, least important victims among
	// allPossibleVictims to evict so that the pod fits on the node (a
	// copy: it may change it), their pods, and how many of those a
	// PodDisruptionBudget protects. A victim may have pods on other nodes
	// (a pod group evicted whole).
	SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo, allPossibleVictims []*DomainVictim, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status)
}

// Candidate is a node where preemption would let the pod fit, with the
// pods to evict there.
type Candidate interface {
	// Victims are the pods to evict, most important first, and how many
	// of them violate a PodDisruptionBudget.
	Victims() *extenderv1.Victims
	// Name is the node's name.
	Name() string
}

type candidate struct {
	victims *extenderv1.Victims
	name    string
}

func (s *candidate) Victims() *extenderv1.Victims { return s.victims }
func (s *candidate) Name() string                 { return s.name }

// Evaluator runs preemption with a given Interface.
type Evaluator struct {
	PluginName string
	Handler    Handle
	PodLister  corelisters.PodLister
	PdbLister  policylisters.PodDisruptionBudgetLister
	// podGroupSnapshot serves the cycle's PodGroups, when GenericWorkload
	// is on: victims take their group's priority and disruptionMode.
	podGroupSnapshot fwk.PodGroupLister
	Interface
	executor *Executor
}

// NewEvaluator returns an Evaluator. It reads pods and PodDisruptionBudgets
// from the handle's informers, so those informers must be started before
// it runs.
func NewEvaluator(pluginName string, fh Handle, i Interface, executor *Executor) *Evaluator {
	ev := &Evaluator{
		PluginName: pluginName,
		Handler:    fh,
		PodLister:  fh.SharedInformerFactory().Core().V1().Pods().Lister(),
		PdbLister:  fh.SharedInformerFactory().Policy().V1().PodDisruptionBudgets().Lister(),
		Interface:  i,
		executor:   executor,
	}
	if executor.fts.EnableGenericWorkload {
		ev.podGroupSnapshot = fh.SnapshotSharedLister().PodGroups()
	}
	return ev
}

// Preempt is the PostFilter's work: find the node where evicting the
// fewest, least important pods lets the pod fit, and evict them. Its
// answers:
//   - a result naming the node, and Success: the victims are being
//     evicted; the node is nominated for the pod, which is tried again
//     once they are gone;
//   - a result with an empty node, and Unschedulable: preemption cannot
//     help; the pod's old nomination, if any, is cleared;
//   - no result, and Unschedulable or Error: nothing changes (for
//     example, the pod's earlier victims are still terminating).
//
// It evaluates first (steps 0 to 3, evaluate), then evicts (step 4), as
// upstream's Preempt does.
//
//workshop:part 09/4
func (ev *Evaluator) Preempt(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	bestCandidate, result, status := ev.evaluate(ctx, state, pod, m)
	if bestCandidate == nil {
		return result, status
	}

	// 4) Evict the victims.
	if status := ev.executor.actuatePodPreemption(ctx, bestCandidate, pod, ev.PluginName); !status.IsSuccess() {
		return nil, status
	}
	return framework.NewPostFilterResultWithNominatedNode(bestCandidate.Name()),
		fwk.NewStatus(fwk.Success, fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", bestCandidate.Name(), len(bestCandidate.Victims().Pods)))
}

// evaluate chooses the victims without evicting any: the best candidate,
// or no candidate with Preempt's answer. Its duration, by the status, is
// preemption_evaluation_duration_seconds, as upstream's evaluate records
// it; the dry runs are most of it.
func (ev *Evaluator) evaluate(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (_ Candidate, _ *fwk.PostFilterResult, status *fwk.Status) {
	defer trace.StartRegion(ctx, "evaluate").End()
	startTime := time.Now()
	defer func() {
		metrics.PreemptionEvaluationDuration.WithLabelValues("pod", status.Code().String()).Observe(metrics.SinceInSeconds(startTime))
	}()
	logger := klog.FromContext(ctx)

	// 0) The pod may have changed since it was popped.
	podNamespace, podName := pod.Namespace, pod.Name
	pod, err := ev.PodLister.Pods(podNamespace).Get(podName)
	if err != nil {
		logger.Error(err, "Could not get the updated preemptor pod object", "pod", klog.KRef(podNamespace, podName))
		return nil, nil, fwk.AsStatus(err)
	}

	// 1) May this pod preempt at all?
	nominatedNodeStatus := m.Get(pod.Status.NominatedNodeName)
	if ok, msg := ev.PodEligibleToPreemptOthers(ctx, pod, nominatedNodeStatus); !ok {
		logger.V(5).Info("Pod is not eligible for preemption", "pod", klog.KObj(pod), "reason", msg)
		return nil, nil, fwk.NewStatus(fwk.Unschedulable, msg)
	}

	// 2) Which nodes would fit it, with which victims?
	allNodes, err := ev.Handler.NodeInfos().List()
	if err != nil {
		return nil, nil, fwk.AsStatus(err)
	}
	candidates, nodeToStatusMap, err := ev.findCandidates(ctx, state, allNodes, pod, m)
	if err != nil && len(candidates) == 0 {
		return nil, nil, fwk.AsStatus(err)
	}
	if len(candidates) == 0 {
		logger.V(2).Info("No preemption candidate is found; preemption is not helpful for scheduling", "pod", klog.KObj(pod))
		fitError := &framework.FitError{
			Pod:         pod,
			NumAllNodes: len(allNodes),
			Diagnosis:   framework.Diagnosis{NodeToStatus: nodeToStatusMap},
		}
		fitError.Diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
		return nil, framework.NewPostFilterResultWithNominatedNode(""), fwk.NewStatus(fwk.Unschedulable, fitError.Error())
	}

	// 3) The best of them.
	bestCandidate := ev.SelectCandidate(ctx, candidates)
	if bestCandidate == nil || len(bestCandidate.Name()) == 0 {
		return nil, nil, fwk.NewStatus(fwk.Unschedulable, "no candidate node for preemption")
	}
	logger.V(2).Info("the target node for the preemption is determined", "node", bestCandidate.Name(), "pod", klog.KObj(pod))
	return bestCandidate, nil, nil
}

// findCandidates dry runs preemption on the nodes where it may help: those
// the filters found Unschedulable. A node found UnschedulableAndUnresolvable
// (a taint, a node selector) stays unfit whatever pods are evicted.
func (ev *Evaluator) findCandidates(ctx context.Context, state fwk.CycleState, allNodes []fwk.NodeInfo, pod *v1.Pod, m fwk.NodeToStatusReader) ([]Candidate, *framework.NodeToStatus, error) {
	if len(allNodes) == 0 {
		return nil, nil, errors.New("no nodes available")
	}
	logger := klog.FromContext(ctx)
	potentialNodes, err := m.NodesForStatusCode(ev.Handler.NodeInfos(), fwk.Unschedulable)
	if err != nil {
		return nil, nil, err
	}
	if len(potentialNodes) == 0 {
		logger.V(3).Info("Preemption will not help schedule pod on any node", "pod", klog.KObj(pod))
		return nil, framework.NewDefaultNodeToStatus(), nil
	}
	pdbs, err := getPodDisruptionBudgets(ev.PdbLister)
	if err != nil {
		return nil, nil, err
	}
	offset, candidatesNum := ev.GetOffsetAndNumCandidates(int32(len(potentialNodes)))
	return ev.DryRunPreemption(ctx, state, pod, potentialNodes, pdbs, offset, candidatesNum)
}

// DryRunPreemption runs SelectVictimsOnNode on the potential nodes,
// starting at offset and wrapping around, on up to `parallelism`
// goroutines (the handle's Parallelizer), until it has candidatesNum
// candidates, at least one of which violates no PodDisruptionBudget. It
// returns the candidates that violate none first, and the status of each
// node that is no candidate. Each dry run works on copies of the node and
// of the cycle state, so the goroutines share nothing but the results,
// which a mutex guards. Which candidates are found first depends on how
// the goroutines run; each list keeps at most candidatesNum, as
// upstream's candidateList does.
//
//workshop:part 09/4
//workshop:part 10/3
func (ev *Evaluator) DryRunPreemption(ctx context.Context, state fwk.CycleState, pod *v1.Pod, potentialNodes []fwk.NodeInfo,
	pdbs []*policy.PodDisruptionBudget, offset int32, candidatesNum int32) ([]Candidate, *framework.NodeToStatus, error) {
	var nonViolatingCandidates, violatingCandidates []Candidate
	nodeStatuses := framework.NewDefaultNodeToStatus()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logger := klog.FromContext(ctx)
	logger.V(5).Info("Dry run the preemption", "potentialNodesNumber", len(potentialNodes), "pdbsNumber", len(pdbs), "offset", offset, "candidatesNumber", candidatesNum)
	var mu sync.Mutex
	var errs []error
	checkNode := func(i int) {
		// One region per node's dry run, on the worker that runs it.
		if trace.IsEnabled() {
			defer trace.StartRegion(ctx, "DryRunPreemption").End()
		}
		nodeInfo := potentialNodes[(int(offset)+i)%len(potentialNodes)]
		logger.V(5).Info("Check the potential node for preemption", "node", nodeInfo.Node().Name)
		// The victims' NodeInfos are the snapshot's own; SelectVictimsOnNode
		// changes only the copy of this node.
		allPossibleVictims, err := ev.GetVictimsOnNode(ctx, nodeInfo)
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return
		}
		pods, numPDBViolations, status := ev.SelectVictimsOnNode(ctx, state.Clone(), pod, nodeInfo.Snapshot(), allPossibleVictims, pdbs)
		mu.Lock()
		defer mu.Unlock()
		if status.IsSuccess() && len(pods) != 0 {
			c := &candidate{
				victims: &extenderv1.Victims{Pods: pods, NumPDBViolations: int64(numPDBViolations)},
				name:    nodeInfo.Node().Name,
			}
			if numPDBViolations == 0 && int32(len(nonViolatingCandidates)) < candidatesNum {
				nonViolatingCandidates = append(nonViolatingCandidates, c)
			} else if numPDBViolations != 0 && int32(len(violatingCandidates)) < candidatesNum {
				violatingCandidates = append(violatingCandidates, c)
			}
			nvcSize, vcSize := len(nonViolatingCandidates), len(violatingCandidates)
			if nvcSize > 0 && int32(nvcSize+vcSize) >= candidatesNum {
				cancel()
			}
			return
		}
		if status.IsSuccess() && len(pods) == 0 {
			status = fwk.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", nodeInfo.Node().Name))
		}
		if status.Code() == fwk.Error {
			errs = append(errs, status.AsError())
		}
		nodeStatuses.Set(nodeInfo.Node().Name, status)
	}
	ev.Handler.Parallelizer().Until(ctx, len(potentialNodes), checkNode, ev.PluginName)
	return append(nonViolatingCandidates, violatingCandidates...), nodeStatuses, utilerrors.NewAggregate(errs)
}

// GetVictimsOnNode returns the victims of the pods on the node: with
// GenericWorkload on, a pod group's member with its group's priority, and
// one victim for every scheduled member of a group whose disruptionMode is
// All, wherever they run (getCrossNodesVictims); with it off, each pod on
// its own with its own priority.
func (ev *Evaluator) GetVictimsOnNode(ctx context.Context, nodeInfo fwk.NodeInfo) ([]*DomainVictim, error) {
	if !ev.executor.fts.EnableGenericWorkload {
		var victims []Victim
		for _, pi := range nodeInfo.GetPods() {
			victims = append(victims, NewPodVictim(pi, nil))
		}
		return createDomainVictims(ev.Handler.NodeInfos(), victims)
	}
	return getCrossNodesVictims(klog.FromContext(ctx), ev.Handler.SnapshotSharedLister(), ev.podGroupSnapshot, []fwk.NodeInfo{nodeInfo})
}

// SelectCandidate picks the best candidate by pickOneNodeForPreemption's
// criteria.
func (ev *Evaluator) SelectCandidate(ctx context.Context, candidates []Candidate) Candidate {
	if len(candidates) == 0 {
		return nil
	}
	if len(candidates) == 1 {
		return candidates[0]
	}
	victimsMap := ev.CandidatesToVictimsMap(candidates)
	candidateNode := pickOneNodeForPreemption(klog.FromContext(ctx), victimsMap)
	if victims := victimsMap[candidateNode]; victims != nil {
		return &candidate{victims: victims, name: candidateNode}
	}
	klog.FromContext(ctx).Error(nil, "Unexpected case no candidate was selected", "candidates", len(candidates))
	return candidates[0]
}

func getPodDisruptionBudgets(pdbLister policylisters.PodDisruptionBudgetLister) ([]*policy.PodDisruptionBudget, error) {
	if pdbLister != nil {
		return pdbLister.List(labels.Everything())
	}
	return nil, nil
}

// pickOneNodeForPreemption picks one node among the candidates; each one's
// victims are sorted most important first. Each criterion keeps the nodes
// with the best score, and the next criterion breaks a tie, in upstream's
// order:
//  1. the fewest PodDisruptionBudget violations;
//  2. the lowest priority of the most important victim;
//  3. the smallest sum of the victims' priorities;
//  4. the fewest victims;
//  5. the latest of each node's earliest start time among its victims of
//     the highest priority (its oldest important victim ran the shortest);
//  6. still tied: the first of them, in map order.
//
//workshop:part 09/3
func pickOneNodeForPreemption(logger klog.Logger, nodesToVictims map[string]*extenderv1.Victims) string {
	if len(nodesToVictims) == 0 {
		return ""
	}
	allCandidates := make([]string, 0, len(nodesToVictims))
	for node := range nodesToVictims {
		allCandidates = append(allCandidates, node)
	}
	minNumPDBViolatingScoreFunc := func(node string) int64 {
		return -nodesToVictims[node].NumPDBViolations
	}
	minHighestPriorityScoreFunc := func(node string) int64 {
		return -int64(corev1helpers.PodPriority(nodesToVictims[node].Pods[0]))
	}
	minSumPrioritiesScoreFunc := func(node string) int64 {
		var sumPriorities int64
		for _, pod := range nodesToVictims[node].Pods {
			// MaxInt32+1 makes every term positive, so that a few pods of
			// negative priority do not beat fewer pods of the same
			// priority.
			sumPriorities += int64(corev1helpers.PodPriority(pod)) + int64(math.MaxInt32+1)
		}
		return -sumPriorities
	}
	minNumPodsScoreFunc := func(node string) int64 {
		return -int64(len(nodesToVictims[node].Pods))
	}
	latestStartTimeScoreFunc := func(node string) int64 {
		earliestStartTimeOnNode := util.GetEarliestPodStartTime(nodesToVictims[node])
		if earliestStartTimeOnNode == nil {
			logger.Error(nil, "Unexpected nil earliestStartTime for node", "node", node)
			return int64(math.MinInt64)
		}
		return earliestStartTimeOnNode.UnixNano()
	}
	scoreFuncs := []func(string) int64{
		minNumPDBViolatingScoreFunc,
		minHighestPriorityScoreFunc,
		minSumPrioritiesScoreFunc,
		minNumPodsScoreFunc,
		latestStartTimeScoreFunc,
	}
	for _, f := range scoreFuncs {
		selectedNodes := []string{}
		maxScore := int64(math.MinInt64)
		for _, node := range allCandidates {
			score := f(node)
			if score > maxScore {
				maxScore = score
				selectedNodes = []string{}
			}
			if score == maxScore {
				selectedNodes = append(selectedNodes, node)
			}
		}
		if len(selectedNodes) == 1 {
			return selectedNodes[0]
		}
		allCandidates = selectedNodes
	}
	return allCandidates[0]
}
