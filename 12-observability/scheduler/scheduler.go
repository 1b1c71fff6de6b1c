// Package scheduler is chapter 12's whole scheduler. It mirrors
// pkg/scheduler/scheduler.go of k8s.io/kubernetes (the Scheduler type, New
// with functional options, buildQueueingHintMap, Run): shared informers feed
// a cache of nodes and bound pods and a priority queue of pending pods; each
// cycle pops the best pod, filters and scores the nodes of a cache
// snapshot, assumes the pod on the best one, and binds it in a goroutine of
// its own. A pod that fits nowhere waits in the queue until a cluster event
// could make it fit, as the hints of the plugins that rejected it judge,
// and then out its backoff, which grows with each failure. A pod that fits
// nowhere may preempt pods of lower priority: the DefaultPreemption
// plugin evicts them and the pod's nominated node is kept free for it.
// In a large cluster a cycle stops looking once it has found enough
// feasible nodes (percentageOfNodesToScore), and the next cycle starts
// where it stopped; the filters and the scores run on several goroutines
// (parallelism). Pods that name a PodGroup (scheduling.k8s.io/v1beta1) are
// queued with their group as one entity, and placed in one pod-group cycle
// (schedule_one_podgroup.go): its members go to binding only if at least
// minCount of them fit. Every step records upstream's metrics, where
// upstream records them, and marks itself in Go's execution trace when
// one is being recorded (--trace-file).
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	clientset "k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/utils/clock"

	internalcache "minisched/12-observability/scheduler/backend/cache"
	"minisched/12-observability/scheduler/backend/queue"
)

// This chapter is kube-scheduler v1.37.1 run with
// --feature-gates=GenericWorkload=true: the gate is beta and off by
// default. It turns on what the chapter's imports read from the process's
// default feature gate: GangScheduling in the default profile
// (latest.Default), the PodGroup events of the wildcard registration
// (framework.UnrollWildCardResource), and the plugins' feature.Features.
func init() {
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(kubefeatures.GenericWorkload): true}); err != nil {
		panic(fmt.Sprintf("turning on the %s feature gate: %v", kubefeatures.GenericWorkload, err))
	}
}

// DefaultSchedulerName is the spec.schedulerName this scheduler answers to
// unless told otherwise. It is not "default-scheduler", so a chapter can run
// beside the real kube-scheduler without the two fighting over pods.
const DefaultSchedulerName = "mini-scheduler"

// DefaultPodMaxInUnschedulablePodsDuration is the default of the
// --pod-max-in-unschedulable-pods-duration flag: upstream's 5 minutes.
const DefaultPodMaxInUnschedulablePodsDuration = queue.DefaultPodMaxInUnschedulablePodsDuration

// The defaults of the --pod-initial-backoff-duration and
// --pod-max-backoff-duration flags: upstream's 1 and 10 seconds.
const (
	DefaultPodInitialBackoffDuration = queue.DefaultPodInitialBackoffDuration
	DefaultPodMaxBackoffDuration     = queue.DefaultPodMaxBackoffDuration
)

