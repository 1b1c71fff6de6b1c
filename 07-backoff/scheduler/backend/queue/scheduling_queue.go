// Package queue holds the pods waiting to be scheduled. It mirrors
// pkg/scheduler/backend/queue/scheduling_queue.go of k8s.io/kubernetes
// (PriorityQueue, its Add, AddUnschedulablePodIfNotPresent, Pop, Update,
// Delete, MoveAllToActiveOrBackoffQueue, isPodWorthRequeuing,
// flushBackoffQCompleted and flushUnschedulablePodsLeftover) with its three
// parts:
//
//   - activeQ, a heap of the pods ready to be tried, ordered by the
//     QueueSort plugin (higher priority first, then the older timestamp);
//   - backoffQ, the pods that wait out their backoff, ordered by when it
//     ends (backoff_queue.go). When activeQ is empty, Pop takes a pod from
//     backoffQ before its backoff ends, as upstream's does by default
//     (SchedulerPopFromBackoffQ): a backoff only keeps a pod from taking
//     turns from pods waiting to be tried;
//   - the unschedulable pool, the pods that were tried and failed. A pod
//     leaves it only when a cluster event could make it schedulable: an event
//     that one of the plugins which rejected it registered for in its
//     EventsToRegister. The leftover flush is the safety net for events
//     nobody registered.
//
// An event that arrives while a pod is being scheduled is not lost: the
// queue counts scheduling cycles and remembers the cycle of the last move
// request (moveRequestCycle), as upstream's queue did until queueing hints
// replaced it. Per-plugin queueing hints come in chapter 08.
package queue

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"

	"minisched/07-backoff/scheduler/metrics"
)

// The names of the queues in log lines, as upstream's.
const (
	activeQ        = "Active"
	backoffQ       = "Backoff"
	unschedulableQ = "Unschedulable"
)

// DefaultPodMaxInUnschedulablePodsDuration is how long a pod may stay in the
// unschedulable pool before the leftover flush moves it back to activeQ,
// whatever happened meanwhile. It is upstream's default.
const DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute

// flushInterval is how often the leftover flush looks at the pool, as
// upstream's. (The backoff flush runs at every ordering window of
// backoffQ: backoff_queue.go.)
const flushInterval = 30 * time.Second

// ClusterEventMap says, for every cluster event a plugin registered for,
// which plugins registered it. It is built from the plugins'
// EventsToRegister. (Upstream's queue had a map of this name before v1.28;
// since then a QueueingHintMap carries a hint function per plugin too, as
// chapter 08's does.)
type ClusterEventMap map[fwk.ClusterEvent]sets.Set[string]

// PreEnqueueCheck picks the pods an event may move; nil means every pod.
type PreEnqueueCheck func(pod *v1.Pod) bool

// PriorityQueue is safe for concurrent use by the event handlers, the
// scheduling loop and the binding goroutines. One lock guards everything;
// Pop waits on a condition of that lock.
type PriorityQueue struct {
	clock                             clock.Clock
	podInitialBackoffDuration         time.Duration
	podMaxBackoffDuration             time.Duration
	podMaxInUnschedulablePodsDuration time.Duration
	clusterEventMap                   ClusterEventMap
	// preEnqueuePlugins run before a pod enters activeQ; pluginToEvents
	// holds the events each plugin registered, for a pod it gates.
	preEnqueuePlugins []fwk.PreEnqueuePlugin
	pluginToEvents    map[string][]fwk.ClusterEvent

	lock sync.Mutex
	cond sync.Cond
	// activeQ holds the pods to try next, the best first.
	activeQ *Heap[*framework.QueuedPodInfo]
	// backoffQ holds the pods that wait out their backoff.
	backoffQ *backoffQueue
	// unschedulablePods holds the pods that failed, by namespace/name, each
	// with the plugins that rejected it.
	unschedulablePods map[string]*framework.QueuedPodInfo
	// gatedPods holds the keys of the pods in the pool that a PreEnqueue
	// plugin holds back, for scheduler_pending_pods{queue="gated"}.
	gatedPods sets.Set[string]
	closed    bool
	stop      chan struct{}
	// schedulingCycle counts the pods popped. moveRequestCycle is the
	// cycle at the last event of interest: a pod that fails in a cycle not
	// later than it may have missed that event, and goes to backoffQ rather
	// than to the pool.
	schedulingCycle  int64
	moveRequestCycle int64
}

