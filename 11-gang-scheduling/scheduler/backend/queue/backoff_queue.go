package queue

// This file mirrors pkg/scheduler/backend/queue/backoff_queue.go of
// k8s.io/kubernetes (backoffQueue, alignToWindow,
// waitUntilAlignedWithOrderingWindow, lessBackoffCompletedWithPriority,
// getBackoffTime, calculateBackoffDuration, isEntityBackingoff, popAllBackoffCompleted, popBackoff), with the feature
// gate SchedulerPopFromBackoffQ on, as it is by default since v1.33
// (KEP-5142): backoff ends are aligned to one-second windows, and Pop takes
// a pod from backoffQ when activeQ is empty (scheduling_queue.go).

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

// backoffQOrderingWindowDuration is the width of backoffQ's ordering
// windows, and the period of its flush, as upstream's.
const backoffQOrderingWindowDuration = time.Second

// backoffQueue holds the entities (pods and pod groups) that wait out their
// backoff before they may be tried again; a pod group backs off as one, and
// its own counts decide. It has two heaps, as upstream's:
//   - queue, the entities some plugin rejected, ordered by the window in which
//     their backoff ends, then as activeQ orders them. Pop may take its
//     head early, when activeQ is empty: a rejected entity's backoff only
//     keeps it from taking turns from entities that wait to be tried;
//   - errorQueue, the entities with no rejecting plugin of their own,
//     ordered by the end of their backoff: pods whose attempt ended in an
//     error, and every pod group, whose members, not the group, carry the
//     rejecting plugins (as upstream's). Pop never takes them early: an
//     error's backoff protects the apiserver, not the other pods.
//
// It is guarded by the PriorityQueue's lock.
type backoffQueue struct {
	clock             clock.Clock
	podInitialBackoff time.Duration
	podMaxBackoff     time.Duration
	queue             *Heap[framework.QueuedEntityInfo]
	errorQueue        *Heap[framework.QueuedEntityInfo]
}

// newBackoffQueue returns an empty backoffQ; activeQLess is activeQ's
// order, which breaks ties within a window.
func newBackoffQueue(clk clock.Clock, podInitialBackoff, podMaxBackoff time.Duration, activeQLess func(a, b framework.QueuedEntityInfo) bool) *backoffQueue {
	bq := &backoffQueue{clock: clk, podInitialBackoff: podInitialBackoff, podMaxBackoff: podMaxBackoff}
	bq.queue = NewHeap(queuedEntityKeyFunc, func(a, b framework.QueuedEntityInfo) bool {
		return bq.lessBackoffCompletedWithPriority(a, b, activeQLess)
	})
	bq.errorQueue = NewHeap(queuedEntityKeyFunc, func(a, b framework.QueuedEntityInfo) bool {
		return bq.getBackoffTime(a).Before(bq.getBackoffTime(b))
	})
	return bq
}

// alignToWindow truncates t to the start of its ordering window.
func (bq *backoffQueue) alignToWindow(t time.Time) time.Time {
	return t.Truncate(backoffQOrderingWindowDuration)
}

// waitUntilAlignedWithOrderingWindow calls f at the start of every window,
// until stop is closed, as upstream's does: a window's pods all end their
// backoff when it is over, and a flush at that moment moves them at once,
// where a flush at another moment would keep them waiting for up to a
// second more.
func (bq *backoffQueue) waitUntilAlignedWithOrderingWindow(f func(), stop <-chan struct{}) {
	for {
		now := bq.clock.Now()
		timer := bq.clock.NewTimer(bq.alignToWindow(now.Add(backoffQOrderingWindowDuration)).Sub(now))
		select {
		case <-stop:
			timer.Stop()
			return
		case <-timer.C():
		}
		// A tick and Close may come together; select picks either.
		select {
		case <-stop:
			return
		default:
		}
		f()
	}
}

// lessBackoffCompletedWithPriority orders queue: by the window in which
// the backoff ends, then as activeQ does, so that a Pop from an empty
// activeQ takes the pod activeQ would have put first.
func (bq *backoffQueue) lessBackoffCompletedWithPriority(a, b framework.QueuedEntityInfo, activeQLess func(a, b framework.QueuedEntityInfo) bool) bool {
	boA, boB := bq.getBackoffTime(a), bq.getBackoffTime(b)
	if !boA.Equal(boB) {
		return boA.Before(boB)
	}
	return activeQLess(a, b)
}

