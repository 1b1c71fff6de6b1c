package scheduler

// This file mirrors pkg/scheduler/schedule_one.go of k8s.io/kubernetes:
// ScheduleOne, skipPodSchedule, schedulePod, findNodesThatFitPod,
// findNodesThatPassFilters, handleSchedulingFailure, updatePod and bind.
// Upstream splits ScheduleOne into a scheduling cycle and a binding cycle;
// this chapter still does both in one call, and chapter 04 splits them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/02-filter/scheduler/metrics"
)

// ErrNoNodesAvailable is returned when the cluster has no node at all. The
// text is upstream's.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// ScheduleResult is what schedulePod decided, as upstream's type of the
// same name.
type ScheduleResult struct {
	// SuggestedHost is the node the pod goes to.
	SuggestedHost string
	// EvaluatedNodes counts the nodes the filters looked at.
	EvaluatedNodes int
	// FeasibleNodes counts the nodes that passed every filter.
	FeasibleNodes int
}

// ScheduleOne does the whole scheduling workflow for one pod: decide whether
// to schedule it at all, find the nodes it fits, pick one, and bind the pod
// to it. A pod that fits nowhere gets a PodScheduled=False condition saying
// why, and is tried again after the retry delay.
func (sched *Scheduler) ScheduleOne(ctx context.Context, pod *v1.Pod) {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KObj(pod))
	ctx = klog.NewContext(ctx, logger)

	if reason := sched.skipPodSchedule(pod); reason != "" {
		logger.V(4).Info("Skipping pod", "reason", reason)
		return
	}
	sched.attempts[pod.UID]++
	attempt := sched.attempts[pod.UID]
	logger.V(3).Info("Attempting to schedule pod")

	// The CycleState carries what a plugin's PreFilter computed to its
	// Filter, for this pod and this attempt only.
	state := framework.NewCycleState()
	result, err := sched.schedulePod(ctx, state, pod)
	if err != nil {
		sched.handleSchedulingFailure(ctx, pod, attempt, err)
		return
	}

	if err := sched.bind(ctx, pod, result.SuggestedHost); err != nil {
		sched.handleSchedulingFailure(ctx, pod, attempt, fmt.Errorf("binding rejected: %w", err))
		return
	}
	sched.bound[pod.UID] = true
	metrics.PodScheduled(sched.schedulerName)
	sched.recorder.Eventf(pod, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %v/%v to %v", pod.Namespace, pod.Name, result.SuggestedHost)
	logger.V(2).Info("Scheduling decision", "attempt", attempt, "result", metrics.ScheduledResult, "node", result.SuggestedHost,
		"evaluatedNodes", result.EvaluatedNodes, "feasibleNodes", result.FeasibleNodes)
}

// skipPodSchedule says why a pod must not be scheduled, or "" if it may be.
// The apiserver's field selector already filters most of these; the checks
// stay because the watch can deliver a pod in any state, and because they
// are the rules a scheduler must keep.
//
//workshop:part 01/1
func (sched *Scheduler) skipPodSchedule(pod *v1.Pod) string {
	switch {
	case pod.Spec.SchedulerName != sched.schedulerName:
		return "pod is for another scheduler"
	case pod.Spec.NodeName != "":
		return "pod is already bound"
	case pod.DeletionTimestamp != nil:
		return "pod is being deleted"
	case len(pod.Spec.SchedulingGates) > 0:
		// The apiserver refuses to bind a gated pod; it is scheduled once
		// the last gate is removed, which arrives as an update.
		return "pod has scheduling gates"
	case pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed:
		return "pod has terminated"
	case sched.bound[pod.UID]:
		return "pod was bound already; the watch has not caught up"
	case sched.waiting[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]:
		return "pod waits for its retry"
	}
	return ""
}