// Option configures a PriorityQueue.
type Option func(*PriorityQueue)

// WithClock injects the clock that timestamps pods and times the leftover
// flush, so tests can step it.
func WithClock(c clock.Clock) Option {
	return func(p *PriorityQueue) { p.clock = c }
}

// WithPodInitialBackoffDuration sets the backoff after a pod's first failure.
func WithPodInitialBackoffDuration(d time.Duration) Option {
	return func(p *PriorityQueue) { p.podInitialBackoffDuration = d }
}

// WithPodMaxBackoffDuration caps a pod's backoff.
func WithPodMaxBackoffDuration(d time.Duration) Option {
	return func(p *PriorityQueue) { p.podMaxBackoffDuration = d }
}

// WithPodMaxInUnschedulablePodsDuration sets how long a pod may wait in the
// unschedulable pool before the leftover flush retries it.
func WithPodMaxInUnschedulablePodsDuration(d time.Duration) Option {
	return func(p *PriorityQueue) { p.podMaxInUnschedulablePodsDuration = d }
}

// WithClusterEventMap sets which plugins registered which events.
func WithClusterEventMap(m ClusterEventMap) Option {
	return func(p *PriorityQueue) { p.clusterEventMap = m }
}

// WithPreEnqueuePlugins sets the plugins that may hold a pod back before it
// enters activeQ (SchedulingGates, for a pod with scheduling gates).
func WithPreEnqueuePlugins(pls []fwk.PreEnqueuePlugin) Option {
	return func(p *PriorityQueue) { p.preEnqueuePlugins = pls }
}

// NewPriorityQueue returns an empty queue whose activeQ is ordered by
// lessFn, the QueueSort plugin's Less.
func NewPriorityQueue(lessFn fwk.LessFunc, opts ...Option) *PriorityQueue {
	p := &PriorityQueue{
		clock:                             clock.RealClock{},
		podInitialBackoffDuration:         DefaultPodInitialBackoffDuration,
		podMaxBackoffDuration:             DefaultPodMaxBackoffDuration,
		podMaxInUnschedulablePodsDuration: DefaultPodMaxInUnschedulablePodsDuration,
		unschedulablePods:                 map[string]*framework.QueuedPodInfo{},
		gatedPods:                         sets.New[string](),
		stop:                              make(chan struct{}),
		// No cycle has seen an event yet: -1 is below the first cycle, 0.
		moveRequestCycle: -1,
	}
	for _, opt := range opts {
		opt(p)
	}
	// A gated pod moves only on the events its gating plugin registered.
	p.pluginToEvents = map[string][]fwk.ClusterEvent{}
	for event, plugins := range p.clusterEventMap {
		for plugin := range plugins {
			p.pluginToEvents[plugin] = append(p.pluginToEvents[plugin], event)
		}
	}
	p.cond.L = &p.lock
	p.activeQ = NewHeap(podInfoKey, func(a, b *framework.QueuedPodInfo) bool { return lessFn(a, b) })
	p.backoffQ = newBackoffQueue(p.clock, p.podInitialBackoffDuration, p.podMaxBackoffDuration, func(a, b *framework.QueuedPodInfo) bool { return lessFn(a, b) })
	return p
}

func podInfoKey(pInfo *framework.QueuedPodInfo) string { return podKey(pInfo.Pod) }

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

// Run starts the two flushes, until Close: at the start of every second
// the pods whose backoff ended go to activeQ, and every 30 seconds the
// leftovers of the unschedulable pool.
func (p *PriorityQueue) Run(logger klog.Logger) {
	go p.backoffQ.waitUntilAlignedWithOrderingWindow(func() { p.flushBackoffQCompleted(logger) }, p.stop)
	go wait.Until(func() { p.flushUnschedulablePodsLeftover(logger) }, flushInterval, p.stop)
}

// Close makes Pop return an error, now and from then on, and stops the
// flush.
func (p *PriorityQueue) Close() {
	p.lock.Lock()
	defer p.lock.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	close(p.stop)
	p.cond.Broadcast()
}

