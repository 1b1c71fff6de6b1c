// Package queue holds the pods waiting to be scheduled. It mirrors
// pkg/scheduler/backend/queue/scheduling_queue.go of k8s.io/kubernetes
// (PriorityQueue, its Add, AddUnschedulablePodIfNotPresent,
// AddAttemptedPodGroupIfNeeded, Pop, Done, Update, Delete, AddPodGroup,
// UpdatePodGroup, DeletePodGroup, MoveAllToActiveOrBackoffQueue,
// isEntityWorthRequeuing, isPodWorthRequeuing,
// determineSchedulingHintForInFlightPod, flushBackoffQCompleted and
// flushUnschedulableEntitiesLeftover) and active_queue.go (the in-flight
// pods and events); nominator.go holds its nominator. The queue holds
// entities: a pod on its own, or a pod group, with every member the queue
// holds, as one entity that is popped, tried, backed off and moved as one
// (framework.QueuedPodGroupInfo). The queue has three parts:
//
//   - activeQ, a heap of the entities ready to be tried, ordered by the
//     QueueSort plugin (higher priority first, then the older timestamp);
//   - backoffQ, the entities that wait out their backoff, ordered by when
//     it ends (backoff_queue.go). When activeQ is empty, Pop takes an
//     entity from backoffQ before its backoff ends, as upstream's does by
//     default (SchedulerPopFromBackoffQ): a backoff only keeps an entity
//     from taking turns from those waiting to be tried;
//   - the unschedulable pool, the entities that were tried and failed, or
//     that a PreEnqueue plugin holds back. An entity leaves it only when a
//     cluster event could make it schedulable: an event that one of the
//     plugins which rejected one of its pods registered for in its
//     EventsToRegister, and for which that plugin's queueing hint answers
//     Queue. The leftover flush is the safety net.
//
// A member pod whose PodGroup the queue has not seen waits apart, in
// incompletePodGroupPods; one that arrives, or fails, while its group is
// being scheduled waits in pendingPodGroupPods, and joins the group's entity
// when the group's cycle ends (workload_forest.go, pod_group_member_pods.go).
//
// An event that arrives while a pod is being scheduled is kept in the list
// of in-flight events, and replayed through the queueing hints when the pod
// fails, as upstream's queue does since queueing hints (KEP-4247).
package queue

import (
	"container/list"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"

	"minisched/11-gang-scheduling/scheduler/metrics"
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
	// queueSkip leaves the entity where it is.
	queueSkip queueingStrategy = iota
	// queueAfterBackoff moves it to backoffQ, or to activeQ if its backoff
	// is over.
	queueAfterBackoff
	// queueImmediately moves it to activeQ: a pod group that was there
	// goes back there when a member joins it.
	queueImmediately
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
	// activeQ holds the entities to try next, the best first.
	activeQ *Heap[framework.QueuedEntityInfo]
	// backoffQ holds the entities that wait out their backoff.
	backoffQ *backoffQueue
	// unschedulableEntities holds the entities that failed, or are gated,
	// by entity key; each pod knows the plugins that rejected it.
	unschedulableEntities map[string]framework.QueuedEntityInfo
	// gatedEntities holds the keys of the entities in the pool that a
	// PreEnqueue plugin holds back; unschedulablePodsCount and
	// gatedPodsCount count their pods, for scheduler_pending_pods.
	gatedEntities          sets.Set[string]
	unschedulablePodsCount int
	gatedPodsCount         int
	closed                 bool
	stop                   chan struct{}
	// schedulingCycle counts the entities popped.
	schedulingCycle int64
	// inFlightPods holds the pods popped and not yet Done, each with its
	// element in inFlightEvents. inFlightEvents is a list, in arrival order,
	// of the popped pods and of the cluster events that came while any pod
	// was in flight: the events after a pod's element are those it may have
	// missed. Done removes the pod's element, and the events that no pod in
	// flight needs any more, so that the list does not grow for ever.
	inFlightPods   map[types.UID]*list.Element
	inFlightEvents *list.List
	// lastPoppedEntityKey is the key of the entity popped last: while a pod
	// group is in its scheduling cycle, its new and failed members wait in
	// pendingPodGroupPods instead of making an entity of their own.
	lastPoppedEntityKey string

	// workloadForest is the queue's view of the PodGroup objects.
	workloadForest *workloadForest
	// incompletePodGroupPods holds the members whose PodGroup the queue has
	// not seen; pendingPodGroupPods the members that wait for their group's
	// scheduling cycle to end.
	incompletePodGroupPods *podGroupMemberPods
	pendingPodGroupPods    *podGroupMemberPods

	// nominator remembers the nodes nominated for preemptors (nominator.go).
	// Its lock comes after lock.
	nominator *nominator
	podLister listersv1.PodLister
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

// WithPodLister gives the nominator the informer's pods, so that it does
// not nominate a pod that is gone or bound.
func WithPodLister(l listersv1.PodLister) Option {
	return func(p *PriorityQueue) { p.podLister = l }
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
		unschedulableEntities:             map[string]framework.QueuedEntityInfo{},
		gatedEntities:                     sets.New[string](),
		stop:                              make(chan struct{}),
		inFlightPods:                      map[types.UID]*list.Element{},
		inFlightEvents:                    list.New(),
		workloadForest:                    newWorkloadForest(),
		incompletePodGroupPods:            newPodGroupMemberPods(),
		pendingPodGroupPods:               newPodGroupMemberPods(),
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
	p.nominator = newPodNominator(p.podLister)
	p.cond.L = &p.lock
	p.activeQ = NewHeap(queuedEntityKeyFunc, func(a, b framework.QueuedEntityInfo) bool { return lessFn(a, b) })
	p.backoffQ = newBackoffQueue(p.clock, p.podInitialBackoffDuration, p.podMaxBackoffDuration, func(a, b framework.QueuedEntityInfo) bool { return lessFn(a, b) })
	return p
}

// queuedEntityKeyFunc keys an entity by its type, namespace and name, as
// upstream's does: a pod and a pod group of the same name differ.
func queuedEntityKeyFunc(e framework.QueuedEntityInfo) string {
	return fmt.Sprintf("%s/%s/%s", e.Type(), e.GetNamespace(), e.GetName())
}

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

// newQueuedPodInfoForLookup wraps a pod for a lookup by key only.
func newQueuedPodInfoForLookup(pod *v1.Pod) *framework.QueuedPodInfo {
	return &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod}}
}