// Scheduler schedules the pods that name it.
type Scheduler struct {
	client        clientset.Interface
	recorder      events.EventRecorder
	schedulerName string
	rand          *rand.Rand
	framework     *Framework
	clock         clock.WithDelayedExecution
	// podMaxInUnschedulablePodsDuration bounds how long a pod waits in the
	// unschedulable pool for an event before it is tried again anyway.
	podMaxInUnschedulablePodsDuration time.Duration
	// podInitialBackoffDuration and podMaxBackoffDuration set a pod's
	// backoff after a failure: the first, doubled at each failure, up to
	// the second.
	podInitialBackoffDuration time.Duration
	podMaxBackoffDuration     time.Duration
	// percentageOfNodesToScore is the share of the nodes, in percent, that
	// a cycle looks for feasible ones among; 0 adapts it to the cluster's
	// size (numFeasibleNodesToFind).
	percentageOfNodesToScore int32
	// parallelism bounds the goroutines of the Filter and Score loops and
	// of preemption's dry runs.
	parallelism int
	// powerOfChoices, when above 0, turns on power-of-two choices, an
	// experiment that upstream does not have: a cycle looks at the nodes
	// in a random order and stops after this many feasible ones.
	powerOfChoices int
	// scoringStrategy replaces NodeResourcesFit's LeastAllocated when set.
	scoringStrategy config.ScoringStrategyType
	// nextStartNodeIndex is where the next cycle starts looking in the
	// snapshot's node list: where the last one stopped. Only the
	// scheduling loop uses it.
	nextStartNodeIndex int
	// logger is the logger of New's context, for the event handlers, which
	// have no context of their own.
	logger klog.Logger

	// informerFactory starts the informers for pods, nodes and pod groups;
	// podLister reads pods from the pod informer's store, not from the
	// apiserver.
	informerFactory informers.SharedInformerFactory
	podLister       corelisters.PodLister
	// registrations are the event handlers' registrations on the informers.
	registrations []cache.ResourceEventHandlerRegistration
	// cache holds the nodes, the bound pods, the assumed pods and the pod
	// groups' state; the event handlers, the scheduling loop and the
	// binding goroutines share it.
	cache *internalcache.Cache
	// nodeInfoSnapshot is what the current scheduling cycle sees of the
	// cache. Only the scheduling loop uses it; the cache refreshes it in
	// place before each cycle.
	nodeInfoSnapshot *internalcache.Snapshot
	// queue holds the pending pods: the ones to try, best first, and the ones
	// that failed, until an event may help them.
	queue *queue.PriorityQueue
	// bindings counts the binding goroutines, so Run can wait for them.
	bindings sync.WaitGroup
}

// Option configures a Scheduler, as upstream's scheduler.Option does.
type Option func(*Scheduler)

// WithSchedulerName sets the spec.schedulerName whose pods are scheduled.
func WithSchedulerName(name string) Option {
	return func(s *Scheduler) { s.schedulerName = name }
}

// WithRand injects the source of randomness that breaks ties between nodes
// with the same top score, so tests can seed it and get the same placements
// every run.
func WithRand(r *rand.Rand) Option {
	return func(s *Scheduler) { s.rand = r }
}

// WithClock injects the clock that times Permit waits and the queue, so
// tests can step it.
func WithClock(c clock.WithDelayedExecution) Option {
	return func(s *Scheduler) { s.clock = c }
}

// WithPodMaxInUnschedulablePodsDuration sets how long a pod may wait in the
// unschedulable pool before the leftover flush tries it again.
func WithPodMaxInUnschedulablePodsDuration(d time.Duration) Option {
	return func(s *Scheduler) { s.podMaxInUnschedulablePodsDuration = d }
}

// WithPodInitialBackoffDuration sets the backoff after a pod's first
// failure.
func WithPodInitialBackoffDuration(d time.Duration) Option {
	return func(s *Scheduler) { s.podInitialBackoffDuration = d }
}

// WithPodMaxBackoffDuration caps a pod's backoff.
func WithPodMaxBackoffDuration(d time.Duration) Option {
	return func(s *Scheduler) { s.podMaxBackoffDuration = d }
}

// WithPercentageOfNodesToScore sets the share of the nodes, in percent,
// among which a cycle looks for feasible ones: 0 (the default) adapts it
// to the cluster's size, 100 looks at every node. It is upstream's
// percentageOfNodesToScore.
func WithPercentageOfNodesToScore(percentage int32) Option {
	return func(s *Scheduler) { s.percentageOfNodesToScore = percentage }
}

// WithParallelism sets how many goroutines the Filter and Score loops and
// preemption's dry runs use at most: upstream's parallelism, 16 by default.
func WithParallelism(parallelism int) Option {
	return func(s *Scheduler) { s.parallelism = parallelism }
}

// WithPowerOfChoices turns on power-of-two choices with d samples (0 turns
// it off): each cycle scores only the first d feasible nodes of a random
// order. Upstream does not have it; kubernetes/kubernetes#86630 proposed it.
func WithPowerOfChoices(d int) Option {
	return func(s *Scheduler) { s.powerOfChoices = d }
}

