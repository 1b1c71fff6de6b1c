package queue

// This file mirrors pkg/scheduler/backend/queue/backoff_queue.go of
// k8s.io/kubernetes (backoffQueue, getBackoffTime, calculateBackoffDuration,
// isPodBackingoff, popAllBackoffCompleted), without the two additions of
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

// backoffQueue holds the pods that wait out their backoff before they may be
// tried again, ordered by the moment their backoff ends. It is guarded by
// the PriorityQueue's lock.
type backoffQueue struct {
	clock             clock.Clock
	podInitialBackoff time.Duration
	podMaxBackoff     time.Duration
	queue             *Heap[*framework.QueuedPodInfo]
}

func newBackoffQueue(clk clock.Clock, podInitialBackoff, podMaxBackoff time.Duration) *backoffQueue {
	bq := &backoffQueue{clock: clk, podInitialBackoff: podInitialBackoff, podMaxBackoff: podMaxBackoff}
	bq.queue = NewHeap(podInfoKey, func(a, b *framework.QueuedPodInfo) bool {
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
func (bq *backoffQueue) getBackoffTime(pInfo *framework.QueuedPodInfo) time.Time {
	count := pInfo.UnschedulableCount
	if pInfo.ConsecutiveErrorsCount > 0 {
		count = pInfo.ConsecutiveErrorsCount
	}
	if count == 0 {
		return time.Time{}
	}
	if pInfo.BackoffExpiration.IsZero() {
		pInfo.BackoffExpiration = pInfo.Timestamp.Add(bq.calculateBackoffDuration(count))
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

// isPodBackingoff says whether the pod's backoff has not ended yet.
//
//workshop:part 07/1
func (bq *backoffQueue) isPodBackingoff(pInfo *framework.QueuedPodInfo) bool {
	return bq.getBackoffTime(pInfo).After(bq.clock.Now())
}

// add puts a pod in backoffQ.
func (bq *backoffQueue) add(logger klog.Logger, pInfo *framework.QueuedPodInfo, event string) {
	bq.queue.AddOrUpdate(pInfo)
	logger.V(3).Info("Pod moved to an internal scheduling queue", "pod", klog.KObj(pInfo.Pod), "event", event, "queue", backoffQ,
		"backoff", bq.getBackoffTime(pInfo).Sub(bq.clock.Now()).Round(time.Millisecond))
}

// popAllBackoffCompleted removes and returns the pods whose backoff has
// ended, the earliest first.
//
//workshop:part 07/4
func (bq *backoffQueue) popAllBackoffCompleted() []*framework.QueuedPodInfo {
	var out []*framework.QueuedPodInfo
	for {
		pInfo, ok := bq.queue.Peek()
		if !ok || bq.isPodBackingoff(pInfo) {
			return out
		}
		bq.queue.Pop()
		out = append(out, pInfo)
	}
}