// logMove logs an entity's move to a queue, one line per pod: the
// "Pod moved to an internal scheduling queue" line that the scripts follow
// pods by. A pod group's members say which group they belong to. (Upstream
// logs one line per entity.)
func logMove(logger klog.Logger, entity framework.QueuedEntityInfo, event, queue string, keysAndValues ...any) {
	if !logger.V(3).Enabled() {
		return
	}
	entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		kv := append([]any{"pod", klog.KObj(pInfo.Pod), "event", event, "queue", queue}, keysAndValues...)
		if entity.Type() == fwk.PodGroupKeyType {
			kv = append(kv, "podGroup", klog.KRef(entity.GetNamespace(), entity.GetName()))
		}
		logger.V(3).Info("Pod moved to an internal scheduling queue", kv...)
		return true
	})
}

// Run starts the two flushes, until Close: at the start of every second
// the pods whose backoff ended go to activeQ, and every 30 seconds the
// leftovers of the unschedulable pool.
func (p *PriorityQueue) Run(logger klog.Logger) {
	go p.backoffQ.waitUntilAlignedWithOrderingWindow(func() { p.flushBackoffQCompleted(logger) }, p.stop)
	go wait.Until(func() { p.flushUnschedulableEntitiesLeftover(logger) }, flushInterval, p.stop)
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

// Add queues a new pod in activeQ, or a member pod with its group. A pod
// that comes with a nominated node (one a previous scheduler nominated) is
// recorded in the nominator first, before any cycle can pop it, gated or
// not.
//
//workshop:part 06/1
func (p *PriorityQueue) Add(logger klog.Logger, pod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.addPod(logger, pod, framework.EventUnscheduledPodAdd.Label())
}

// addPod queues a pod the queue does not hold, nominated to the node its
// status names, if any, as upstream's addPod does. A pod group member goes
// to its group (addPodGroupMember). The caller holds the lock.
func (p *PriorityQueue) addPod(logger klog.Logger, pod *v1.Pod, event string) {
	pInfo := p.newQueuedPodInfo(pod)
	p.nominator.nLock.Lock()
	p.nominator.addNominatedPodUnlocked(logger, pInfo.PodInfo, nil)
	p.nominator.nLock.Unlock()
	if isPodGroupMember(pod) {
		p.addPodGroupMember(logger, pInfo, event)
		return
	}
	if p.moveToActiveQ(logger, pInfo, event, false) {
		p.cond.Broadcast()
	}
}

// addPodGroupMember queues a member pod where its group is, as upstream's
// function of that name does:
//   - apart, in incompletePodGroupPods, if the queue has not seen its
//     PodGroup: AddPodGroup brings it in;
//   - into the group's entity, wherever that is queued;
//   - into pendingPodGroupPods, if the group is in its scheduling cycle:
//     AddAttemptedPodGroupIfNeeded brings it in when the cycle ends;
//   - else into a new entity for the group, which goes to activeQ, unless
//     a PreEnqueue plugin holds it back (GangScheduling does until minCount
//     members exist).
//
// The caller holds the lock.
//
//workshop:part 11/1
func (p *PriorityQueue) addPodGroupMember(logger klog.Logger, pInfo *framework.QueuedPodInfo, event string) {
	root, ok := p.workloadForest.getRootLookupInfoForPod(pInfo.Pod)
	if !ok {
		p.incompletePodGroupPods.add(pInfo)
		p.updateMetrics()
		logger.V(5).Info("Pod waits for its PodGroup to be observed", "pod", klog.KObj(pInfo.Pod), "podGroup", klog.KRef(pInfo.Pod.Namespace, *pInfo.Pod.Spec.SchedulingGroup.PodGroupName))
		return
	}
	if p.addToPodGroupIfExists(logger, pInfo, root, event) {
		return
	}
	if p.lastPoppedEntityKey == queuedEntityKeyFunc(root) {
		p.pendingPodGroupPods.add(pInfo)
		p.updateMetrics()
		logger.V(5).Info("Pod waits for its pod group's scheduling cycle to end", "pod", klog.KObj(pInfo.Pod), "podGroup", klog.KObj(root))
		return
	}
	rootInfo := p.workloadForest.buildQueuedPodGroupInfo(root)
	rootInfo.AddPod(pInfo)
	rootInfo.Timestamp = pInfo.Timestamp
	if p.moveToActiveQ(logger, rootInfo, event, false) {
		p.cond.Broadcast()
	}
}

// addToPodGroupIfExists adds a member to its group's entity if that is
// queued, and queues the entity again where it was. It reports whether it
// did. The caller holds the lock.
//
//workshop:part 11/1
func (p *PriorityQueue) addToPodGroupIfExists(logger klog.Logger, pInfo *framework.QueuedPodInfo, root framework.QueuedEntityInfo, event string) bool {
	entity, strategy := p.deleteFromAnyQueue(root)
	if entity == nil {
		return false
	}
	pgInfo := entity.(*framework.QueuedPodGroupInfo)
	pgInfo.AddPod(pInfo)
	if p.requeueEntity(logger, pgInfo, strategy, event) != unschedulableQ {
		p.cond.Broadcast()
	}
	return true
}

// deleteFromAnyQueue takes an entity out of whichever part of the queue
// holds it, and returns it with the strategy that puts it back there, or
// nil. The caller holds the lock.
func (p *PriorityQueue) deleteFromAnyQueue(lookup framework.QueuedEntityInfo) (framework.QueuedEntityInfo, queueingStrategy) {
	if entity, ok := p.activeQ.Get(lookup); ok {
		p.activeQ.Delete(entity)
		return entity, queueImmediately
	}
	if entity, ok := p.backoffQ.get(lookup); ok {
		p.backoffQ.delete(entity)
		return entity, queueAfterBackoff
	}
	if entity, ok := p.unschedulableEntities[queuedEntityKeyFunc(lookup)]; ok {
		p.deleteFromPool(queuedEntityKeyFunc(lookup))
		return entity, queueSkip
	}
	return nil, queueSkip
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
// An entity that comes straight from backoffQ (movesFromBackoffQ) passed
// the PreEnqueue plugins when it entered backoffQ: Pop may take it from
// there, so moveToBackoffQ runs them, and they do not run twice.
//
//workshop:part 06/1
func (p *PriorityQueue) moveToActiveQ(logger klog.Logger, entity framework.QueuedEntityInfo, event string, movesFromBackoffQ bool) bool {
	key := queuedEntityKeyFunc(entity)
	if !movesFromBackoffQ {
		p.runPreEnqueuePlugins(logger, entity)
	}
	if entity.Gated() {
		p.backoffQ.delete(entity)
		p.parkGated(logger, entity, event)
		return false
	}
	p.deleteFromPool(key)
	p.backoffQ.delete(entity)
	p.activeQ.AddOrUpdate(entity)
	logMove(logger, entity, event, activeQ)
	metrics.SchedulerQueueIncomingPods.WithLabelValues("active", event).Add(float64(entity.Size()))
	p.updateMetrics()
	return true
}

// parkGated puts an entity that a PreEnqueue plugin holds back in the
// unschedulable pool, gated, whether it was on its way to activeQ or to
// backoffQ. The first time it comes in, it is logged and its pods are
// counted in queue_incoming_pods_total, as upstream's
// unschedulableEntities.addOrUpdate counts a new entry. The caller holds
// the lock.
func (p *PriorityQueue) parkGated(logger klog.Logger, entity framework.QueuedEntityInfo, event string) {
	key := queuedEntityKeyFunc(entity)
	if _, ok := p.unschedulableEntities[key]; !ok {
		logger.V(5).Info("Entity moved to an internal scheduling queue, because it is gated", "type", entity.Type(), "entity", klog.KObj(entity), "event", event, "queue", unschedulableQ, "gatingPlugin", entity.GetGatingPlugin())
		metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", event).Add(float64(entity.Size()))
	}
	p.addToPool(key, entity)
	p.updateMetrics()
}

// runPreEnqueuePlugins runs the PreEnqueue plugins on each pod of the
// entity. A pod that one rejects records the first such plugin as its
// gating plugin, among its rejecting plugins, so that the events that
// plugin registered can move it, as upstream's runPreEnqueuePlugins does.
// If any pod is gated, so is the whole entity: a pod group goes to a
// scheduling cycle only when every member may. (Upstream runs the last
// gating plugin first. With the PreEnqueue plugins here, SchedulingGates,
// DefaultPreemption and GangScheduling, the order makes no difference to
// where the entity goes.)
func (p *PriorityQueue) runPreEnqueuePlugins(logger klog.Logger, entity framework.QueuedEntityInfo) {
	var gated *framework.QueuedPodInfo
	entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		p.runPreEnqueuePluginsForPod(logger, pInfo)
		if pInfo.Gated() {
			gated = pInfo
		}
		return true
	})
	if gated == nil {
		entity.SetGatingPlugin("", nil)
		return
	}
	entity.SetGatingPlugin(gated.GatingPlugin, gated.GatingPluginEvents)
}

