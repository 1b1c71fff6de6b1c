// Package metrics mirrors pkg/scheduler/metrics/metrics.go (and the
// PodScheduled/PodUnschedulable/PodScheduleError helpers of
// profile_metrics.go) of k8s.io/kubernetes.
//
// Chapter 01 exports only the one counter every later chapter keeps, with
// upstream's name, help text and labels, so dashboards and scripts written
// against the real kube-scheduler read ours unchanged.
package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	schedulermetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

// SchedulerSubsystem is the prefix of every scheduler metric, as upstream.
const SchedulerSubsystem = "scheduler"

// The names of the loops that parallelize.Parallelizer runs, upstream's
// extension point names: it labels the goroutines it counts with them.
//
// The Parallelizer counts them in upstream's own scheduler_goroutines
// gauge, which is nil until upstream's InitMetrics makes it (upstream's
// Register calls it). This package makes upstream's metrics when it is
// loaded, and Register serves that one gauge beside this chapter's own;
// the rest of upstream's stay unregistered, and unused. That holds only
// while nothing in the process calls upstream's Register, which would make
// them again under the running Parallelizer and register names this
// package registers too: a chapter must never import pkg/scheduler.
const (
	Filter = "Filter"
	Score  = "Score"
)

// The values of the "result" label, as upstream spells them.
const (
	ScheduledResult     = "scheduled"
	UnschedulableResult = "unschedulable"
	ErrorResult         = "error"
)

var scheduleAttempts = metrics.NewCounterVec(
	&metrics.CounterOpts{
		Subsystem:      SchedulerSubsystem,
		Name:           "schedule_attempts_total",
		Help:           "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
		StabilityLevel: metrics.STABLE,
	}, []string{"result", "profile"})

// pendingPods and SchedulerQueueIncomingPods describe the scheduling queue,
// from chapter 06 on. Their names and labels are upstream's; "gated"
// counts the pods a PreEnqueue plugin (SchedulingGates) holds back.
var (
	pendingPods = metrics.NewGaugeVec(
		&metrics.GaugeOpts{
			Subsystem:      SchedulerSubsystem,
			Name:           "pending_pods",
			Help:           "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in the unschedulable pool that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
			StabilityLevel: metrics.STABLE,
		}, []string{"queue"})
	SchedulerQueueIncomingPods = metrics.NewCounterVec(
		&metrics.CounterOpts{
			Subsystem:      SchedulerSubsystem,
			Name:           "queue_incoming_pods_total",
			Help:           "Number of pods added to scheduling queues by event and queue type.",
			StabilityLevel: metrics.STABLE,
		}, []string{"queue", "event"})
)

// CacheSize counts what the scheduler's cache holds, from chapter 05 on,
// by upstream's "type" label: "nodes", "pods" and "assumed_pods". A pod
// left assumed shows here long after its binding cycle ended.
var CacheSize = metrics.NewGaugeVec(
	&metrics.GaugeOpts{
		Subsystem:      SchedulerSubsystem,
		Name:           "cache_size",
		Help:           "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type"})

// ActivePods is the pending_pods gauge of activeQ.
func ActivePods() metrics.GaugeMetric { return pendingPods.With(metrics.Labels{"queue": "active"}) }

// BackoffPods is the pending_pods gauge of backoffQ.
func BackoffPods() metrics.GaugeMetric { return pendingPods.With(metrics.Labels{"queue": "backoff"}) }

// GatedPods is the pending_pods gauge of the pods held back by PreEnqueue.
func GatedPods() metrics.GaugeMetric { return pendingPods.With(metrics.Labels{"queue": "gated"}) }

// UnschedulablePods is the pending_pods gauge of the unschedulable pool.
func UnschedulablePods() metrics.GaugeMetric {
	return pendingPods.With(metrics.Labels{"queue": "unschedulable"})
}

// IncompletePodGroupPods is the pending_pods gauge of the pod group members
// that wait for their PodGroup, as upstream's of the same name.
func IncompletePodGroupPods() metrics.GaugeMetric {
	return pendingPods.With(metrics.Labels{"queue": "incomplete"})
}

// PendingPodGroupPods is the pending_pods gauge of the members that wait
// for their group's scheduling cycle to end, as upstream's of the same name.
func PendingPodGroupPods() metrics.GaugeMetric {
	return pendingPods.With(metrics.Labels{"queue": "pending"})
}

var registerOnce sync.Once

// Register adds the scheduler's metrics to the legacy registry that /metrics
// serves. It is safe to call more than once (tests start several schedulers
// in one process).
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(scheduleAttempts, pendingPods, SchedulerQueueIncomingPods, CacheSize, schedulermetrics.Goroutines)
	})
}

func init() { schedulermetrics.InitMetrics() }

// PodScheduled counts an attempt that ended with a binding.
func PodScheduled(profile string) { observeScheduleAttempt(ScheduledResult, profile) }

// PodUnschedulable counts an attempt that found no node for the pod.
func PodUnschedulable(profile string) { observeScheduleAttempt(UnschedulableResult, profile) }

// PodScheduleError counts an attempt that failed for a reason other than the
// pod not fitting: an API error while listing nodes or binding.
func PodScheduleError(profile string) { observeScheduleAttempt(ErrorResult, profile) }

func observeScheduleAttempt(result, profile string) {
	scheduleAttempts.WithLabelValues(result, profile).Inc()
}