// schedulePod finds the nodes the pod fits and picks one of them at random.
// Picking at random among the feasible nodes keeps this chapter to one idea:
// which nodes can run the pod. Chapter 03 scores them to pick the best.
//
// The nodes and the pods bound to them come from the apiserver on every
// call. Chapter 05 replaces these List calls with a cache fed by informers.
//
//workshop:part 01/2
func (sched *Scheduler) schedulePod(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (ScheduleResult, error) {
	nodes, err := sched.snapshot(ctx)
	if err != nil {
		return ScheduleResult{}, err
	}
	if len(nodes) == 0 {
		return ScheduleResult{}, ErrNoNodesAvailable
	}
	feasibleNodes, diagnosis, err := sched.findNodesThatFitPod(ctx, state, pod, nodes)
	if err != nil {
		return ScheduleResult{}, err
	}
	if len(feasibleNodes) == 0 {
		return ScheduleResult{}, &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diagnosis}
	}
	return ScheduleResult{
		SuggestedHost:  feasibleNodes[sched.rand.IntN(len(feasibleNodes))].Node().Name,
		EvaluatedNodes: len(feasibleNodes) + diagnosis.NodeToStatus.Len(),
		FeasibleNodes:  len(feasibleNodes),
	}, nil
}

// findNodesThatFitPod runs the PreFilter plugins once, then the Filter
// plugins on every node, and returns the nodes that passed with a Diagnosis
// of why the others did not. Upstream stops once it has found enough nodes
// (percentageOfNodesToScore) and runs the filters in parallel; this chapter
// checks every node, one after the other.
func (sched *Scheduler) findNodesThatFitPod(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodeInfo, framework.Diagnosis, error) {
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	preRes, s, unschedulablePlugins := sched.framework.RunPreFilterPlugins(ctx, state, pod, nodes)
	diagnosis.UnschedulablePlugins = unschedulablePlugins
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return nil, diagnosis, s.AsError()
		}
		// Every node gets the PreFilter's verdict; the message says why.
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
		diagnosis.AddPluginStatus(s)
		return nil, diagnosis, nil
	}

	// A PreFilter may narrow the candidates to some nodes (NodeAffinity does
	// for a nodeName-style affinity); the rest are unschedulable for it.
	if !preRes.AllNodes() {
		narrowed := make([]fwk.NodeInfo, 0, len(preRes.NodeNames))
		for _, n := range nodes {
			if preRes.NodeNames.Has(n.Node().Name) {
				narrowed = append(narrowed, n)
			}
		}
		nodes = narrowed
		diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedulablePlugins))))
	}
	feasibleNodes, err := sched.findNodesThatPassFilters(ctx, state, pod, &diagnosis, nodes)
	return feasibleNodes, diagnosis, err
}

// findNodesThatPassFilters runs the Filter plugins on each node and records
// the first rejection of each rejected node in the diagnosis.
//
//workshop:part 02/3
func (sched *Scheduler) findNodesThatPassFilters(ctx context.Context, state fwk.CycleState, pod *v1.Pod, diagnosis *framework.Diagnosis, nodes []fwk.NodeInfo) ([]fwk.NodeInfo, error) {
	// Each node's verdict for make watch, with -v=10: checked once per
	// call, not once per node. klog's --vmodule judges the file of the
	// calls to Enabled and Info: both are in this file.
	verdicts := klog.FromContext(ctx).V(10)
	logVerdicts := verdicts.Enabled()
	var feasibleNodes []fwk.NodeInfo
	for _, nodeInfo := range nodes {
		status := sched.framework.RunFilterPlugins(ctx, state, pod, nodeInfo)
		if logVerdicts {
			logFilterVerdict(verdicts, pod, nodeInfo, status)
		}
		switch {
		case status.IsSuccess():
			feasibleNodes = append(feasibleNodes, nodeInfo)
		case status.Code() == fwk.Error:
			return nil, status.AsError()
		default:
			diagnosis.NodeToStatus.Set(nodeInfo.Node().Name, status)
			diagnosis.AddPluginStatus(status)
		}
	}
	return feasibleNodes, nil
}