// runPreEnqueuePluginsForPod runs the PreEnqueue plugins on one pod.
func (p *PriorityQueue) runPreEnqueuePluginsForPod(logger klog.Logger, pInfo *framework.QueuedPodInfo) {
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

// addToPool puts an entity in the unschedulable pool, or replaces it there,
// and counts its pods. The caller holds the lock.
func (p *PriorityQueue) addToPool(key string, entity framework.QueuedEntityInfo) {
	p.deleteFromPool(key)
	p.unschedulableEntities[key] = entity
	if entity.Gated() {
		p.gatedEntities.Insert(key)
		p.gatedPodsCount += entity.Size()
		return
	}
	p.unschedulablePodsCount += entity.Size()
}

// deleteFromPool removes an entity from the unschedulable pool, gated or
// not. An entity's size does not change while it is in the pool: every
// change to a group's members takes the group out first. The caller holds
// the lock.
func (p *PriorityQueue) deleteFromPool(key string) {
	entity, ok := p.unschedulableEntities[key]
	if !ok {
		return
	}
	if p.gatedEntities.Has(key) {
		p.gatedPodsCount -= entity.Size()
	} else {
		p.unschedulablePodsCount -= entity.Size()
	}
	delete(p.unschedulableEntities, key)
	p.gatedEntities.Delete(key)
}

// moveToBackoffQ puts an entity in backoffQ, wherever it was, unless a
// PreEnqueue plugin holds it back: then it waits in the unschedulable pool,
// gated, as in moveToActiveQ. The plugins run here, not when the entity
// leaves backoffQ, since Pop may take it from backoffQ directly. It reports
// whether the entity went to backoffQ. The caller holds the lock and wakes
// Pop: an entity in backoffQ is one Pop may take.
//
//workshop:part 07/2
func (p *PriorityQueue) moveToBackoffQ(logger klog.Logger, entity framework.QueuedEntityInfo, event string) bool {
	key := queuedEntityKeyFunc(entity)
	p.runPreEnqueuePlugins(logger, entity)
	if entity.Gated() {
		p.parkGated(logger, entity, event)
		return false
	}
	p.deleteFromPool(key)
	p.backoffQ.add(logger, entity, event)
	metrics.SchedulerQueueIncomingPods.WithLabelValues("backoff", event).Add(float64(entity.Size()))
	p.updateMetrics()
	return true
}

// requeueEntity puts an entity where strategy says, as upstream's
// requeueEntityWithQueueingStrategy does: back in the pool for queueSkip;
// to backoffQ while its backoff lasts for queueAfterBackoff, else to
// activeQ. It returns the queue the entity went to (the pool, for one a
// PreEnqueue plugin holds back): the caller wakes Pop unless that is the
// pool. The caller holds the lock.
//
//workshop:part 07/3
func (p *PriorityQueue) requeueEntity(logger klog.Logger, entity framework.QueuedEntityInfo, strategy queueingStrategy, event string) string {
	if strategy == queueSkip {
		// Its pods are counted when it comes into the pool, as upstream
		// counts an entity new to its unschedulableEntities; from the
		// pool to the pool, nothing is.
		if _, inPool := p.unschedulableEntities[queuedEntityKeyFunc(entity)]; !inPool {
			metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", event).Add(float64(entity.Size()))
		}
		p.addToPool(queuedEntityKeyFunc(entity), entity)
		p.updateMetrics()
		return unschedulableQ
	}
	if strategy == queueAfterBackoff && p.backoffQ.isEntityBackingoff(entity) {
		if p.moveToBackoffQ(logger, entity, event) {
			return backoffQ
		}
		return unschedulableQ
	}
	if p.moveToActiveQ(logger, entity, event, false) {
		return activeQ
	}
	return unschedulableQ
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
// A pod group member is Done at once, and joins its group's pending pods:
// the group goes back to the queue as one, when its cycle ends
// (AddAttemptedPodGroupIfNeeded), without replaying events, as upstream's
// does.
//
//workshop:part 06/2
//workshop:part 07/2
func (p *PriorityQueue) AddUnschedulablePodIfNotPresent(logger klog.Logger, pInfo *framework.QueuedPodInfo, podSchedulingCycle int64) error {
	p.lock.Lock()
	defer p.lock.Unlock()
	// Whatever happens below, the pod has landed. The events it needed are
	// read before this runs.
	calledDone := false
	defer func() {
		if !calledDone {
			p.done(logger, pInfo.Pod.UID)
		}
	}()
	key := queuedEntityKeyFunc(pInfo)
	if _, ok := p.unschedulableEntities[key]; ok {
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
	if isPodGroupMember(pInfo.Pod) {
		// Done first: the member may join its group's entity at once, and
		// Pop drops from a group the members still in flight.
		p.done(logger, pInfo.Pod.UID)
		calledDone = true
		// Under UnscheduledPodAdd, as upstream's addUnschedulablePodGroupMember
		// calls addPodGroupMember.
		p.addPodGroupMember(logger, pInfo, framework.EventUnscheduledPodAdd.Label())
		return nil
	}
	// The key of the last entity popped stays: this may be a binding
	// goroutine's failure while a pod group is in its cycle, and the
	// group's failing members must go on waiting in pendingPodGroupPods.
	// (Upstream clears it here, clearPoppedEntity; Pop replaces it
	// anyway.)
	if p.determineSchedulingHintForInFlightPod(logger, pInfo) == queueAfterBackoff {
		if p.requeueEntity(logger, pInfo, queueAfterBackoff, framework.ScheduleAttemptFailure) != unschedulableQ {
			p.cond.Broadcast()
		}
		return nil
	}
	p.addToPool(key, pInfo)
	logger.V(3).Info("Pod moved to an internal scheduling queue", "pod", klog.KObj(pInfo.Pod), "event", framework.ScheduleAttemptFailure, "queue", unschedulableQ,
		"schedulingCycle", podSchedulingCycle, "unschedulablePlugins", sets.List(rejectorPlugins))
	metrics.SchedulerQueueIncomingPods.WithLabelValues("unschedulable", framework.ScheduleAttemptFailure).Inc()
	p.updateMetrics()
	return nil
}

// AddAttemptedPodGroupIfNeeded puts a pod group back in the queue after its
// scheduling cycle, with the members that did not go to binding (they
// waited in pendingPodGroupPods, with any member that arrived during the
// cycle). A group with none left is not queued. It mirrors upstream's
// function of the same name:
//   - after a cycle that bound members (status Success), the rest go
//     straight to activeQ, their counts reset; if some of them failed in
//     that cycle, the group keeps its timestamp, and so its place;
//   - after a rejection, the group's unschedulable count grows, and it goes
//     to backoffQ, then activeQ. It does not wait in the pool for an event:
//     v1.37.1 gives pod groups no queueing hints after a failed cycle;
//   - after an error, its error count grows, and it backs off the same way.
//
// The scheduler calls it once at the end of every pod-group cycle; its
// pods are all Done by then.
//
//workshop:part 11/1
func (p *PriorityQueue) AddAttemptedPodGroupIfNeeded(logger klog.Logger, pgInfo *framework.QueuedPodGroupInfo, podSchedulingCycle int64, status *fwk.Status) error {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.lastPoppedEntityKey = ""
	pending := p.pendingPodGroupPods.clear(pgInfo.GetNamespace(), pgInfo.GetName())
	defer p.updateMetrics()
	if len(pending) == 0 {
		return nil
	}
	if p.getEntityFromAnyQueue(pgInfo) != nil {
		// An entity of the group is queued already: this should not
		// happen, but if it does, the pending members join it rather
		// than wait for ever.
		for _, pInfo := range pending {
			p.addToPodGroupIfExists(logger, pInfo, pgInfo, framework.ScheduleAttemptFailure)
		}
		return fmt.Errorf("pod group %v is already queued; its pending members joined it", klog.KObj(pgInfo))
	}
	failedInCycle := false
	for _, pInfo := range pending {
		pgInfo.ForEachPodInfo(func(tried *framework.QueuedPodInfo) bool {
			failedInCycle = failedInCycle || tried.Pod.UID == pInfo.Pod.UID
			return !failedInCycle
		})
	}
	rootInfo := p.workloadForest.buildQueuedPodGroupInfo(pgInfo)
	if rootInfo == nil {
		// The PodGroup was deleted during the cycle: its members wait
		// for it apart.
		for _, pInfo := range pending {
			p.incompletePodGroupPods.add(pInfo)
		}
		logger.V(3).Info("Pod group no longer exists; its members wait for it", "podGroup", klog.KObj(pgInfo), "pods", len(pending))
		return nil
	}
	for _, pInfo := range pending {
		rootInfo.AddPod(pInfo)
	}
	rootInfo.QueueingParams = pgInfo.QueueingParams
	requeueWithoutBackoff, preserveTimestamp := false, false
	switch {
	case status.IsSuccess():
		requeueWithoutBackoff, preserveTimestamp = true, failedInCycle
		rootInfo.ConsecutiveErrorsCount, rootInfo.UnschedulableCount = 0, 0
	case status.IsRejected():
		rootInfo.UnschedulableCount++
		rootInfo.ConsecutiveErrorsCount = 0
	default:
		rootInfo.ConsecutiveErrorsCount++
	}
	rootInfo.BackoffExpiration = time.Time{}
	if !preserveTimestamp {
		rootInfo.Timestamp = p.clock.Now()
	}
	strategy := queueAfterBackoff
	if requeueWithoutBackoff {
		strategy = queueImmediately
	}
	queue := p.requeueEntity(logger, rootInfo, strategy, framework.ScheduleAttemptFailure)
	logger.V(3).Info("Pod group moved to an internal scheduling queue", "podGroup", klog.KObj(rootInfo), "queue", queue, "schedulingCycle", podSchedulingCycle, "pods", rootInfo.Size())
	if queue != unschedulableQ {
		p.cond.Broadcast()
	}
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

// SchedulingCycle returns the number of entities popped so far.
func (p *PriorityQueue) SchedulingCycle() int64 {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.schedulingCycle
}

// flushBackoffQCompleted moves to activeQ the entities whose backoff ended.
//
//workshop:part 07/4
func (p *PriorityQueue) flushBackoffQCompleted(logger klog.Logger) {
	p.lock.Lock()
	defer p.lock.Unlock()
	activated := false
	for _, entity := range p.backoffQ.popAllBackoffCompleted() {
		if p.moveToActiveQ(logger, entity, framework.BackoffComplete, true) {
			activated = true
		}
	}
	if activated {
		p.cond.Broadcast()
	}
}

// Pop waits for an entity in activeQ and returns the best one, counting
// the attempt: a pod, or a pod group with its queued members. When activeQ
// is empty, it takes the head of backoffQ instead, before its backoff
// ends, as upstream's activeQueue.unlockedPop does: the scheduler would
// otherwise idle while entities wait. Only single pods some plugin
// rejected are taken early; a pod whose attempt ended in an error, and a
// pod group, wait out their backoff (backoff_queue.go). It returns an error once the queue is closed.
//
// A pod popped while it is still in flight is a bug elsewhere: the same pod
// tracked twice. That copy is discarded and the next entity popped, as
// upstream's unlockedPop does (PR #127016): scheduling it would overwrite
// its in-flight element, and the events after the first would never be
// freed. A pod group loses such members and is scheduled with the rest.
//
//workshop:part 06/1
func (p *PriorityQueue) Pop(logger klog.Logger) (framework.QueuedEntityInfo, error) {
	p.lock.Lock()
	defer p.lock.Unlock()
	for {
		for p.activeQ.Len() == 0 && p.backoffQ.lenBackoff() == 0 && !p.closed {
			p.cond.Wait()
		}
		if p.closed {
			return nil, fmt.Errorf("scheduling queue is closed")
		}
		entity, ok := p.activeQ.Pop()
		if !ok {
			entity, _ = p.backoffQ.popBackoff()
			logMove(logger, entity, framework.PopFromBackoffQ, activeQ)
			metrics.SchedulerQueueIncomingPods.WithLabelValues("active", framework.PopFromBackoffQ).Add(float64(entity.Size()))
		}
		var inFlight []*framework.QueuedPodInfo
		entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
			if _, ok := p.inFlightPods[pInfo.Pod.UID]; ok {
				inFlight = append(inFlight, pInfo)
			}
			return true
		})
		if len(inFlight) > 0 {
			pgInfo, isGroup := entity.(*framework.QueuedPodGroupInfo)
			for _, pInfo := range inFlight {
				logger.Error(nil, "Discarding the popped pod: it is in flight already", "pod", klog.KObj(pInfo.Pod))
				if isGroup {
					pgInfo.RemovePod(pInfo.Pod)
				}
			}
			if !isGroup || !pgInfo.HasQueuedPodInfos() {
				p.updateMetrics()
				continue
			}
		}
		entity.IncAttempts()
		p.schedulingCycle++
		// Its pods are in flight until Done: the events from now on may
		// concern them.
		entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
			p.inFlightPods[pInfo.Pod.UID] = p.inFlightEvents.PushBack(pInfo.Pod)
			return true
		})
		p.lastPoppedEntityKey = queuedEntityKeyFunc(entity)
		p.updateMetrics()
		return entity, nil
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
//
// A queued pod's nomination follows its new version (UpdateNominatedPod).
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
	var lookup framework.QueuedEntityInfo = newQueuedPodInfoForLookup(oldPod)
	if isPodGroupMember(oldPod) {
		root, ok := p.workloadForest.getRootLookupInfoForPod(oldPod)
		if !ok {
			if pInfo := p.incompletePodGroupPods.update(newPod); pInfo != nil {
				p.UpdateNominatedPod(logger, oldPod, pInfo.PodInfo)
			}
			return
		}
		lookup = root
	}
	if entity, ok := p.activeQ.Get(lookup); ok {
		if pInfo, err := entity.Update(newPod); err == nil {
			p.UpdateNominatedPod(logger, oldPod, pInfo.PodInfo)
			p.activeQ.AddOrUpdate(entity)
			return
		}
	}
	if entity, ok := p.backoffQ.get(lookup); ok {
		if pInfo, err := entity.Update(newPod); err == nil {
			p.UpdateNominatedPod(logger, oldPod, pInfo.PodInfo)
			p.backoffQ.update(entity)
			return
		}
	}
	if entity, ok := p.unschedulableEntities[queuedEntityKeyFunc(lookup)]; ok {
		if pInfo, err := entity.Update(newPod); err == nil {
			p.UpdateNominatedPod(logger, oldPod, pInfo.PodInfo)
			for _, evt := range events {
				if p.isEntityWorthRequeuing(logger, entity, evt, oldPod, newPod) == queueAfterBackoff {
					if p.requeueEntity(logger, entity, queueAfterBackoff, evt.Label()) != unschedulableQ {
						p.cond.Broadcast()
					}
					return
				}
			}
			return
		}
	}
	if isPodGroupMember(newPod) {
		if pInfo := p.pendingPodGroupPods.update(newPod); pInfo != nil {
			p.UpdateNominatedPod(logger, oldPod, pInfo.PodInfo)
			return
		}
	}
	// Not queued: added as a new pod, so its nomination is the one its new
	// status carries.
	// Under UnscheduledPodAdd, as upstream's Update calls addPod.
	p.addPod(logger, newPod, framework.EventUnscheduledPodAdd.Label())
}

// Delete removes a pod from wherever it is queued, and its nomination. A
// pod being scheduled is not in the queue; the failure handler finds it
// gone from the informer and does not put it back.
func (p *PriorityQueue) Delete(logger klog.Logger, pod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateMetrics()
	p.DeleteNominatedPodIfExists(pod)
	if isPodGroupMember(pod) {
		p.deletePodGroupMember(logger, pod)
		return
	}
	lookup := newQueuedPodInfoForLookup(pod)
	p.activeQ.Delete(lookup)
	p.backoffQ.delete(lookup)
	p.deleteFromPool(queuedEntityKeyFunc(lookup))
}

// deletePodGroupMember takes a member out of its group's entity, wherever
// that is queued; a group left without pods leaves the queue. A member
// held apart is dropped from there. The caller holds the lock.
func (p *PriorityQueue) deletePodGroupMember(logger klog.Logger, pod *v1.Pod) {
	root, ok := p.workloadForest.getRootLookupInfoForPod(pod)
	if !ok {
		p.incompletePodGroupPods.delete(pod)
		return
	}
	entity, strategy := p.deleteFromAnyQueue(root)
	if entity == nil {
		p.pendingPodGroupPods.delete(pod)
		return
	}
	pgInfo := entity.(*framework.QueuedPodGroupInfo)
	pgInfo.RemovePod(pod)
	if !pgInfo.HasQueuedPodInfos() {
		logger.V(5).Info("Pod group has no queued pods left", "podGroup", klog.KObj(pgInfo))
		return
	}
	// Upstream's deletePodGroupMember requeues the group under the event
	// UnscheduledPodAdd, although a member was deleted; the metrics and
	// the log say so here too, to count what v1.37.1 counts.
	if p.requeueEntity(logger, pgInfo, strategy, framework.EventUnscheduledPodAdd.Label()) != unschedulableQ {
		p.cond.Broadcast()
	}
}

// AddPodGroup records a PodGroup, and queues the members that waited for
// it, with the group.
//
//workshop:part 11/1
func (p *PriorityQueue) AddPodGroup(logger klog.Logger, pg *schedulingv1beta1.PodGroup) {
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateMetrics()
	p.workloadForest.addPodGroup(pg)
	for _, pInfo := range p.incompletePodGroupPods.clear(pg.Namespace, pg.Name) {
		p.addPodGroupMember(logger, pInfo, framework.EventUnscheduledPodAdd.Label())
	}
}

// UpdatePodGroup records a PodGroup's new version, in the forest and in
// the group's queued entity.
func (p *PriorityQueue) UpdatePodGroup(_ klog.Logger, pg *schedulingv1beta1.PodGroup) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.workloadForest.updatePodGroup(pg)
	root, ok := p.workloadForest.getRootLookupInfoForPodGroup(pg)
	if !ok {
		return
	}
	if entity := p.getEntityFromAnyQueue(root); entity != nil {
		entity.(*framework.QueuedPodGroupInfo).PodGroup = pg
	}
}