// newQueuedPodInfo wraps a pod for the queue, timestamped now.
func (p *PriorityQueue) newQueuedPodInfo(pod *v1.Pod) *framework.QueuedPodInfo {
	// NewPodInfo fails only on affinity terms the apiserver should have
	// refused; the pod is queued anyway and its plugins report the problem.
	podInfo, _ := framework.NewPodInfo(pod)
	return &framework.QueuedPodInfo{PodInfo: podInfo, QueueingParams: framework.QueueingParams{Timestamp: p.clock.Now()}}
}

// Add queues a new pod in activeQ.
//
//workshop:part 06/1
func (p *PriorityQueue) Add(logger klog.Logger, pod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	if p.moveToActiveQ(logger, p.newQueuedPodInfo(pod), framework.EventUnscheduledPodAdd.Label(), false) {
		p.cond.Broadcast()
	}
}

// moveToActiveQ puts a pod in activeQ, wherever it was, unless a
// PreEnqueue plugin holds it back: then it waits in the unschedulable pool,
// gated, and costs no scheduling cycle until an event its gating plugin
// registered (the removal of its last scheduling gate) moves it again. It
// reports whether the pod went to activeQ. Every move between the queue's
// parts goes through here or through AddUnschedulablePodIfNotPresent, and
// each logs one line with the event that caused it, so that a pod can be
// followed through the queue in the log. The caller holds the lock and
// wakes Pop.
//
// A pod that comes straight from backoffQ (movesFromBackoffQ) passed the
// PreEnqueue plugins when it entered backoffQ: Pop may take it from there,
// so moveToBackoffQ runs them, and they do not run twice.
//
//workshop:part 06/1
func (p *PriorityQueue) moveToActiveQ(logger klog.Logger, pInfo *framework.QueuedPodInfo, event string, movesFromBackoffQ bool) bool {
	key := podInfoKey(pInfo)
	if !movesFromBackoffQ {
		p.runPreEnqueuePlugins(logger, pInfo)
	}
	if pInfo.GatingPlugin != "" {
		p.backoffQ.delete(pInfo)
		p.parkGated(logger, pInfo, event)
		return false
	}
	p.deleteFromPool(key)
	p.backoffQ.delete(pInfo)
	p.activeQ.AddOrUpdate(pInfo)
	logger.V(3).Info("Pod moved to an internal scheduling queue", "pod", klog.KObj(pInfo.Pod), "event", event, "queue", activeQ)
	metrics.SchedulerQueueIncomingPods.WithLabelValues("active", event).Inc()
	p.updateMetrics()
	return true
}

// parkGated puts a pod that a PreEnqueue plugin holds back in the
// unschedulable pool, gated, whether it was on its way to activeQ or to
// backoffQ. The first time it comes in, it is logged and counted in
// queue_incoming_pods_total, as upstream's unschedulableEntities.addOrUpdate
// counts a new entry. The caller holds the lock.
func (p *PriorityQueue) parkGated(logger klog.Logger, pInfo *framework.QueuedPodInfo, event string) {
	key := podInfoKey(pInfo)
	if _, ok := p.unschedulablePods[key]; !ok {
		logger.V(5).Info("Pod moved to an internal scheduling queue, because it is gated", "pod", klog.KObj(pInfo.Pod), "event", event, "queue", unschedulableQ, "gatingPlugin", pInfo.GatingPlugin)
		metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", event).Inc()
	}
	p.unschedulablePods[key] = pInfo
	p.gatedPods.Insert(key)
	p.updateMetrics()
}

// runPreEnqueuePlugins runs the PreEnqueue plugins on the pod and records
// the first that rejects it as its gating plugin, among its rejecting
// plugins, so that the events that plugin registered can move the pod, as
// upstream's runPreEnqueuePlugins does. A pod every plugin lets through has
// no gating plugin. (Upstream runs the last gating plugin first, which
// makes no difference with the one PreEnqueue plugin here.)
func (p *PriorityQueue) runPreEnqueuePlugins(logger klog.Logger, pInfo *framework.QueuedPodInfo) {
	for _, pl := range p.preEnqueuePlugins {
		s := pl.PreEnqueue(context.Background(), pInfo.Pod)
		if s.IsSuccess() {
			continue
		}
		if pInfo.UnschedulablePlugins == nil {
			pInfo.UnschedulablePlugins = sets.New[string]()
		}
		pInfo.UnschedulablePlugins.Insert(pl.Name())
		pInfo.GatingPlugin = pl.Name()
		pInfo.GatingPluginEvents = p.pluginToEvents[pl.Name()]
		logger.V(4).Info("Status after running PreEnqueue plugin", "pod", klog.KObj(pInfo.Pod), "plugin", pl.Name(), "status", s)
		return
	}
	pInfo.GatingPlugin = ""
	pInfo.GatingPluginEvents = nil
}

