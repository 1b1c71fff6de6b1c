// Package scheduler is chapter 02's whole scheduler. It mirrors
// pkg/scheduler/scheduler.go of k8s.io/kubernetes (the Scheduler type, New
// with functional options, Run): watch pending pods, filter the nodes, pick
// one that fits, POST a Binding, and retry the pods that fit nowhere.
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
	"k8s.io/utils/clock"
)

// DefaultSchedulerName is the spec.schedulerName this scheduler answers to
// unless told otherwise. It is not "default-scheduler", so a chapter can run
// beside the real kube-scheduler without the two fighting over pods.
const DefaultSchedulerName = "mini-scheduler"

// relistPeriod bounds how long one watch lasts. When it ends, Run lists the
// pending pods again.
const relistPeriod = time.Minute

// DefaultRetryDelay is how long a pod that could not be scheduled waits
// before its next attempt. A fixed delay is the naive retry: the pod is
// tried again whether or not anything changed that could help it, and a pod
// that waits for a node costs one attempt every delay. Chapter 06 replaces
// it with a queue that retries a pod when an event could make it fit.
const DefaultRetryDelay = 2 * time.Second

// Scheduler watches the pods that name it and binds each to a node that
// passes the filters.
type Scheduler struct {
	client        clientset.Interface
	recorder      events.EventRecorder
	schedulerName string
	rand          *rand.Rand
	framework     *Framework
	clock         clock.WithDelayedExecution
	retryDelay    time.Duration

	// retries receives the pods whose retry delay has passed.
	retries chan types.NamespacedName
	// waiting holds the pods waiting for their retry. Watch events for them
	// are ignored (among them the update of their own PodScheduled
	// condition), so that they are tried again only after the delay.
	waiting map[types.NamespacedName]bool
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

// WithRand injects the source of randomness used to pick among the nodes
// that fit, so tests can seed it and get the same placements every run.
func WithRand(r *rand.Rand) Option {
	return func(s *Scheduler) { s.rand = r }
}

// WithClock injects the clock that times retries, so tests can step it.
func WithClock(c clock.WithDelayedExecution) Option {
	return func(s *Scheduler) { s.clock = c }
}

// WithRetryDelay sets how long an unschedulable pod waits to be tried again.
func WithRetryDelay(d time.Duration) Option {
	return func(s *Scheduler) { s.retryDelay = d }
}

// New returns a Scheduler that talks to the apiserver through client,
// records events on pods through recorder, and filters nodes with the
// in-tree plugins of NewFramework. The plugins' goroutines stop when ctx
// ends.
func New(ctx context.Context, client clientset.Interface, recorder events.EventRecorder, opts ...Option) (*Scheduler, error) {
	fw, err := NewFramework(ctx, client)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{
		client:        client,
		recorder:      recorder,
		schedulerName: DefaultSchedulerName,
		rand:          rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		framework:     fw,
		clock:         clock.RealClock{},
		retryDelay:    DefaultRetryDelay,
		retries:       make(chan types.NamespacedName),
		waiting:       map[types.NamespacedName]bool{},
		bound:         map[types.UID]bool{},
		attempts:      map[types.UID]int{},
	}
	for _, opt := range opts {
		opt(s)
	}
	return s, nil
}

// Run schedules pods until ctx is cancelled. It lists the pending pods, then
// watches for new ones from that list's resourceVersion; when the watch ends
// (after relistPeriod, or on an error) it lists again. Every pod is handled
// in this one goroutine, one after the other, and so are the retries.
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
		case key := <-sched.retries:
			sched.retry(ctx, key)
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

// scheduleRetry tries the pod again once the retry delay has passed.
//
//workshop:part 02/5
func (sched *Scheduler) scheduleRetry(ctx context.Context, pod *v1.Pod) {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	sched.waiting[key] = true
	// The timer's callback must not block: it hands the pod to the
	// scheduling loop from a goroutine of its own.
	sched.clock.AfterFunc(sched.retryDelay, func() {
		go func() {
			select {
			case sched.retries <- key:
			case <-ctx.Done():
			}
		}()
	})
}

// retry fetches the pod as it is now and schedules it, unless it was
// deleted or bound meanwhile.
func (sched *Scheduler) retry(ctx context.Context, key types.NamespacedName) {
	delete(sched.waiting, key)
	pod, err := sched.client.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Fetching a pod to retry it failed; it waits for the next list", "pod", key)
		}
		return
	}
	sched.ScheduleOne(ctx, pod)
}