// WithScoringStrategy sets NodeResourcesFit's scoring strategy:
// MostAllocated packs pods onto few nodes, where the default,
// LeastAllocated, spreads them. make quality measures both.
func WithScoringStrategy(strategy config.ScoringStrategyType) Option {
	return func(s *Scheduler) { s.scoringStrategy = strategy }
}

// New returns a Scheduler that talks to the apiserver through client,
// records events on pods through recorder, and filters and scores nodes
// with the plugins of NewFramework. It sets up the informers and their
// event handlers; Run starts them. The plugins' goroutines stop when ctx
// ends.
func New(ctx context.Context, client clientset.Interface, recorder events.EventRecorder, opts ...Option) (*Scheduler, error) {
	s := &Scheduler{
		client:           client,
		recorder:         recorder,
		schedulerName:    DefaultSchedulerName,
		rand:             rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		clock:            clock.RealClock{},
		parallelism:      parallelize.DefaultParallelism,
		informerFactory:  NewInformerFactory(client),
		cache:            internalcache.New(),
		nodeInfoSnapshot: internalcache.NewEmptySnapshot(),
		logger:           klog.FromContext(ctx),

		podMaxInUnschedulablePodsDuration: DefaultPodMaxInUnschedulablePodsDuration,
		podInitialBackoffDuration:         DefaultPodInitialBackoffDuration,
		podMaxBackoffDuration:             DefaultPodMaxBackoffDuration,
	}
	for _, opt := range opts {
		opt(s)
	}
	// Upstream's metrics, registered before anything records them, as
	// upstream's New registers them. Registering twice is a no-op.
	metrics.Register()
	// One recorder observes the plugins' durations off the hot path, for
	// the framework and the queue alike; it flushes once a second until
	// ctx ends, as upstream's.
	metricsRecorder := metrics.NewMetricsAsyncRecorder(1000, time.Second, ctx.Done())
	s.podLister = s.informerFactory.Core().V1().Pods().Lister()
	fw, err := NewFramework(ctx, client, s.informerFactory, recorder, s.nodeInfoSnapshot, s.cache, s.clock, s.parallelism, s.scoringStrategy,
		WithMetricsRecorder(metricsRecorder), WithProfileName(s.schedulerName))
	if err != nil {
		return nil, err
	}
	s.framework = fw
	hintMap, err := buildQueueingHintMap(ctx, fw.EnqueueExtensions())
	if err != nil {
		return nil, err
	}
	s.queue = queue.NewPriorityQueue(fw.QueueSortFunc(),
		queue.WithClock(s.clock),
		queue.WithPodMaxInUnschedulablePodsDuration(s.podMaxInUnschedulablePodsDuration),
		queue.WithPodInitialBackoffDuration(s.podInitialBackoffDuration),
		queue.WithPodMaxBackoffDuration(s.podMaxBackoffDuration),
		queue.WithQueueingHintMap(hintMap),
		queue.WithPreEnqueuePlugins(fw.PreEnqueuePlugins()),
		queue.WithPodLister(s.podLister),
		queue.WithMetricsRecorder(metricsRecorder))
	// The plugins reach the queue's nominator and Activate through the
	// framework's handle, as upstream's New wires them.
	fw.SetPodNominator(s.queue)
	fw.SetPodActivator(s.queue)
	if err := addAllEventHandlers(s, s.informerFactory); err != nil {
		return nil, err
	}
	return s, nil
}