// deleteFromPool removes a pod from the unschedulable pool, gated or not.
// The caller holds the lock.
func (p *PriorityQueue) deleteFromPool(key string) {
	delete(p.unschedulablePods, key)
	p.gatedPods.Delete(key)
}

// moveToBackoffQ puts a pod in backoffQ, wherever it was, unless a
// PreEnqueue plugin holds it back: then it waits in the unschedulable pool,
// gated, as in moveToActiveQ. The plugins run here, not when the pod leaves
// backoffQ, since Pop may take it from backoffQ directly. It reports
// whether the pod went to backoffQ. The caller holds the lock and wakes
// Pop: a pod in backoffQ is one Pop may take.
//
//workshop:part 07/2
func (p *PriorityQueue) moveToBackoffQ(logger klog.Logger, pInfo *framework.QueuedPodInfo, event string) bool {
	key := podInfoKey(pInfo)
	p.runPreEnqueuePlugins(logger, pInfo)
	if pInfo.GatingPlugin != "" {
		p.parkGated(logger, pInfo, event)
		return false
	}
	p.deleteFromPool(key)
	p.backoffQ.add(logger, pInfo, event)
	metrics.SchedulerQueueIncomingPods.WithLabelValues("backoff", event).Inc()
	p.updateMetrics()
	return true
}

// requeuePod moves a pod that an event may help out of the pool: to
// backoffQ while its backoff lasts, else to activeQ. It reports whether the
// pod went to either, for the caller to wake Pop. The caller holds the
// lock.
//
//workshop:part 07/3
func (p *PriorityQueue) requeuePod(logger klog.Logger, pInfo *framework.QueuedPodInfo, event string) bool {
	if p.backoffQ.isPodBackingoff(pInfo) {
		return p.moveToBackoffQ(logger, pInfo, event)
	}
	return p.moveToActiveQ(logger, pInfo, event, false)
}

// AddUnschedulablePodIfNotPresent puts a pod that failed back in the queue.
// Its rejecting plugins must already be set from the failure's diagnosis.
// podSchedulingCycle is the cycle in which the pod was popped.
//
// The pod's backoff grows with its failures: a failure with rejecting
// plugins counts as unschedulable, one without (an error: no nodes, an API
// failure) counts apart, as a consecutive error. Then the pod goes:
//   - to backoffQ if no plugin rejected it: no event may come to move it,
//     so it is simply retried after its (error) backoff;
//   - to backoffQ if an event of interest arrived since it was popped
//     (moveRequestCycle >= podSchedulingCycle): that event found it in
//     neither activeQ nor the pool, and may be the one that helps it;
//   - else to the unschedulable pool, to wait for an event.
//
//workshop:part 06/2
//workshop:part 07/2
func (p *PriorityQueue) AddUnschedulablePodIfNotPresent(logger klog.Logger, pInfo *framework.QueuedPodInfo, podSchedulingCycle int64) error {
	p.lock.Lock()
	defer p.lock.Unlock()
	key := podInfoKey(pInfo)
	if _, ok := p.unschedulablePods[key]; ok {
		return fmt.Errorf("pod %v is already present in the unschedulable pool", klog.KObj(pInfo.Pod))
	}
	if p.activeQ.Has(pInfo) {
		return fmt.Errorf("pod %v is already present in the active queue", klog.KObj(pInfo.Pod))
	}
	if p.backoffQ.has(pInfo) {
		return fmt.Errorf("pod %v is already present in the backoff queue", klog.KObj(pInfo.Pod))
	}
	rejectorPlugins := pInfo.UnschedulablePlugins.Union(pInfo.PendingPlugins)
	if rejectorPlugins.Len() == 0 {
		pInfo.ConsecutiveErrorsCount++
	} else {
		pInfo.UnschedulableCount++
		pInfo.ConsecutiveErrorsCount = 0
	}
	// The pod goes behind the pods that waited while it was tried: a pod
	// that keeps failing cannot keep the head of activeQ. Its backoff counts
	// from now.
	pInfo.Timestamp = p.clock.Now()
	pInfo.BackoffExpiration = time.Time{}
	if rejectorPlugins.Len() == 0 || p.moveRequestCycle >= podSchedulingCycle {
		if p.moveToBackoffQ(logger, pInfo, framework.ScheduleAttemptFailure) {
			p.cond.Broadcast()
		}
		return nil
	}
	p.unschedulablePods[key] = pInfo
	logger.V(3).Info("Pod moved to an internal scheduling queue", "pod", klog.KObj(pInfo.Pod), "event", framework.ScheduleAttemptFailure, "queue", unschedulableQ,
		"unschedulablePlugins", sets.List(rejectorPlugins))
	metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", framework.ScheduleAttemptFailure).Inc()
	p.updateMetrics()
	return nil
}