// DeletePodGroup forgets a PodGroup. Its queued members wait apart again,
// in incompletePodGroupPods, until a PodGroup of that name comes back.
func (p *PriorityQueue) DeletePodGroup(logger klog.Logger, pg *schedulingv1beta1.PodGroup) {
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateMetrics()
	root, ok := p.workloadForest.getRootLookupInfoForPodGroup(pg)
	p.workloadForest.deletePodGroup(pg)
	if !ok {
		return
	}
	entity, _ := p.deleteFromAnyQueue(root)
	var members []*framework.QueuedPodInfo
	if entity != nil {
		entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
			members = append(members, pInfo)
			return true
		})
	} else {
		members = p.pendingPodGroupPods.clear(pg.Namespace, pg.Name)
	}
	for _, pInfo := range members {
		p.incompletePodGroupPods.add(pInfo)
	}
	logger.V(5).Info("Pod group deleted; its queued members wait for it", "podGroup", klog.KObj(pg), "pods", len(members))
}

// getEntityFromAnyQueue returns the queued entity lookup names, wherever it
// is, or nil. The caller holds the lock.
func (p *PriorityQueue) getEntityFromAnyQueue(lookup framework.QueuedEntityInfo) framework.QueuedEntityInfo {
	if entity, ok := p.activeQ.Get(lookup); ok {
		return entity
	}
	if entity, ok := p.backoffQ.get(lookup); ok {
		return entity
	}
	if entity, ok := p.unschedulableEntities[queuedEntityKeyFunc(lookup)]; ok {
		return entity
	}
	return nil
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
		logger.V(5).Info("Cluster event handled: no enabled plugin registered for it", "event", event.Label(), "unschedulablePods", p.unschedulablePodsCount+p.gatedPodsCount)
		return
	}
	var toMove []framework.QueuedEntityInfo
	for _, entity := range p.unschedulableEntities {
		if preCheck != nil && !anyPod(entity, preCheck) {
			continue
		}
		// A gated entity moves only on an event its gating plugin
		// registered (or a wildcard): no other event can lift its gate.
		if entity.Gated() && !framework.ClusterEventIsWildCard(event) && !framework.MatchAnyClusterEvent(event, entity.GetGatingPluginEvents()) {
			continue
		}
		if p.isEntityWorthRequeuing(logger, entity, event, oldObj, newObj) == queueAfterBackoff {
			toMove = append(toMove, entity)
		}
	}
	activated := false
	for _, entity := range toMove {
		// Out of the pool first, as upstream's
		// moveEntitiesToActiveOrBackoffQueue takes it: an entity a gate
		// keeps there comes back in, and counts as coming in.
		p.deleteFromPool(queuedEntityKeyFunc(entity))
		if p.requeueEntity(logger, entity, queueAfterBackoff, event.Label()) != unschedulableQ {
			activated = true
		}
	}
	if len(p.inFlightPods) > 0 {
		p.inFlightEvents.PushBack(&clusterEvent{event: event, oldObj: oldObj, newObj: newObj})
	}
	logger.V(5).Info("Cluster event handled", "event", event.Label(), "moved", len(toMove), "unschedulablePods", p.unschedulablePodsCount+p.gatedPodsCount)
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