// logFilterVerdict logs one node's Filter verdict at -v=10, for make
// watch's table of every plugin's verdict on every node. Upstream logs
// none: in v1.37.1 RunFilterPlugins and findNodesThatPassFilters are
// silent, and the FitError only counts the reasons. The level is that of
// upstream's per-node scores (prioritizeNodes). An error is not a verdict:
// the cycle fails and reports it.
func logFilterVerdict(loggerV klog.Logger, pod *v1.Pod, nodeInfo fwk.NodeInfo, status *fwk.Status) {
	switch {
	case status.Code() == fwk.Error:
		return
	case status.IsSuccess():
		loggerV.Info("Node passed the Filter plugins for pod", "pod", klog.KObj(pod), "node", nodeInfo.Node().Name)
	default:
		loggerV.Info("Plugin rejected node for pod", "pod", klog.KObj(pod), "plugin", status.Plugin(), "node", nodeInfo.Node().Name, "code", status.Code().String(), "status", status.Message())
	}
}

// handleSchedulingFailure tells the user why the pod was not scheduled, as
// upstream does: a FailedScheduling event and a PodScheduled=False condition
// whose message is the FitError's ("0/3 nodes are available: ..."). Then the
// pod waits for its retry.
//
//workshop:part 02/4
func (sched *Scheduler) handleSchedulingFailure(ctx context.Context, pod *v1.Pod, attempt int, err error) {
	logger := klog.FromContext(ctx)
	reason := v1.PodReasonSchedulerError
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) || errors.Is(err, ErrNoNodesAvailable) {
		reason = v1.PodReasonUnschedulable
	}
	result := metrics.ErrorResult
	if reason == v1.PodReasonUnschedulable {
		result = metrics.UnschedulableResult
		metrics.PodUnschedulable(sched.schedulerName)
	} else {
		metrics.PodScheduleError(sched.schedulerName)
	}
	msg := err.Error()
	logger.V(2).Info("Scheduling decision", "attempt", attempt, "result", result, "reason", reason, "message", msg)

	// An event's note is at most 1024 bytes (NoteLengthLimit in
	// pkg/apis/core/validation); upstream truncates the same way.
	if len(msg) > 1024 {
		msg = msg[:1024-4] + " ..."
	}
	sched.recorder.Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "%s", msg)
	condition := &v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason, Message: err.Error()}
	if err := updatePod(ctx, sched.client, pod, condition, metav1.NewTime(sched.clock.Now())); err != nil && !apierrors.IsNotFound(err) {
		logger.Error(err, "Updating the pod's PodScheduled condition failed")
	}
	sched.scheduleRetry(ctx, pod)
}

// updatePod sets a condition in the pod's status with a strategic merge
// patch, so it does not overwrite what others changed meanwhile. Like
// upstream's updatePod, it sends nothing when the condition is already set.
func updatePod(ctx context.Context, client clientset.Interface, pod *v1.Pod, condition *v1.PodCondition, now metav1.Time) error {
	newStatus := pod.Status.DeepCopy()
	if !updatePodCondition(newStatus, condition, now) {
		return nil
	}
	oldData, err := json.Marshal(v1.Pod{Status: pod.Status})
	if err != nil {
		return err
	}
	newData, err := json.Marshal(v1.Pod{Status: *newStatus})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &v1.Pod{})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// updatePodCondition sets condition in status and reports whether anything
// changed. The transition time moves only when the status flips.
func updatePodCondition(status *v1.PodStatus, condition *v1.PodCondition, now metav1.Time) bool {
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != condition.Type {
			continue
		}
		if old.Status == condition.Status && old.Reason == condition.Reason && old.Message == condition.Message {
			return false
		}
		updated := *condition
		updated.LastProbeTime = now
		updated.LastTransitionTime = old.LastTransitionTime
		if old.Status != condition.Status {
			updated.LastTransitionTime = now
		}
		*old = updated
		return true
	}
	added := *condition
	added.LastProbeTime, added.LastTransitionTime = now, now
	status.Conditions = append(status.Conditions, added)
	return true
}

// bind posts a Binding, as upstream's DefaultBinder plugin does. The
// apiserver sets spec.nodeName from it. The UID in the Binding makes the
// apiserver refuse it if the pod was deleted and recreated under the same
// name meanwhile.
//
//workshop:part 01/3
func (sched *Scheduler) bind(ctx context.Context, pod *v1.Pod, nodeName string) error {
	klog.FromContext(ctx).V(3).Info("Attempting to bind pod to node", "node", klog.KRef("", nodeName))
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	return sched.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
}
