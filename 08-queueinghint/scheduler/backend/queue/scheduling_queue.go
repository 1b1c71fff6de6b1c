// Package queue holds the pods waiting to be scheduled. It mirrors
// pkg/scheduler/backend/queue/scheduling_queue.go of k8s.io/kubernetes
// (PriorityQueue, its Add, AddUnschedulablePodIfNotPresent, Pop, Done, Update,
// Delete, MoveAllToActiveOrBackoffQueue, isPodWorthRequeuing,
// determineSchedulingHintForInFlightPod, flushBackoffQCompleted and
// flushUnschedulablePodsLeftover) and active_queue.go (the in-flight pods
// and events), with its three parts:
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
//     EventsToRegister, and for which that plugin's queueing hint answers
//     Queue. The leftover flush is the safety net.
//
// An event that arrives while a pod is being scheduled is kept in the list
// of in-flight events, and replayed through the queueing hints when the pod
// fails, as upstream's queue does since queueing hints (KEP-4247).
package queue

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"

	"minisched/08-queueinghint/scheduler/metrics"
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

// QueueingHintFunction is a plugin's hint for one event it registered: it
// looks at the object that changed and says whether the change may make a
// pod that the plugin rejected schedulable.
type QueueingHintFunction struct {
	PluginName     string
	QueueingHintFn fwk.QueueingHintFn
}

// QueueingHintMap says, for every cluster event a plugin registered for,
// which plugins registered it, each with its hint. It is built from the
// plugins' EventsToRegister. (Upstream keeps one per profile.)
type QueueingHintMap map[fwk.ClusterEvent][]*QueueingHintFunction

// clusterEvent is an event with the object before and after it, as the
// hints need them: oldObj is nil for an Add, newObj for a Delete.
type clusterEvent struct {
	event  fwk.ClusterEvent
	oldObj any
	newObj any
}

// queueingStrategy is what an event means for a pod in the pool.
type queueingStrategy int

const (
	// queueSkip leaves the pod where it is.
	queueSkip queueingStrategy = iota
	// queueAfterBackoff moves it to backoffQ, or to activeQ if its backoff
	// is over.
	queueAfterBackoff
)

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
	queueingHintMap                   QueueingHintMap
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
	// schedulingCycle counts the pods popped.
	schedulingCycle int64
	// inFlightPods holds the pods popped and not yet Done, each with its
	// element in inFlightEvents. inFlightEvents is a list, in arrival order,
	// of the popped pods and of the cluster events that came while any pod
	// was in flight: the events after a pod's element are those it may have
	// missed. Done removes the pod's element, and the events that no pod in
	// flight needs any more, so that the list does not grow for ever.
	inFlightPods   map[types.UID]*list.Element
	inFlightEvents *list.List
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

// WithPreEnqueuePlugins sets the plugins that may hold a pod back before it
// enters activeQ (SchedulingGates, for a pod with scheduling gates).
func WithPreEnqueuePlugins(pls []fwk.PreEnqueuePlugin) Option {
	return func(p *PriorityQueue) { p.preEnqueuePlugins = pls }
}

