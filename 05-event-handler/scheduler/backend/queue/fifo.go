// Package queue holds the pods waiting to be scheduled. In this chapter it
// is a FIFO, as kube-scheduler's queue was before v1.11 (client-go's
// cache.FIFO): pods are scheduled in the order they arrived, each once,
// however often it was added or updated. Chapter 06 replaces it with
// upstream's PriorityQueue (pkg/scheduler/backend/queue/scheduling_queue.go).
package queue

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// FIFO is safe for concurrent use by the event handlers, the scheduling
// loop, and the binding goroutines.
type FIFO struct {
	mu   sync.Mutex
	cond *sync.Cond
	// order holds the UIDs of the pods ready to be scheduled, oldest first;
	// ready holds their latest copies.
	order []types.UID
	ready map[types.UID]*v1.Pod
	// waiting holds the pods that could not be scheduled, until their retry
	// delay has passed. Updates of such a pod (its own PodScheduled
	// condition among them) change the copy kept here, but do not hurry
	// the retry: this is the naive retry that chapter 06 replaces.
	waiting map[types.UID]*v1.Pod
	// attempts counts how often each pod was popped, until it leaves.
	attempts map[types.UID]int
	closed   bool

	clock      clock.WithDelayedExecution
	retryDelay time.Duration
}

// New returns an empty FIFO whose unschedulable pods are retried after
// retryDelay.
func New(clk clock.WithDelayedExecution, retryDelay time.Duration) *FIFO {
	q := &FIFO{ready: map[types.UID]*v1.Pod{}, waiting: map[types.UID]*v1.Pod{}, attempts: map[types.UID]int{}, clock: clk, retryDelay: retryDelay}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add queues a pod, or replaces the queued or waiting copy of it: a pod is
// in the FIFO at most once, and is scheduled with its latest spec.
func (q *FIFO) Add(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.waiting[pod.UID] != nil:
		q.waiting[pod.UID] = pod
	case q.ready[pod.UID] != nil:
		q.ready[pod.UID] = pod
	default:
		q.ready[pod.UID] = pod
		q.order = append(q.order, pod.UID)
		q.cond.Signal()
	}
}

// Update is Add: the pod is queued with its new spec (a pod whose
// scheduling gates were removed arrives this way).
func (q *FIFO) Update(pod *v1.Pod) { q.Add(pod) }

// Delete drops a pod wherever it is; a deleted pod is never popped. A pod
// that got its node leaves the same way.
func (q *FIFO) Delete(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.waiting, pod.UID)
	delete(q.attempts, pod.UID)
	if q.ready[pod.UID] != nil {
		delete(q.ready, pod.UID)
		for i, uid := range q.order {
			if uid == pod.UID {
				q.order = append(q.order[:i], q.order[i+1:]...)
				break
			}
		}
	}
}

// AddUnschedulable puts back a pod that could not be scheduled. It is
// queued again once the retry delay has passed, with whatever copy of it is
// the latest by then, unless it was deleted meanwhile.
func (q *FIFO) AddUnschedulable(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ready[pod.UID] != nil {
		// Updated while it was being scheduled: it is queued already.
		return
	}
	q.waiting[pod.UID] = pod
	q.clock.AfterFunc(q.retryDelay, func() {
		// A clock may run this while holding its own lock: do not block it.
		go q.retry(pod.UID)
	})
}

func (q *FIFO) retry(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pod := q.waiting[uid]
	if pod == nil {
		return // deleted meanwhile
	}
	delete(q.waiting, uid)
	q.ready[uid] = pod
	q.order = append(q.order, uid)
	q.cond.Signal()
}

// Pop waits for a pod and returns it, oldest first, with the number of
// this attempt to schedule it. It returns nil once the FIFO is closed.
func (q *FIFO) Pop() (*v1.Pod, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.order) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, 0
	}
	uid := q.order[0]
	q.order = q.order[1:]
	pod := q.ready[uid]
	delete(q.ready, uid)
	q.attempts[uid]++
	return pod, q.attempts[uid]
}

// Close makes Pop return nil, now and from then on.
func (q *FIFO) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// Len returns the number of pods ready and waiting, for tests and metrics.
func (q *FIFO) Len() (ready, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order), len(q.waiting)
}