// anyPod says whether any pod of the entity passes check.
func anyPod(entity framework.QueuedEntityInfo, check PreEnqueueCheck) bool {
	found := false
	entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		found = check(pInfo.Pod)
		return !found
	})
	return found
}

// isEntityWorthRequeuing asks isPodWorthRequeuing for each pod of the
// entity: a pod group is worth a retry if any member is, as upstream's
// function of that name has it.
//
//workshop:part 11/1
func (p *PriorityQueue) isEntityWorthRequeuing(logger klog.Logger, entity framework.QueuedEntityInfo, event fwk.ClusterEvent, oldObj, newObj any) queueingStrategy {
	strategy := queueSkip
	entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		strategy = p.isPodWorthRequeuing(logger, pInfo, event, oldObj, newObj)
		return strategy == queueSkip
	})
	return strategy
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

// flushUnschedulableEntitiesLeftover moves to activeQ the entities that
// have waited in the unschedulable pool longer than
// podMaxInUnschedulablePodsDuration: a plugin may have missed registering
// an event that helps them. The flush is itself a cluster event,
// UnschedulableTimeout, a wildcard: like any event, it is kept for the pods
// in flight, so that a pod failing now is not parked for a further five
// minutes.
//
//workshop:part 06/2
func (p *PriorityQueue) flushUnschedulableEntitiesLeftover(logger klog.Logger) {
	p.lock.Lock()
	defer p.lock.Unlock()
	now := p.clock.Now()
	var toMove []framework.QueuedEntityInfo
	for _, entity := range p.unschedulableEntities {
		// The later of its failure and its last flush: a gated entity,
		// which never fails, is flushed once per period, not at every tick.
		last := entity.GetTimestamp()
		if entity.GetFlushTimestamp().After(last) {
			last = entity.GetFlushTimestamp()
		}
		if now.Sub(last) > p.podMaxInUnschedulablePodsDuration {
			entity.SetFlushTimestamp(now)
			toMove = append(toMove, entity)
		}
	}
	if len(toMove) == 0 {
		return
	}
	activated := false
	for _, entity := range toMove {
		// Out of the pool first, as upstream's
		// moveEntitiesToActiveOrBackoffQueue takes it: an entity a gate
		// keeps there comes back in, and counts as coming in.
		p.deleteFromPool(queuedEntityKeyFunc(entity))
		if p.requeueEntity(logger, entity, queueAfterBackoff, framework.UnschedulableTimeout) != unschedulableQ {
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
// trying now (GangScheduling, for the members of a gang whose first members
// wait at Permit). A member moves with its whole group. A pod in flight
// gets a ForceActivate event instead, so that it is tried again if it
// fails. Other pods are ignored. It mirrors upstream's Activate.
func (p *PriorityQueue) Activate(logger klog.Logger, pods map[string]*v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	activated := false
	for _, pod := range pods {
		var lookup framework.QueuedEntityInfo = newQueuedPodInfoForLookup(pod)
		if isPodGroupMember(pod) {
			root, ok := p.workloadForest.getRootLookupInfoForPod(pod)
			if !ok {
				continue
			}
			lookup = root
		}
		if p.activate(logger, lookup) {
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

// activate moves one entity to activeQ if it waits in the pool or in
// backoffQ. The caller holds the lock.
func (p *PriorityQueue) activate(logger klog.Logger, lookup framework.QueuedEntityInfo) bool {
	entity, ok := p.unschedulableEntities[queuedEntityKeyFunc(lookup)]
	movesFromBackoffQ := false
	if !ok {
		if entity, ok = p.backoffQ.get(lookup); !ok {
			return false
		}
		movesFromBackoffQ = true
	}
	return p.moveToActiveQ(logger, entity, framework.ForceActivate, movesFromBackoffQ)
}

// GetPod returns the queued pod of that name, from any part of the queue,
// in its group's entity or apart.
func (p *PriorityQueue) GetPod(name, namespace string) (*framework.QueuedPodInfo, bool) {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.getPodUnlocked(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}})
}

// getPodUnlocked is GetPod under the lock. A pod group member is looked
// for in its group's entity, or among the members held apart. The pod
// given may have only a name (the nominator keeps no more): then the
// informer's copy, if the queue has a pod lister, says whether it is a
// member.
func (p *PriorityQueue) getPodUnlocked(pod *v1.Pod) (*framework.QueuedPodInfo, bool) {
	if pod.Spec.SchedulingGroup == nil && p.podLister != nil {
		if cached, err := p.podLister.Pods(pod.Namespace).Get(pod.Name); err == nil {
			pod = cached
		}
	}
	if !isPodGroupMember(pod) {
		if entity := p.getEntityFromAnyQueue(newQueuedPodInfoForLookup(pod)); entity != nil {
			return entity.(*framework.QueuedPodInfo), true
		}
		return nil, false
	}
	if pInfo := p.incompletePodGroupPods.get(pod); pInfo != nil {
		return pInfo, true
	}
	if pInfo := p.pendingPodGroupPods.get(pod); pInfo != nil {
		return pInfo, true
	}
	root, ok := p.workloadForest.getRootLookupInfoForPod(pod)
	if !ok {
		return nil, false
	}
	entity := p.getEntityFromAnyQueue(root)
	if entity == nil {
		return nil, false
	}
	var found *framework.QueuedPodInfo
	entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		if pInfo.Pod.Name == pod.Name {
			found = pInfo
		}
		return found == nil
	})
	return found, found != nil
}

// podsOf lists the pods of the entities.
func podsOf(entities []framework.QueuedEntityInfo) []*v1.Pod {
	var out []*v1.Pod
	for _, entity := range entities {
		entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
			out = append(out, pInfo.Pod)
			return true
		})
	}
	return out
}