// buildQueueingHintMap asks every plugin that can reject a pod which
// cluster events could make such a pod schedulable, and maps each event to
// the plugins that registered it, each with its queueing hint: a function
// that looks at the object that changed and answers Queue or QueueSkip for
// a pod the plugin rejected. An event registered without a hint gets
// defaultQueueingHintFn, which always answers Queue. An event on pods is
// registered as three: for assigned pods, for other unscheduled pods, and
// for the rejected pod itself (UnrollPodEvent). It mirrors upstream's
// function of the same name.
func buildQueueingHintMap(ctx context.Context, es []fwk.EnqueueExtensions) (queue.QueueingHintMap, error) {
	hintMap := queue.QueueingHintMap{}
	var returnErr error
	for _, e := range es {
		events, err := e.EventsToRegister(ctx)
		if err != nil {
			returnErr = errors.Join(returnErr, err)
		}
		// A plugin may register no event at all: a pod it rejected is moved
		// only by an update of the pod itself (queue.Update) or the flush.
		for _, event := range events {
			fn := event.QueueingHintFn
			if fn == nil {
				fn = defaultQueueingHintFn
			}
			hintFn := &queue.QueueingHintFunction{PluginName: e.Name(), QueueingHintFn: fn}
			unrolled := []fwk.ClusterEvent{event.Event}
			if event.Event.Resource == fwk.Pod {
				unrolled = framework.UnrollPodEvent(event.Event)
			}
			for _, evt := range unrolled {
				hintMap[evt] = append(hintMap[evt], hintFn)
			}
		}
	}
	if returnErr != nil {
		return nil, returnErr
	}
	return hintMap, nil
}

// defaultQueueingHintFn is the hint of an event registered without one:
// any such event may help, as in chapters 06 and 07.
func defaultQueueingHintFn(_ klog.Logger, _ *v1.Pod, _, _ any) (fwk.QueueingHint, error) {
	return fwk.Queue, nil
}

// NewInformerFactory returns the informers a scheduler needs, as upstream's
// function of that name does: the pod informer leaves out pods that have
// terminated (status.phase Succeeded or Failed), which use no resources and
// need no node.
func NewInformerFactory(client clientset.Interface) informers.SharedInformerFactory {
	factory := informers.NewSharedInformerFactory(client, 0)
	factory.InformerFor(&v1.Pod{}, newPodInformer)
	return factory
}

func newPodInformer(client clientset.Interface, resync time.Duration) cache.SharedIndexInformer {
	selector := fmt.Sprintf("status.phase!=%v,status.phase!=%v", v1.PodSucceeded, v1.PodFailed)
	return coreinformers.NewFilteredPodInformer(client, metav1.NamespaceAll, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.FieldSelector = selector })
}

// Run starts the informers and the queue's leftover flush, waits until the
// event handlers have seen the whole cluster, and then schedules pods until
// ctx is cancelled: each ScheduleOne pops one pod.
// Binding cycles run in goroutines of their own; once ctx is cancelled, Run
// waits for them: a pod waiting at Permit is rejected, a Binding in flight
// finishes or fails.
func (sched *Scheduler) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	sched.informerFactory.Start(ctx.Done())
	defer sched.informerFactory.Shutdown()
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return err
	}
	// Informers without handlers (PodDisruptionBudgets, which preemption
	// lists) must have listed too.
	for typ, ok := range sched.informerFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the informer for %v did not sync: %w", typ, context.Cause(ctx))
		}
	}
	logger.V(2).Info("Informers synced; scheduling")
	sched.queue.Run(logger)
	go func() {
		<-ctx.Done()
		sched.queue.Close()
	}()
	defer sched.bindings.Wait()
	for ctx.Err() == nil {
		sched.ScheduleOne(ctx)
	}
	return nil
}

// assignedPod says whether a pod has a node.
func assignedPod(pod *v1.Pod) bool { return len(pod.Spec.NodeName) != 0 }

// responsibleForPod says whether this scheduler is the one to schedule it.
func (sched *Scheduler) responsibleForPod(pod *v1.Pod) bool {
	return pod.Spec.SchedulerName == sched.schedulerName
}

// WaitForHandlersSync waits until every event handler has received the
// objects of its informer's first list. An informer's own sync is not
// enough: its store is full before its handlers have run, and until they
// have, the cache and the queue miss part of the cluster.
func (sched *Scheduler) WaitForHandlersSync(ctx context.Context) error {
	synced := make([]cache.InformerSynced, 0, len(sched.registrations))
	for _, r := range sched.registrations {
		synced = append(synced, r.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("the event handlers did not sync: %w", context.Cause(ctx))
	}
	return nil
}