// SchedulingCycle returns the number of pods popped so far.
func (p *PriorityQueue) SchedulingCycle() int64 {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.schedulingCycle
}

// flushBackoffQCompleted moves to activeQ the pods whose backoff ended.
//
//workshop:part 07/4
func (p *PriorityQueue) flushBackoffQCompleted(logger klog.Logger) {
	p.lock.Lock()
	defer p.lock.Unlock()
	activated := false
	for _, pInfo := range p.backoffQ.popAllBackoffCompleted() {
		if p.moveToActiveQ(logger, pInfo, framework.BackoffComplete, true) {
			activated = true
		}
	}
	if activated {
		p.cond.Broadcast()
	}
}

// Pop waits for a pod in activeQ and returns the best one, counting the
// attempt. When activeQ is empty, it takes the head of backoffQ instead,
// before its backoff ends, as upstream's activeQueue.unlockedPop does: the
// scheduler would otherwise idle while pods wait. Only pods some plugin
// rejected are taken early; a pod whose attempt ended in an error waits
// out its backoff. It returns an error once the queue is closed.
//
//workshop:part 06/1
func (p *PriorityQueue) Pop(logger klog.Logger) (*framework.QueuedPodInfo, error) {
	p.lock.Lock()
	defer p.lock.Unlock()
	for p.activeQ.Len() == 0 && p.backoffQ.lenBackoff() == 0 && !p.closed {
		p.cond.Wait()
	}
	if p.closed {
		return nil, fmt.Errorf("scheduling queue is closed")
	}
	pInfo, ok := p.activeQ.Pop()
	if !ok {
		pInfo, _ = p.backoffQ.popBackoff()
		logger.V(3).Info("Pod moved to an internal scheduling queue", "pod", klog.KObj(pInfo.Pod), "event", framework.PopFromBackoffQ, "queue", activeQ)
		metrics.SchedulerQueueIncomingPods.WithLabelValues("active", framework.PopFromBackoffQ).Inc()
	}
	pInfo.Attempts++
	p.schedulingCycle++
	p.updateMetrics()
	return pInfo, nil
}

// Update replaces a queued pod with its new version, as upstream's does:
//   - in activeQ or backoffQ, the pod is updated in place;
//   - in the unschedulable pool, the update is an event about the pod
//     itself (TargetPod). If a plugin that rejected the pod registered for
//     it, the pod moves to backoffQ or activeQ; otherwise it stays, updated;
//   - anywhere else (never queued, or being scheduled now), it is added
//     to activeQ.
func (p *PriorityQueue) Update(logger klog.Logger, oldPod, newPod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	lookup := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: oldPod}}
	if pInfo, ok := p.activeQ.Get(lookup); ok {
		_, _ = pInfo.Update(newPod)
		p.activeQ.AddOrUpdate(pInfo)
		return
	}
	if pInfo, ok := p.backoffQ.get(lookup); ok {
		_, _ = pInfo.Update(newPod)
		p.backoffQ.update(pInfo)
		return
	}
	if pInfo, ok := p.unschedulablePods[podKey(oldPod)]; ok {
		_, _ = pInfo.Update(newPod)
		for _, evt := range framework.PodSchedulingPropertiesChange(newPod, oldPod, true) {
			if p.isPodWorthRequeuing(logger, pInfo, evt) {
				if p.requeuePod(logger, pInfo, evt.Label()) {
					p.cond.Broadcast()
				}
				return
			}
		}
		return
	}
	// Added as a new pod, under UnscheduledPodAdd, as upstream's Update
	// calls addPod.
	if p.moveToActiveQ(logger, p.newQueuedPodInfo(newPod), framework.EventUnscheduledPodAdd.Label(), false) {
		p.cond.Broadcast()
	}
}