// PodsInActiveQ returns the pods in activeQ, in no particular order.
func (p *PriorityQueue) PodsInActiveQ() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	return podsOf(p.activeQ.List())
}

// PodsInBackoffQ returns the pods in backoffQ, in no particular order.
func (p *PriorityQueue) PodsInBackoffQ() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	return podsOf(p.backoffQ.list())
}

// UnschedulablePods returns the pods in the unschedulable pool, in no
// particular order.
func (p *PriorityQueue) UnschedulablePods() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	return podsOf(slices.Collect(maps.Values(p.unschedulableEntities)))
}

// PendingPodGroupPods returns the members that wait for their group's
// scheduling cycle to end.
func (p *PriorityQueue) PendingPodGroupPods() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.pendingPodGroupPods.list()
}

// IncompletePodGroupPods returns the members that wait for their PodGroup.
func (p *PriorityQueue) IncompletePodGroupPods() []*v1.Pod {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.incompletePodGroupPods.list()
}

// updateMetrics sets scheduler_pending_pods, counting pods, not entities;
// the members held apart from their group have labels of their own,
// incomplete and pending, as upstream's. The caller holds the lock.
func (p *PriorityQueue) updateMetrics() {
	metrics.ActivePods().Set(float64(p.activeQ.Size()))
	metrics.BackoffPods().Set(float64(p.backoffQ.size()))
	metrics.UnschedulablePods().Set(float64(p.unschedulablePodsCount))
	metrics.GatedPods().Set(float64(p.gatedPodsCount))
	metrics.IncompletePodGroupPods().Set(float64(p.incompletePodGroupPods.len()))
	metrics.PendingPodGroupPods().Set(float64(p.pendingPodGroupPods.len()))
}
