package queue

// This file mirrors pkg/scheduler/backend/queue/backoff_queue.go of
// k8s.io/kubernetes (backoffQueue, getBackoffTime, calculateBackoffDuration,
// isEntityBackingoff, popAllBackoffCompleted), without the two additions of
// KEP-5142 in v1.37: backoff times aligned to one-second windows, and popping
// from backoffQ early when activeQ is empty.

import (
	"time"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"
)

// The default backoff of a pod, as upstream's podInitialBackoffSeconds and
// podMaxBackoffSeconds.
const (
	DefaultPodInitialBackoffDuration = 1 * time.Second
	DefaultPodMaxBackoffDuration     = 10 * time.Second
)

// backoffQueue holds the entities (pods and pod groups) that wait out their
// backoff before they may be tried again, ordered by the moment their
// backoff ends. A pod group backs off as one: its own counts decide. It is
// guarded by the PriorityQueue's lock.
type backoffQueue struct {
	clock             clock.Clock
	podInitialBackoff time.Duration
	podMaxBackoff     time.Duration
	queue             *Heap[framework.QueuedEntityInfo]
}

func newBackoffQueue(clk clock.Clock, podInitialBackoff, podMaxBackoff time.Duration) *backoffQueue {
	bq := &backoffQueue{clock: clk, podInitialBackoff: podInitialBackoff, podMaxBackoff: podMaxBackoff}
	bq.queue = NewHeap(queuedEntityKeyFunc, func(a, b framework.QueuedEntityInfo) bool {
		return bq.getBackoffTime(a).Before(bq.getBackoffTime(b))
	})
	return bq
}

// getBackoffTime returns when the pod's backoff ends: its last failure plus
// calculateBackoffDuration. A pod whose last attempt ended in an error
// counts its consecutive errors instead of its unschedulable attempts: an
// apiserver in trouble is not the pod's fault, and its backoff protects the
// apiserver rather than punishing the pod. A pod never tried has none.
//
//workshop:part 07/1
func (bq *backoffQueue) getBackoffTime(entity framework.QueuedEntityInfo) time.Time {
	count := entity.GetUnschedulableCount()
	if entity.GetConsecutiveErrorsCount() > 0 {
		count = entity.GetConsecutiveErrorsCount()
	}
	if count == 0 {
		return time.Time{}
	}
	if entity.GetBackoffExpiration().IsZero() {
		entity.SetBackoffExpiration(entity.GetTimestamp().Add(bq.calculateBackoffDuration(count)))
	}
	return entity.GetBackoffExpiration()
}

// calculateBackoffDuration is initial·2^(count-1), capped at the maximum:
// 1, 2, 4, 8, 10, 10... seconds by default.
//
//workshop:part 07/1
func (bq *backoffQueue) calculateBackoffDuration(count int) time.Duration {
	if count == 0 {
		return 0
	}
	shift := count - 1
	if shift >= 62 || bq.podInitialBackoff > bq.podMaxBackoff>>shift {
		return bq.podMaxBackoff
	}
	return bq.podInitialBackoff << shift
}

// isEntityBackingoff says whether the entity's backoff has not ended yet.
//
//workshop:part 07/1
func (bq *backoffQueue) isEntityBackingoff(entity framework.QueuedEntityInfo) bool {
	return bq.getBackoffTime(entity).After(bq.clock.Now())
}

// add puts an entity in backoffQ.
func (bq *backoffQueue) add(logger klog.Logger, entity framework.QueuedEntityInfo, event string) {
	bq.queue.AddOrUpdate(entity)
	logMove(logger, entity, event, backoffQ, "backoff", bq.getBackoffTime(entity).Sub(bq.clock.Now()).Round(time.Millisecond))
}

// popAllBackoffCompleted removes and returns the entities whose backoff has
// ended, the earliest first.
//
//workshop:part 07/4
func (bq *backoffQueue) popAllBackoffCompleted() []framework.QueuedEntityInfo {
	var out []framework.QueuedEntityInfo
	for {
		entity, ok := bq.queue.Peek()
		if !ok || bq.isEntityBackingoff(entity) {
			return out
		}
		bq.queue.Pop()
		out = append(out, entity)
	}
}