// Delete removes a pod from wherever it is queued. A pod being scheduled
// is not in the queue; the failure handler finds it gone from the informer
// and does not put it back.
func (p *PriorityQueue) Delete(pod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	lookup := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod}}
	p.activeQ.Delete(lookup)
	p.backoffQ.delete(lookup)
	p.deleteFromPool(podKey(pod))
	p.updateMetrics()
}

// MoveAllToActiveOrBackoffQueue moves out of the unschedulable pool every
// pod that event could make schedulable, and that passes preCheck: to
// backoffQ if it is still backing off, else to activeQ. The event handlers
// call it for every cluster event. An event of interest also records the
// current scheduling cycle as a move request, for the pods being scheduled
// right now.
// Each call that looks at the pool logs the message "Cluster event handled"
// at -v=5, with the event and the number of pods moved: the integration
// tests wait for it.
//
//workshop:part 06/4
//workshop:part 07/3
func (p *PriorityQueue) MoveAllToActiveOrBackoffQueue(logger klog.Logger, event fwk.ClusterEvent, preCheck PreEnqueueCheck) {
	p.lock.Lock()
	defer p.lock.Unlock()
	if !p.isEventOfInterest(event) {
		logger.V(5).Info("Cluster event handled: no enabled plugin registered for it", "event", event.Label(), "unschedulablePods", len(p.unschedulablePods))
		return
	}
	var toMove []*framework.QueuedPodInfo
	for _, pInfo := range p.unschedulablePods {
		if preCheck != nil && !preCheck(pInfo.Pod) {
			continue
		}
		// A gated pod moves only on an event its gating plugin registered
		// (or a wildcard): no other event can lift its gate.
		if pInfo.GatingPlugin != "" && !framework.ClusterEventIsWildCard(event) && !framework.MatchAnyClusterEvent(event, pInfo.GatingPluginEvents) {
			continue
		}
		if p.isPodWorthRequeuing(logger, pInfo, event) {
			toMove = append(toMove, pInfo)
		}
	}
	activated := false
	for _, pInfo := range toMove {
		// Out of the pool first, as upstream's
		// moveEntitiesToActiveOrBackoffQueue takes it: a pod a gate keeps
		// there comes back in, and counts as coming in.
		p.deleteFromPool(podInfoKey(pInfo))
		if p.requeuePod(logger, pInfo, event.Label()) {
			activated = true
		}
	}
	p.moveRequestCycle = p.schedulingCycle
	logger.V(5).Info("Cluster event handled", "event", event.Label(), "moved", len(toMove), "unschedulablePods", len(p.unschedulablePods))
	// Wake Pop only once every pod is in, so that it takes the best one.
	if activated {
		p.cond.Broadcast()
	}
}

// isEventOfInterest says whether any enabled plugin registered for event.
//
//workshop:part 06/3
func (p *PriorityQueue) isEventOfInterest(event fwk.ClusterEvent) bool {
	if framework.ClusterEventIsWildCard(event) {
		return true
	}
	for registered := range p.clusterEventMap {
		if framework.MatchClusterEvents(registered, event) {
			return true
		}
	}
	return false
}

