// Package scheduler is chapter 01's whole scheduler. It mirrors
// pkg/scheduler/scheduler.go of k8s.io/kubernetes (the Scheduler type, New
// with functional options, Run), cut down to the smallest loop that binds
// pods: watch pending pods, pick a node, POST a Binding.
package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
)

// DefaultSchedulerName is the spec.schedulerName this scheduler answers to
// unless told otherwise. It is not "default-scheduler", so a chapter can run
// beside the real kube-scheduler without the two fighting over pods.
const DefaultSchedulerName = "mini-scheduler"

// relistPeriod bounds how long one watch lasts. When it ends, Run lists the
// pending pods again, and that relist is chapter 01's only retry: a pod that
// found no node waits for it. Chapter 02 adds a real retry.
const relistPeriod = time.Minute

// Scheduler watches the pods that name it and binds each to a node.
type Scheduler struct {
	client        clientset.Interface
	recorder      events.EventRecorder
	schedulerName string
	rand          *rand.Rand

	// bound remembers the pods this scheduler has bound and whose departure
	// from the watch it has not seen yet. The watch may still deliver an
	// older update of such a pod, showing no node; without this set the
	// scheduler would POST a second Binding, which the apiserver rejects.
	// Chapter 05 replaces this with the scheduler cache's assumed pods.
	bound map[types.UID]bool
	// attempts counts the scheduling attempts per pod, for the decision log.
	attempts map[types.UID]int
}

// Option configures a Scheduler, as upstream's scheduler.Option does.
type Option func(*Scheduler)

// WithSchedulerName sets the spec.schedulerName whose pods are scheduled.
func WithSchedulerName(name string) Option {
	return func(s *Scheduler) { s.schedulerName = name }
}

// WithRand injects the source of randomness used to pick nodes, so tests
// can seed it and get the same placements every run.
func WithRand(r *rand.Rand) Option {
	return func(s *Scheduler) { s.rand = r }
}

// New returns a Scheduler that talks to the apiserver through client and
// records events on pods through recorder.
func New(client clientset.Interface, recorder events.EventRecorder, opts ...Option) *Scheduler {
	s := &Scheduler{
		client:        client,
		recorder:      recorder,
		schedulerName: DefaultSchedulerName,
		rand:          rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		bound:         map[types.UID]bool{},
		attempts:      map[types.UID]int{},
	}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// Run schedules pods until ctx is cancelled. It lists the pending pods, then
// watches for new ones from that list's resourceVersion; when the watch ends
// (after relistPeriod, or on an error) it lists again. Every pod is handled
// in this one goroutine, one after the other.
func (sched *Scheduler) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for ctx.Err() == nil {
		if err := sched.listAndWatch(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Watching pending pods failed; listing again shortly")
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// pendingPodsSelector asks the apiserver only for pods that name this
// scheduler, have no node yet and have not terminated. Upstream's one pod
// informer filters on status.phase only (newPodInformer), and its event
// handlers check the scheduler's name and the node (responsibleForPod,
// assignedPod); asking the apiserver for less keeps the watch to the
// pods this scheduler must place.
func (sched *Scheduler) pendingPodsSelector() string {
	return fields.AndSelectors(
		fields.OneTermEqualSelector("spec.schedulerName", sched.schedulerName),
		fields.OneTermEqualSelector("spec.nodeName", ""),
		fields.OneTermNotEqualSelector("status.phase", string(v1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(v1.PodFailed)),
	).String()
}

//workshop:part 01/4
func (sched *Scheduler) listAndWatch(ctx context.Context) error {
	selector := sched.pendingPodsSelector()
	pods, err := sched.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return fmt.Errorf("listing pending pods: %w", err)
	}
	// Every pod bound before this list has left it, so nothing in bound can
	// be delivered again.
	clear(sched.bound)
	for i := range pods.Items {
		sched.ScheduleOne(ctx, &pods.Items[i])
	}

	timeout := int64(relistPeriod.Seconds())
	w, err := sched.client.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{
		FieldSelector:   selector,
		ResourceVersion: pods.ResourceVersion,
		TimeoutSeconds:  &timeout,
	})
	if err != nil {
		return fmt.Errorf("watching pending pods: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case event, ok := <-w.ResultChan():
			if !ok {
				return nil // the watch timed out: list again
			}
			switch event.Type {
			case watch.Added, watch.Modified:
				if pod, ok := event.Object.(*v1.Pod); ok {
					sched.ScheduleOne(ctx, pod)
				}
			case watch.Deleted:
				// The pod was deleted, or it got a node and so left the
				// field selector: either way, it needs nothing more.
				if pod, ok := event.Object.(*v1.Pod); ok {
					delete(sched.bound, pod.UID)
					delete(sched.attempts, pod.UID)
				}
			case watch.Error:
				return fmt.Errorf("watch error: %w", apierrors.FromObject(event.Object))
			}
		}
	}
}
