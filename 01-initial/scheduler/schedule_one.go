package scheduler

// This file mirrors pkg/scheduler/schedule_one.go of k8s.io/kubernetes:
// ScheduleOne, skipPodSchedule, schedulePod and bind. Upstream splits
// ScheduleOne into a scheduling cycle and a binding cycle; chapter 01 does
// both in one call, and chapter 04 splits them.

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"minisched/01-initial/scheduler/metrics"
)

// ErrNoNodesAvailable is returned when the cluster has no node at all. The
// text is upstream's.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// ScheduleOne does the whole scheduling workflow for one pod: decide whether
// to schedule it at all, pick a node, and bind the pod to it.
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

	nodeName, err := sched.schedulePod(ctx)
	if err != nil {
		result := metrics.ErrorResult
		if errors.Is(err, ErrNoNodesAvailable) {
			// Chapter 01 has no retry of its own: the pod waits for the next
			// relist. Chapter 02 adds one.
			result = metrics.UnschedulableResult
			metrics.PodUnschedulable(sched.schedulerName)
		} else {
			metrics.PodScheduleError(sched.schedulerName)
		}
		sched.recorder.Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "%v", err)
		logger.V(2).Info("Scheduling decision", "attempt", attempt, "result", result, "err", err.Error())
		return
	}

	if err := sched.bind(ctx, pod, nodeName); err != nil {
		metrics.PodScheduleError(sched.schedulerName)
		sched.recorder.Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Binding", "Binding rejected: %v", err)
		logger.V(2).Info("Scheduling decision", "attempt", attempt, "result", metrics.ErrorResult, "node", nodeName, "err", err.Error())
		return
	}
	sched.bound[pod.UID] = true
	metrics.PodScheduled(sched.schedulerName)
	sched.recorder.Eventf(pod, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %v/%v to %v", pod.Namespace, pod.Name, nodeName)
	logger.V(2).Info("Scheduling decision", "attempt", attempt, "result", metrics.ScheduledResult, "node", nodeName)
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
	}
	return ""
}

// schedulePod picks the node for a pod: any node at all, at random. Random
// is the honest starting point: it needs no knowledge of the pod or the
// nodes, and it spreads pods evenly on average. Everything chapters 02 and
// 03 add (filtering out nodes that cannot run the pod, scoring the rest) is
// a way of doing better than this.
//
// The node list comes from the apiserver on every call. Chapter 05 replaces
// this List with a cache fed by informers.
//
//workshop:part 01/2
func (sched *Scheduler) schedulePod(ctx context.Context) (string, error) {
	nodes, err := sched.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing nodes: %w", err)
	}
	if len(nodes.Items) == 0 {
		return "", ErrNoNodesAvailable
	}
	return nodes.Items[sched.rand.IntN(len(nodes.Items))].Name, nil
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