// isPodWorthRequeuing says whether event could make the pod schedulable:
// it does if one of the plugins that rejected the pod registered for an
// event that matches it. (Upstream then asks that plugin's queueing hint;
// here every hint answers Queue, so registering is enough.) A pod that no
// plugin rejected is moved by any event, and a wildcard event moves every
// pod.
//
//workshop:part 06/3
func (p *PriorityQueue) isPodWorthRequeuing(logger klog.Logger, pInfo *framework.QueuedPodInfo, event fwk.ClusterEvent) bool {
	rejectorPlugins := pInfo.UnschedulablePlugins.Union(pInfo.PendingPlugins)
	if rejectorPlugins.Len() == 0 {
		logger.V(6).Info("Worth requeuing because no failed plugins", "pod", klog.KObj(pInfo.Pod))
		return true
	}
	if framework.ClusterEventIsWildCard(event) {
		logger.V(6).Info("Worth requeuing because the event is wildcard", "pod", klog.KObj(pInfo.Pod), "event", event.Label())
		return true
	}
	for registered, plugins := range p.clusterEventMap {
		if framework.MatchClusterEvents(registered, event) && plugins.HasAny(rejectorPlugins.UnsortedList()...) {
			return true
		}
	}
	return false
}

// flushUnschedulablePodsLeftover moves to activeQ the pods that have waited
// in the unschedulable pool longer than podMaxInUnschedulablePodsDuration:
// a plugin may have missed registering an event that helps them. The flush
// is a move request like any event's (v1.33's movePodsToActiveOrBackoffQueue
// set moveRequestCycle for it too): a pod being scheduled meanwhile that
// fails goes to backoffQ, not to the pool for five more minutes.
//
//workshop:part 06/2
func (p *PriorityQueue) flushUnschedulablePodsLeftover(logger klog.Logger) {
	p.lock.Lock()
	defer p.lock.Unlock()
	now := p.clock.Now()
	var toMove []*framework.QueuedPodInfo
	for _, pInfo := range p.unschedulablePods {
		// The later of its failure and its last flush: a gated pod, which
		// never fails, is flushed once per period, not at every tick.
		last := pInfo.Timestamp
		if pInfo.FlushTimestamp.After(last) {
			last = pInfo.FlushTimestamp
		}
		if now.Sub(last) > p.podMaxInUnschedulablePodsDuration {
			pInfo.FlushTimestamp = now
			toMove = append(toMove, pInfo)
		}
	}
	if len(toMove) == 0 {
		return
	}
	activated := false
	for _, pInfo := range toMove {
		// Out of the pool first, as upstream's
		// moveEntitiesToActiveOrBackoffQueue takes it: a pod a gate keeps
		// there comes back in, and counts as coming in.
		p.deleteFromPool(podInfoKey(pInfo))
		if p.requeuePod(logger, pInfo, framework.UnschedulableTimeout) {
			activated = true
		}
	}
	p.moveRequestCycle = p.schedulingCycle
	if activated {
		p.cond.Broadcast()
	}
}

// GetPod returns the queued pod of that name, from activeQ or the
// unschedulable pool.
func (p *PriorityQueue) GetPod(name, namespace string) (*framework.QueuedPodInfo, bool) {
	p.lock.Lock()
	defer p.lock.Unlock()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if pInfo, ok := p.unschedulablePods[podKey(pod)]; ok {
		return pInfo, true
	}
	lookup := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod}}
	if pInfo, ok := p.backoffQ.get(lookup); ok {
		return pInfo, true
	}
	return p.activeQ.Get(lookup)
}

// PodsInActiveQ returns the pods in activeQ, in no particular order.
func (p *PriorityQueue) PodsInActiveQ() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	var out []*v1.Pod
	for _, pInfo := range p.activeQ.List() {
		out = append(out, pInfo.Pod)
	}
	return out
}

// PodsInBackoffQ returns the pods in backoffQ, in no particular order.
func (p *PriorityQueue) PodsInBackoffQ() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	var out []*v1.Pod
	for _, pInfo := range p.backoffQ.list() {
		out = append(out, pInfo.Pod)
	}
	return out
}

// UnschedulablePods returns the pods in the unschedulable pool, in no
// particular order.
func (p *PriorityQueue) UnschedulablePods() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	var out []*v1.Pod
	for _, pInfo := range p.unschedulablePods {
		out = append(out, pInfo.Pod)
	}
	return out
}

// updateMetrics sets scheduler_pending_pods. The caller holds the lock.
func (p *PriorityQueue) updateMetrics() {
	metrics.ActivePods().Set(float64(p.activeQ.Len()))
	metrics.BackoffPods().Set(float64(p.backoffQ.len()))
	metrics.UnschedulablePods().Set(float64(len(p.unschedulablePods) - p.gatedPods.Len()))
	metrics.GatedPods().Set(float64(p.gatedPods.Len()))
}