// WithQueueingHintMap sets which plugins registered which events, with
// their hints.
func WithQueueingHintMap(m QueueingHintMap) Option {
	return func(p *PriorityQueue) { p.queueingHintMap = m }
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
		inFlightPods:                      map[types.UID]*list.Element{},
		inFlightEvents:                    list.New(),
	}
	for _, opt := range opts {
		opt(p)
	}
	// A gated pod moves only on the events its gating plugin registered.
	p.pluginToEvents = map[string][]fwk.ClusterEvent{}
	for event, hintFns := range p.queueingHintMap {
		for _, hintFn := range hintFns {
			p.pluginToEvents[hintFn.PluginName] = append(p.pluginToEvents[hintFn.PluginName], event)
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
// podSchedulingCycle, the cycle the failure happened in, is only logged.
//
// The pod's backoff grows with its failures: a failure with rejecting
// plugins counts as unschedulable, one without (an error: no nodes, an API
// failure) counts apart, as a consecutive error. Then the events that came
// while the pod was in flight are replayed through the hints of its
// rejecting plugins (determineSchedulingHintForInFlightPod): if one answers
// Queue, the pod goes to backoffQ (or activeQ, if its backoff is over);
// otherwise it waits in the unschedulable pool. A pod no plugin rejected
// always goes to backoffQ. Either way the pod is Done: this is the end of
// its flight.
//
//workshop:part 06/2
//workshop:part 07/2
func (p *PriorityQueue) AddUnschedulablePodIfNotPresent(logger klog.Logger, pInfo *framework.QueuedPodInfo, podSchedulingCycle int64) error {
	p.lock.Lock()
	defer p.lock.Unlock()
	// Whatever happens below, the pod has landed. The events it needed are
	// read before this runs.
	defer p.done(logger, pInfo.Pod.UID)
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
	if p.determineSchedulingHintForInFlightPod(logger, pInfo) == queueAfterBackoff {
		if p.requeuePod(logger, pInfo, framework.ScheduleAttemptFailure) {
			p.cond.Broadcast()
		}
		return nil
	}
	p.unschedulablePods[key] = pInfo
	logger.V(3).Info("Pod moved to an internal scheduling queue", "pod", klog.KObj(pInfo.Pod), "event", framework.ScheduleAttemptFailure, "queue", unschedulableQ,
		"schedulingCycle", podSchedulingCycle, "unschedulablePlugins", sets.List(rejectorPlugins))
	metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", framework.ScheduleAttemptFailure).Inc()
	p.updateMetrics()
	return nil
}

// determineSchedulingHintForInFlightPod replays the events that came while
// the pod was in flight through isPodWorthRequeuing: the pod is worth a
// retry if any of them is. A pod that no plugin rejected always is.
//
//workshop:part 08/3
func (p *PriorityQueue) determineSchedulingHintForInFlightPod(logger klog.Logger, pInfo *framework.QueuedPodInfo) queueingStrategy {
	if pInfo.UnschedulablePlugins.Len() == 0 && pInfo.PendingPlugins.Len() == 0 {
		return queueAfterBackoff
	}
	elem, ok := p.inFlightPods[pInfo.Pod.UID]
	if !ok {
		// Every failed pod was popped and is not Done yet; this is a bug.
		// A retry is the safe answer.
		logger.Error(nil, "In-flight pod not found in the scheduling queue", "pod", klog.KObj(pInfo.Pod))
		return queueAfterBackoff
	}
	for e := elem.Next(); e != nil; e = e.Next() {
		ev, ok := e.Value.(*clusterEvent)
		if !ok {
			// Another pod popped later: not an event.
			continue
		}
		logger.V(5).Info("Checking event for in-flight pod", "pod", klog.KObj(pInfo.Pod), "event", ev.event.Label())
		if p.isPodWorthRequeuing(logger, pInfo, ev.event, ev.oldObj, ev.newObj) == queueAfterBackoff {
			return queueAfterBackoff
		}
	}
	return queueSkip
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
// A pod popped while it is still in flight is a bug elsewhere: the same pod
// tracked twice. That copy is discarded and the next pod popped, as
// upstream's unlockedPop does (PR #127016): scheduling it would overwrite its
// in-flight element, and the events after the first would never be freed.
//
//workshop:part 06/1
func (p *PriorityQueue) Pop(logger klog.Logger) (*framework.QueuedPodInfo, error) {
	p.lock.Lock()
	defer p.lock.Unlock()
	for {
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
		if _, ok := p.inFlightPods[pInfo.Pod.UID]; ok {
			logger.Error(nil, "Discarding the popped pod: it is in flight already", "pod", klog.KObj(pInfo.Pod))
			p.updateMetrics()
			continue
		}
		pInfo.Attempts++
		p.schedulingCycle++
		// The pod is in flight until Done: the events from now on may
		// concern it.
		p.inFlightPods[pInfo.Pod.UID] = p.inFlightEvents.PushBack(pInfo.Pod)
		p.updateMetrics()
		return pInfo, nil
	}
}

// Done ends the flight of a popped pod. The scheduler calls it once per
// Pop, on every path: AddUnschedulablePodIfNotPresent calls it for a pod that
// failed, the binding cycle for a pod that passed Permit, and the scheduler
// itself for a pod it skips or that disappeared. Without it, the pod's
// element would keep every later event in the list: the memory leak of
// v1.28. Calling it again for the same pod does nothing.
func (p *PriorityQueue) Done(logger klog.Logger, uid types.UID) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.done(logger, uid)
}

// done is Done under the lock. It removes the pod's element, then the
// events at the front of the list: once no pod in flight was popped before
// them, nobody needs them.
//
//workshop:part 08/3
func (p *PriorityQueue) done(logger klog.Logger, uid types.UID) {
	elem, ok := p.inFlightPods[uid]
	if !ok {
		return
	}
	delete(p.inFlightPods, uid)
	p.inFlightEvents.Remove(elem)
	for e := p.inFlightEvents.Front(); e != nil; e = p.inFlightEvents.Front() {
		if _, ok := e.Value.(*clusterEvent); !ok {
			break
		}
		p.inFlightEvents.Remove(e)
	}
	logger.V(5).Info("Pod done", "podUID", uid, "inFlightPods", len(p.inFlightPods), "inFlightEvents", p.inFlightEvents.Len())
}

// InFlightPods returns the pods popped and not yet Done.
func (p *PriorityQueue) InFlightPods() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	var out []*v1.Pod
	for _, elem := range p.inFlightPods {
		out = append(out, elem.Value.(*v1.Pod))
	}
	return out
}

// InFlightEventsLen returns the length of the in-flight list: the pods in
// flight plus the events kept for them. It is zero when no pod is in
// flight.
func (p *PriorityQueue) InFlightEventsLen() int {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.inFlightEvents.Len()
}

// Update replaces a queued pod with its new version, as upstream's does:
//   - in flight (being scheduled), the update's events about the pod itself
//     are kept with the in-flight events, for the pod's failure to replay;
//   - in activeQ or backoffQ, the pod is updated in place;
//   - in the unschedulable pool, the update is an event about the pod
//     itself (TargetPod). If the hint of a plugin that rejected the pod
//     answers Queue, the pod moves to backoffQ or activeQ; otherwise it
//     stays, updated;
//   - anywhere else (never queued), it is added to activeQ.
func (p *PriorityQueue) Update(logger klog.Logger, oldPod, newPod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	events := framework.PodSchedulingPropertiesChange(newPod, oldPod, true)
	if _, ok := p.inFlightPods[newPod.UID]; ok {
		for _, evt := range events {
			p.inFlightEvents.PushBack(&clusterEvent{event: evt, oldObj: oldPod, newObj: newPod})
		}
		logger.V(6).Info("Pod is being scheduled; its update is kept for when it comes back", "pod", klog.KObj(newPod))
		return
	}
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
		for _, evt := range events {
			if p.isPodWorthRequeuing(logger, pInfo, evt, oldPod, newPod) == queueAfterBackoff {
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
// pod that event could make schedulable, as the hints of the plugins that
// rejected it judge from oldObj and newObj, and that passes preCheck: to
// backoffQ if it is still backing off, else to activeQ. The event handlers
// call it for every cluster event. While any pod is in flight, an event of
// interest is also kept in the in-flight list, for those pods to replay if
// they fail.
// Each call that looks at the pool logs the message "Cluster event handled"
// at -v=5, with the event and the number of pods moved: the integration
// tests wait for it.
//
//workshop:part 06/4
//workshop:part 07/3
func (p *PriorityQueue) MoveAllToActiveOrBackoffQueue(logger klog.Logger, event fwk.ClusterEvent, oldObj, newObj any, preCheck PreEnqueueCheck) {
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
		if p.isPodWorthRequeuing(logger, pInfo, event, oldObj, newObj) == queueAfterBackoff {
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
	if len(p.inFlightPods) > 0 {
		p.inFlightEvents.PushBack(&clusterEvent{event: event, oldObj: oldObj, newObj: newObj})
	}
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
	for registered := range p.queueingHintMap {
		if framework.MatchClusterEvents(registered, event) {
			return true
		}
	}
	return false
}

// isPodWorthRequeuing asks the hints of the plugins that rejected the pod,
// for the registered events that match event, whether the change from
// oldObj to newObj may make the pod schedulable. One Queue is enough; a
// hint that fails counts as Queue, so that a broken hint cannot leave a pod
// in the pool. Hints of plugins that did not reject the pod are not asked.
// A pod that no plugin rejected is moved by any event, and a wildcard event
// moves every pod. (Upstream has a third answer, queueImmediately, for a
// Pending plugin's Queue; no plugin here reports Pending.)
//
//workshop:part 06/3
//workshop:part 08/2
func (p *PriorityQueue) isPodWorthRequeuing(logger klog.Logger, pInfo *framework.QueuedPodInfo, event fwk.ClusterEvent, oldObj, newObj any) queueingStrategy {
	rejectorPlugins := pInfo.UnschedulablePlugins.Union(pInfo.PendingPlugins)
	if rejectorPlugins.Len() == 0 {
		logger.V(6).Info("Worth requeuing because no failed plugins", "pod", klog.KObj(pInfo.Pod))
		return queueAfterBackoff
	}
	if framework.ClusterEventIsWildCard(event) {
		// A wildcard event that carries an object (ForceActivate carries a
		// pod) is for that pod only, as upstream's isPodWorthRequeuing has
		// it.
		if newObj != nil {
			if pod, ok := newObj.(*v1.Pod); !ok || pod.UID != pInfo.Pod.UID {
				return queueSkip
			}
		}
		logger.V(6).Info("Worth requeuing because the event is wildcard", "pod", klog.KObj(pInfo.Pod), "event", event.Label())
		return queueAfterBackoff
	}
	for registered, hintFns := range p.queueingHintMap {
		if !framework.MatchClusterEvents(registered, event) {
			continue
		}
		for _, hintFn := range hintFns {
			if !rejectorPlugins.Has(hintFn.PluginName) {
				continue
			}
			hint, err := hintFn.QueueingHintFn(logger, pInfo.Pod, oldObj, newObj)
			if err != nil {
				logger.Error(err, "QueueingHintFn returned an error; the pod is queued", "pod", klog.KObj(pInfo.Pod), "event", event.Label(), "plugin", hintFn.PluginName)
				hint = fwk.Queue
			}
			logger.V(5).Info("Queueing hint", "pod", klog.KObj(pInfo.Pod), "event", event.Label(), "plugin", hintFn.PluginName, "hint", hint)
			if hint == fwk.Queue {
				return queueAfterBackoff
			}
		}
	}
	return queueSkip
}

// flushUnschedulablePodsLeftover moves to activeQ the pods that have waited
// in the unschedulable pool longer than podMaxInUnschedulablePodsDuration:
// a plugin may have missed registering an event that helps them. The flush
// is itself a cluster event, UnschedulableTimeout, a wildcard: like any
// event, it is kept for the pods in flight, so that a pod failing now is
// not parked for a further five minutes.
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
	if len(p.inFlightPods) > 0 {
		p.inFlightEvents.PushBack(&clusterEvent{event: framework.EventUnschedulableTimeout})
	}
	if activated {
		p.cond.Broadcast()
	}
}

// Activate moves the given pods to activeQ at once, from the unschedulable
// pool or backoffQ, whatever their backoff: a plugin knows they are worth
// trying now (the Gang plugin, for the siblings of a member that waits at
// Permit). A pod in flight gets a ForceActivate event instead, so that it
// is tried again if it fails. Other pods are ignored. It mirrors upstream's
// Activate.
func (p *PriorityQueue) Activate(logger klog.Logger, pods map[string]*v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	activated := false
	for _, pod := range pods {
		if p.activate(logger, pod) {
			activated = true
			continue
		}
		if _, ok := p.inFlightPods[pod.UID]; ok {
			p.inFlightEvents.PushBack(&clusterEvent{event: framework.EventForceActivate, newObj: pod})
		}
	}
	if activated {
		p.cond.Broadcast()
	}
}

// activate moves one pod to activeQ if it waits in the pool or in backoffQ.
// The caller holds the lock.
func (p *PriorityQueue) activate(logger klog.Logger, pod *v1.Pod) bool {
	pInfo, ok := p.unschedulablePods[podKey(pod)]
	movesFromBackoffQ := false
	if !ok {
		lookup := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod}}
		if pInfo, ok = p.backoffQ.get(lookup); !ok {
			return false
		}
		movesFromBackoffQ = true
	}
	return p.moveToActiveQ(logger, pInfo, framework.ForceActivate, movesFromBackoffQ)
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
	gated := p.gatedPods.Len()
	metrics.ActivePods().Set(float64(p.activeQ.Len()))
	metrics.BackoffPods().Set(float64(p.backoffQ.len()))
	metrics.UnschedulablePods().Set(float64(len(p.unschedulablePods) - gated))
	metrics.GatedPods().Set(float64(gated))
}