// getBackoffTime returns when the pod's backoff ends: its last failure plus
// calculateBackoffDuration, truncated to its window. A pod whose last
// attempt ended in an error counts its consecutive errors instead of its
// unschedulable attempts: an apiserver in trouble is not the pod's fault,
// and its backoff protects the apiserver rather than punishing the pod. A
// pod never tried has none, and a maximum backoff of zero turns backoff off.
//
//workshop:part 07/1
func (bq *backoffQueue) getBackoffTime(entity framework.QueuedEntityInfo) time.Time {
	if bq.podMaxBackoff == 0 {
		return time.Time{}
	}
	count := entity.GetUnschedulableCount()
	if entity.GetConsecutiveErrorsCount() > 0 {
		count = entity.GetConsecutiveErrorsCount()
	}
	if count == 0 {
		return time.Time{}
	}
	if entity.GetBackoffExpiration().IsZero() {
		entity.SetBackoffExpiration(bq.alignToWindow(entity.GetTimestamp().Add(bq.calculateBackoffDuration(count))))
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
// The stored end is the start of its window, and the entity backs off
// until the next window begins, as upstream's isEntityBackingoff says: the
// flush at that moment takes the whole window.
//
//workshop:part 07/1
func (bq *backoffQueue) isEntityBackingoff(entity framework.QueuedEntityInfo) bool {
	return !bq.getBackoffTime(entity).Before(bq.alignToWindow(bq.clock.Now()))
}

// add puts an entity in backoffQ: in errorQueue if no plugin rejected it
// (its attempt ended in an error), else in queue.
func (bq *backoffQueue) add(logger klog.Logger, entity framework.QueuedEntityInfo, event string) {
	if entity.GetUnschedulablePlugins().Len() == 0 && entity.GetPendingPlugins().Len() == 0 {
		bq.queue.Delete(entity)
		bq.errorQueue.AddOrUpdate(entity)
	} else {
		bq.errorQueue.Delete(entity)
		bq.queue.AddOrUpdate(entity)
	}
	// "backoff" is how long until the window in which the backoff ends is
	// over, and the flush may take the entity.
	logMove(logger, entity, event, backoffQ, "backoff", bq.getBackoffTime(entity).Add(backoffQOrderingWindowDuration).Sub(bq.clock.Now()).Round(time.Millisecond))
}

// get returns the entity of that key from either heap.
func (bq *backoffQueue) get(lookup framework.QueuedEntityInfo) (framework.QueuedEntityInfo, bool) {
	if pInfo, ok := bq.queue.Get(lookup); ok {
		return pInfo, true
	}
	return bq.errorQueue.Get(lookup)
}

// has says whether the entity is in either heap.
func (bq *backoffQueue) has(lookup framework.QueuedEntityInfo) bool {
	return bq.queue.Has(lookup) || bq.errorQueue.Has(lookup)
}

// update puts an entity's new version where its old one was, if in
// backoffQ, and reports whether it was.
func (bq *backoffQueue) update(entity framework.QueuedEntityInfo) bool {
	switch {
	case bq.queue.Has(entity):
		bq.queue.AddOrUpdate(entity)
	case bq.errorQueue.Has(entity):
		bq.errorQueue.AddOrUpdate(entity)
	default:
		return false
	}
	return true
}

// delete removes the entity from either heap.
func (bq *backoffQueue) delete(lookup framework.QueuedEntityInfo) {
	bq.queue.Delete(lookup)
	bq.errorQueue.Delete(lookup)
}

// list returns the entities of both heaps, in no particular order.
func (bq *backoffQueue) list() []framework.QueuedEntityInfo {
	return append(bq.queue.List(), bq.errorQueue.List()...)
}

// len is the number of entities in both heaps.
func (bq *backoffQueue) len() int {
	return bq.queue.Len() + bq.errorQueue.Len()
}

// size is the number of pods in both heaps, a pod group's members each.
func (bq *backoffQueue) size() int {
	return bq.queue.Size() + bq.errorQueue.Size()
}

// lenBackoff is the number of entities Pop may take early: those of queue.
//
//workshop:part 07/4
func (bq *backoffQueue) lenBackoff() int {
	return bq.queue.Len()
}

// popBackoff removes and returns the head of queue, never of errorQueue.
//
//workshop:part 07/4
func (bq *backoffQueue) popBackoff() (framework.QueuedEntityInfo, bool) {
	return bq.queue.Pop()
}

// popAllBackoffCompleted removes and returns the entities of both heaps
// whose backoff has ended: those of queue, in its order (window, then as
// activeQ), then those of errorQueue, the earliest first.
//
//workshop:part 07/4
func (bq *backoffQueue) popAllBackoffCompleted() []framework.QueuedEntityInfo {
	var out []framework.QueuedEntityInfo
	for _, h := range []*Heap[framework.QueuedEntityInfo]{bq.queue, bq.errorQueue} {
		for {
			entity, ok := h.Peek()
			if !ok || bq.isEntityBackingoff(entity) {
				break
			}
			h.Pop()
			out = append(out, entity)
		}
	}
	return out
}
