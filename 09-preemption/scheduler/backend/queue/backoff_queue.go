package queue

// This file mirrors pkg/scheduler/backend/queue/backoff_queue.go of
// k8s.io/kubernetes (backoffQueue, alignToWindow,
// waitUntilAlignedWithOrderingWindow, lessBackoffCompletedWithPriority,
// getBackoffTime, calculateBackoffDuration, isEntityBackingoff as
// isPodBackingoff, popAllBackoffCompleted, popBackoff), with the feature
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

// backoffQueue holds the pods that wait out their backoff before they may be
// tried again, in two heaps, as upstream's:
//   - queue, the pods some plugin rejected, ordered by the window in which
//     their backoff ends, then as activeQ orders them. Pop may take its
//     head early, when activeQ is empty: a rejected pod's backoff only
//     keeps it from taking turns from pods that wait to be tried;
//   - errorQueue, the pods whose attempt ended in an error, ordered by the
//     end of their backoff. Pop never takes them early: their backoff
//     protects the apiserver, not the other pods.
//
// It is guarded by the PriorityQueue's lock.
type backoffQueue struct {
	clock             clock.Clock
	podInitialBackoff time.Duration
	podMaxBackoff     time.Duration
	queue             *Heap[*framework.QueuedPodInfo]
	errorQueue        *Heap[*framework.QueuedPodInfo]
}

// newBackoffQueue returns an empty backoffQ; activeQLess is activeQ's
// order, which breaks ties within a window.
func newBackoffQueue(clk clock.Clock, podInitialBackoff, podMaxBackoff time.Duration, activeQLess func(a, b *framework.QueuedPodInfo) bool) *backoffQueue {
	bq := &backoffQueue{clock: clk, podInitialBackoff: podInitialBackoff, podMaxBackoff: podMaxBackoff}
	bq.queue = NewHeap(podInfoKey, func(a, b *framework.QueuedPodInfo) bool {
		return bq.lessBackoffCompletedWithPriority(a, b, activeQLess)
	})
	bq.errorQueue = NewHeap(podInfoKey, func(a, b *framework.QueuedPodInfo) bool {
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
func (bq *backoffQueue) lessBackoffCompletedWithPriority(a, b *framework.QueuedPodInfo, activeQLess func(a, b *framework.QueuedPodInfo) bool) bool {
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
func (bq *backoffQueue) getBackoffTime(pInfo *framework.QueuedPodInfo) time.Time {
	if bq.podMaxBackoff == 0 {
		return time.Time{}
	}
	count := pInfo.UnschedulableCount
	if pInfo.ConsecutiveErrorsCount > 0 {
		count = pInfo.ConsecutiveErrorsCount
	}
	if count == 0 {
		return time.Time{}
	}
	if pInfo.BackoffExpiration.IsZero() {
		pInfo.BackoffExpiration = bq.alignToWindow(pInfo.Timestamp.Add(bq.calculateBackoffDuration(count)))
	}
	return pInfo.BackoffExpiration
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

// isPodBackingoff says whether the pod's backoff has not ended yet. The
// stored end is the start of its window, and the pod backs off until the
// next window begins, as upstream's isEntityBackingoff says: the flush at
// that moment takes the whole window.
//
//workshop:part 07/1
func (bq *backoffQueue) isPodBackingoff(pInfo *framework.QueuedPodInfo) bool {
	return !bq.getBackoffTime(pInfo).Before(bq.alignToWindow(bq.clock.Now()))
}

// add puts a pod in backoffQ: in errorQueue if no plugin rejected it (its
// attempt ended in an error), else in queue.
func (bq *backoffQueue) add(logger klog.Logger, pInfo *framework.QueuedPodInfo, event string) {
	if pInfo.UnschedulablePlugins.Len() == 0 && pInfo.PendingPlugins.Len() == 0 {
		bq.queue.Delete(pInfo)
		bq.errorQueue.AddOrUpdate(pInfo)
	} else {
		bq.errorQueue.Delete(pInfo)
		bq.queue.AddOrUpdate(pInfo)
	}
	// "backoff" is how long until the window in which the backoff ends is
	// over, and the flush may take the pod.
	logger.V(3).Info("Pod moved to an internal scheduling queue", "pod", klog.KObj(pInfo.Pod), "event", event, "queue", backoffQ,
		"backoff", bq.getBackoffTime(pInfo).Add(backoffQOrderingWindowDuration).Sub(bq.clock.Now()).Round(time.Millisecond))
}

// get returns the pod of that key from either heap.
func (bq *backoffQueue) get(lookup *framework.QueuedPodInfo) (*framework.QueuedPodInfo, bool) {
	if pInfo, ok := bq.queue.Get(lookup); ok {
		return pInfo, true
	}
	return bq.errorQueue.Get(lookup)
}

// has says whether the pod is in either heap.
func (bq *backoffQueue) has(lookup *framework.QueuedPodInfo) bool {
	return bq.queue.Has(lookup) || bq.errorQueue.Has(lookup)
}

// update puts a pod's new version where its old one was, if in backoffQ,
// and reports whether it was.
func (bq *backoffQueue) update(pInfo *framework.QueuedPodInfo) bool {
	switch {
	case bq.queue.Has(pInfo):
		bq.queue.AddOrUpdate(pInfo)
	case bq.errorQueue.Has(pInfo):
		bq.errorQueue.AddOrUpdate(pInfo)
	default:
		return false
	}
	return true
}

// delete removes the pod from either heap.
func (bq *backoffQueue) delete(lookup *framework.QueuedPodInfo) {
	bq.queue.Delete(lookup)
	bq.errorQueue.Delete(lookup)
}

// list returns the pods of both heaps, in no particular order.
func (bq *backoffQueue) list() []*framework.QueuedPodInfo {
	return append(bq.queue.List(), bq.errorQueue.List()...)
}

// len is the number of pods in both heaps.
func (bq *backoffQueue) len() int {
	return bq.queue.Len() + bq.errorQueue.Len()
}

// lenBackoff is the number of pods Pop may take early: those of queue.
//
//workshop:part 07/4
func (bq *backoffQueue) lenBackoff() int {
	return bq.queue.Len()
}

// popBackoff removes and returns the head of queue, never of errorQueue.
//
//workshop:part 07/4
func (bq *backoffQueue) popBackoff() (*framework.QueuedPodInfo, bool) {
	return bq.queue.Pop()
}

// popAllBackoffCompleted removes and returns the pods of both heaps whose
// backoff has ended: those of queue, in its order (window, then as
// activeQ), then those of errorQueue, the earliest first.
//
//workshop:part 07/4
func (bq *backoffQueue) popAllBackoffCompleted() []*framework.QueuedPodInfo {
	var out []*framework.QueuedPodInfo
	for _, h := range []*Heap[*framework.QueuedPodInfo]{bq.queue, bq.errorQueue} {
		for {
			pInfo, ok := h.Peek()
			if !ok || bq.isPodBackingoff(pInfo) {
				break
			}
			h.Pop()
			out = append(out, pInfo)
		}
	}
	return out
}
