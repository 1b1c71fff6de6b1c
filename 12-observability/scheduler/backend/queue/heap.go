package queue

// This file mirrors pkg/scheduler/backend/heap/heap.go of k8s.io/kubernetes:
// a heap whose items also have a key, so an item can be found, updated or
// removed without a scan. The scheduling queue needs all three: a pod in
// activeQ is updated when its spec changes and removed when it is deleted.
// An item may stand for several pods (a pod group): the heap counts them,
// for the scheduler_pending_pods metric, and counts the pod groups, for
// scheduler_queued_entities.

import (
	"container/heap"

	fwk "k8s.io/kube-scheduler/framework"
)

// Heap is a priority queue of items with unique keys. The item for which
// less(item, other) holds for every other item is popped first. It is not
// safe for concurrent use: the PriorityQueue's lock guards it.
type Heap[T any] struct {
	data *heapData[T]
}

// NewHeap returns an empty Heap ordered by less, with items keyed by keyFunc.
func NewHeap[T any](keyFunc func(T) string, less func(T, T) bool) *Heap[T] {
	return &Heap[T]{data: &heapData[T]{items: map[string]*heapItem[T]{}, keyFunc: keyFunc, less: less}}
}

// AddOrUpdate inserts an item, or replaces the item with the same key and
// moves it to where its new value belongs.
func (h *Heap[T]) AddOrUpdate(obj T) {
	key := h.data.keyFunc(obj)
	if it, ok := h.data.items[key]; ok {
		h.data.size += sizeOf(obj) - it.size
		h.data.groups += isGroup(obj) - isGroup(it.obj)
		it.obj, it.size = obj, sizeOf(obj)
		heap.Fix(h.data, it.index)
		return
	}
	heap.Push(h.data, &heapItem[T]{obj: obj, size: sizeOf(obj)})
}

// Delete removes the item with obj's key; it reports whether there was one.
func (h *Heap[T]) Delete(obj T) bool {
	it, ok := h.data.items[h.data.keyFunc(obj)]
	if !ok {
		return false
	}
	heap.Remove(h.data, it.index)
	return true
}

// Get returns the item with obj's key.
func (h *Heap[T]) Get(obj T) (T, bool) {
	it, ok := h.data.items[h.data.keyFunc(obj)]
	if !ok {
		var zero T
		return zero, false
	}
	return it.obj, true
}

// Has says whether an item with obj's key is in the heap.
func (h *Heap[T]) Has(obj T) bool {
	_, ok := h.data.items[h.data.keyFunc(obj)]
	return ok
}

// Pop removes and returns the first item.
func (h *Heap[T]) Pop() (T, bool) {
	if h.data.Len() == 0 {
		var zero T
		return zero, false
	}
	return heap.Pop(h.data).(*heapItem[T]).obj, true
}

// Peek returns the first item without removing it.
func (h *Heap[T]) Peek() (T, bool) {
	if h.data.Len() == 0 {
		var zero T
		return zero, false
	}
	return h.data.queue[0].obj, true
}

// Len returns the number of items.
func (h *Heap[T]) Len() int { return h.data.Len() }

// Size returns the number of pods the items stand for, each counted as
// it was when it was added or last updated.
func (h *Heap[T]) Size() int { return h.data.size }

// Groups returns how many items are pod groups; the others are pods.
func (h *Heap[T]) Groups() int { return h.data.groups }

// isGroup is 1 for a pod group's entity, else 0.
func isGroup(obj any) int {
	if e, ok := obj.(interface{ Type() fwk.EntityKeyType }); ok && e.Type() == fwk.PodGroupKeyType {
		return 1
	}
	return 0
}

// sizeOf returns how many pods an item stands for: its Size, for a queue
// entity (a pod group has one per member); else one.
func sizeOf(obj any) int {
	if s, ok := obj.(interface{ Size() int }); ok {
		return s.Size()
	}
	return 1
}

// List returns the items in no particular order.
func (h *Heap[T]) List() []T {
	out := make([]T, 0, len(h.data.queue))
	for _, it := range h.data.queue {
		out = append(out, it.obj)
	}
	return out
}

// heapItem is an item, its place in the slice, which heap.Fix and
// heap.Remove need, and its size when it was added.
type heapItem[T any] struct {
	obj   T
	index int
	size  int
}

// heapData implements container/heap's interface.
type heapData[T any] struct {
	items   map[string]*heapItem[T]
	queue   []*heapItem[T]
	keyFunc func(T) string
	less    func(T, T) bool
	// size is the sum of the items' sizes; groups counts the pod groups.
	size, groups int
}

func (h *heapData[T]) Len() int           { return len(h.queue) }
func (h *heapData[T]) Less(i, j int) bool { return h.less(h.queue[i].obj, h.queue[j].obj) }

func (h *heapData[T]) Swap(i, j int) {
	h.queue[i], h.queue[j] = h.queue[j], h.queue[i]
	h.queue[i].index = i
	h.queue[j].index = j
}

func (h *heapData[T]) Push(x any) {
	it := x.(*heapItem[T])
	it.index = len(h.queue)
	h.queue = append(h.queue, it)
	h.items[h.keyFunc(it.obj)] = it
	h.size += it.size
	h.groups += isGroup(it.obj)
}

func (h *heapData[T]) Pop() any {
	last := h.queue[len(h.queue)-1]
	h.queue[len(h.queue)-1] = nil
	h.queue = h.queue[:len(h.queue)-1]
	delete(h.items, h.keyFunc(last.obj))
	h.size -= last.size
	h.groups -= isGroup(last.obj)
	return last
}
