package scheduler

// This file mirrors pkg/scheduler/framework/runtime/framework.go of
// k8s.io/kubernetes: it builds the enabled plugins and runs them at each
// extension point (RunPreFilterPlugins, RunFilterPlugins,
// RunFilterPluginsWithNominatedPods, RunPreFilterExtensionAddPod and
// RemovePod, RunPostFilterPlugins, RunPreScorePlugins, RunScorePlugins,
// RunPlacementFeasiblePlugins, RunReservePlugins*,
// RunPermitPlugins, WaitOnPermit, RunPreBindPlugins, RunBindPlugins,
// RunPostBindPlugins), and collects the plugins' EventsToRegister
// (fillEnqueueExtensions). The plugins are upstream's own, but for
// NodeCost, written in chapter 03, and DefaultPreemption, written in
// chapter 09 (framework/plugins/defaultpreemption); the loops that run them
// are this chapter's.

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/gangscheduling"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/schedulinggates"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"

	internalcache "minisched/11-gang-scheduling/scheduler/backend/cache"
	"minisched/11-gang-scheduling/scheduler/framework/plugins/defaultpreemption"
	"minisched/11-gang-scheduling/scheduler/framework/plugins/nodecost"
	"minisched/11-gang-scheduling/scheduler/metrics"
)

// PluginFactory builds an in-tree plugin, as the factories of upstream's
// in-tree registry (pkg/scheduler/framework/plugins/registry.go) do.
type PluginFactory func(ctx context.Context, args runtime.Object, h fwk.Handle, fts feature.Features) (fwk.Plugin, error)

// Registry names the plugins this chapter enables: upstream's in-tree
// plugins, among them GangScheduling, which upstream's default profile
// enables with the GenericWorkload feature gate (in place of chapter 04's
// Gang, which pods joined by a label), NodeCost (chapter 03) and
// DefaultPreemption (chapter 09, in place of upstream's). The framework
// below runs them.
var Registry = map[string]PluginFactory{
	queuesort.Name: func(ctx context.Context, args runtime.Object, h fwk.Handle, _ feature.Features) (fwk.Plugin, error) {
		return queuesort.New(ctx, args, h)
	},
	schedulinggates.Name:                 schedulinggates.New,
	nodeunschedulable.Name:               nodeunschedulable.New,
	nodename.Name:                        nodename.New,
	tainttoleration.Name:                 tainttoleration.New,
	nodeaffinity.Name:                    nodeaffinity.New,
	noderesources.Name:                   noderesources.NewFit,
	noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
	defaultbinder.Name: func(ctx context.Context, args runtime.Object, h fwk.Handle, _ feature.Features) (fwk.Plugin, error) {
		return defaultbinder.New(ctx, args, h)
	},
	nodecost.Name:       nodecost.New,
	gangscheduling.Name: gangscheduling.New,
	defaultpreemption.Name: func(ctx context.Context, args runtime.Object, h fwk.Handle, fts feature.Features) (fwk.Plugin, error) {
		return defaultpreemption.New(ctx, args, h, fts)
	},
}

// maxPermitTimeout caps how long any plugin may keep a pod waiting, as
// upstream's maxTimeout does.
const maxPermitTimeout = 15 * time.Minute

// NodeCostWeight is NodeCost's weight. It is not in upstream's default
// profile, which sets the others'; 5 lets a pod that opts in prefer a
// cheaper node over a less loaded one.
const NodeCostWeight = 5

// Framework holds the enabled plugins of each extension point, in the order
// upstream's default profile lists them, and runs them.
type Framework struct {
	preEnqueuePlugins []fwk.PreEnqueuePlugin
	queueSortPlugins  []fwk.QueueSortPlugin
	preFilterPlugins  []fwk.PreFilterPlugin
	filterPlugins     []fwk.FilterPlugin
	postFilterPlugins []fwk.PostFilterPlugin
	preScorePlugins   []fwk.PreScorePlugin
	scorePlugins      []fwk.ScorePlugin
	scorePluginWeight map[string]int64
	reservePlugins    []fwk.ReservePlugin
	permitPlugins     []fwk.PermitPlugin
	preBindPlugins    []fwk.PreBindPlugin
	bindPlugins       []fwk.BindPlugin
	postBindPlugins   []fwk.PostBindPlugin
	// placementFeasiblePlugins judge, during a pod-group cycle, whether the
	// group can still be placed (GangScheduling: minCount).
	placementFeasiblePlugins []framework.PlacementFeasiblePlugin
	// enqueueExtensions are the plugins whose rejection a cluster event can
	// undo, each with the events it registered.
	enqueueExtensions []fwk.EnqueueExtensions

	waitingPods *waitingPods
	clock       clock.WithDelayedExecution
	handle      *handle
}

// handle is the framework Handle the plugins get: upstream's bare one, with
// what the bare one cannot serve served from this chapter's own code: the
// waiting pods (the bare handle has none: its GetWaitingPod would panic),
// the scheduling cycle's snapshot, the pod groups' live state (the cache),
// the nominated pods and Activate (from the queue), the event recorder, and
// the plugin loops that DefaultPreemption runs during its dry runs.
type handle struct {
	fwk.Handle
	waitingPods     *waitingPods
	framework       *Framework
	snapshot        *internalcache.Snapshot
	podGroupManager fwk.PodGroupManager
	recorder        events.EventRecorderLogger
	podNominator    fwk.PodNominator
	podActivator    fwk.PodActivator
}

// SnapshotSharedLister serves the scheduling cycle's snapshot: its nodes
// and its pod groups (GangScheduling's Permit reads the PodGroup there).
func (h *handle) SnapshotSharedLister() fwk.SharedLister { return h.snapshot }

// PodGroupManager serves the pod groups' live state, from the cache:
// GangScheduling's PreEnqueue counts a group's members there, its Permit
// the members assumed or bound, less those already rejected at Permit
// (permitAwarePodGroupManager).
func (h *handle) PodGroupManager() fwk.PodGroupManager {
	return permitAwarePodGroupManager{PodGroupManager: h.podGroupManager, waitingPods: h.waitingPods}
}

// permitAwarePodGroupManager is the cache's PodGroupManager, but a member
// whose wait at Permit was rejected (a deadline, a deletion) is not counted
// as assumed any more, although its binding goroutine has not yet forgotten
// it in the cache. Otherwise a member whose Permit runs in between would
// count it towards minCount, and let the rest of its gang bind without it.
// Upstream counts it. Permit runs under permitMu, as rejections do, so a
// count and the allowing that follows see the same rejections.
type permitAwarePodGroupManager struct {
	fwk.PodGroupManager
	waitingPods *waitingPods
}

func (m permitAwarePodGroupManager) PodGroupStates() fwk.PodGroupStateLister {
	return permitAwarePodGroupStates{PodGroupStateLister: m.PodGroupManager.PodGroupStates(), waitingPods: m.waitingPods}
}

type permitAwarePodGroupStates struct {
	fwk.PodGroupStateLister
	waitingPods *waitingPods
}

func (l permitAwarePodGroupStates) Get(namespace, name string) (fwk.PodGroupState, error) {
	s, err := l.PodGroupStateLister.Get(namespace, name)
	if err != nil {
		return nil, err
	}
	return permitAwarePodGroupState{PodGroupState: s, waitingPods: l.waitingPods}, nil
}

type permitAwarePodGroupState struct {
	fwk.PodGroupState
	waitingPods *waitingPods
}

// AssumedPods leaves out the members rejected at Permit.
func (s permitAwarePodGroupState) AssumedPods() sets.Set[types.UID] {
	out := sets.New[types.UID]()
	for uid := range s.PodGroupState.AssumedPods() {
		if !s.waitingPods.isRejected(uid) {
			out.Insert(uid)
		}
	}
	return out
}

// ScheduledPodsCount leaves out the members rejected at Permit. It reads
// the cache's state once (ScheduledPods): two reads, of the count and of
// the assumed members, could straddle a ForgetPod and count a member the
// second read no longer shows as rejected.
func (s permitAwarePodGroupState) ScheduledPodsCount() int {
	n := 0
	for _, pod := range s.PodGroupState.ScheduledPods() {
		if !s.waitingPods.isRejected(pod.UID) {
			n++
		}
	}
	return n
}

// NodeInfos returns the nodes of the current scheduling cycle's snapshot.
// Upstream's preemption reaches them through
// MutableSnapshotSharedLister().NodeInfos(); this chapter's snapshot holds
// only nodes, so the handle serves them directly (defaultpreemption asks
// for this method).
func (h *handle) NodeInfos() fwk.NodeInfoLister { return h.snapshot.NodeInfos() }

// EventRecorder returns the scheduler's event recorder (the bare handle has
// none).
func (h *handle) EventRecorder() events.EventRecorderLogger { return h.recorder }

// NominatedPodsForNode returns the pods nominated to the node, from the
// queue's nominator.
func (h *handle) NominatedPodsForNode(nodeName string) []fwk.PodInfo {
	if h.podNominator == nil {
		return nil
	}
	return h.podNominator.NominatedPodsForNode(nodeName)
}

// AddNominatedPod records a nomination in the queue's nominator.
func (h *handle) AddNominatedPod(logger klog.Logger, pod fwk.PodInfo, nominatingInfo *fwk.NominatingInfo) {
	if h.podNominator != nil {
		h.podNominator.AddNominatedPod(logger, pod, nominatingInfo)
	}
}

// DeleteNominatedPodIfExists forgets a nomination in the queue's nominator.
func (h *handle) DeleteNominatedPodIfExists(pod *v1.Pod) {
	if h.podNominator != nil {
		h.podNominator.DeleteNominatedPodIfExists(pod)
	}
}

// UpdateNominatedPod updates a nomination in the queue's nominator.
func (h *handle) UpdateNominatedPod(logger klog.Logger, oldPod *v1.Pod, newPodInfo fwk.PodInfo) {
	if h.podNominator != nil {
		h.podNominator.UpdateNominatedPod(logger, oldPod, newPodInfo)
	}
}

// Activate moves pods to activeQ through the queue.
func (h *handle) Activate(logger klog.Logger, pods map[string]*v1.Pod) {
	if h.podActivator != nil {
		h.podActivator.Activate(logger, pods)
	}
}

// RunFilterPlugins runs this chapter's Filter loop.
func (h *handle) RunFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	return h.framework.RunFilterPlugins(ctx, state, pod, nodeInfo)
}

// RunFilterPluginsWithNominatedPods runs this chapter's Filter loop with
// the nominated pods.
func (h *handle) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	return h.framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo)
}

// RunPreFilterExtensionAddPod runs this chapter's AddPod loop.
func (h *handle) RunPreFilterExtensionAddPod(ctx context.Context, state fwk.CycleState, podToSchedule *v1.Pod, podInfoToAdd fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	return h.framework.RunPreFilterExtensionAddPod(ctx, state, podToSchedule, podInfoToAdd, nodeInfo)
}

// RunPreFilterExtensionRemovePod runs this chapter's RemovePod loop.
func (h *handle) RunPreFilterExtensionRemovePod(ctx context.Context, state fwk.CycleState, podToSchedule *v1.Pod, podInfoToRemove fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	return h.framework.RunPreFilterExtensionRemovePod(ctx, state, podToSchedule, podInfoToRemove, nodeInfo)
}

// IterateOverWaitingPods calls callback for every pod waiting at Permit.
func (h *handle) IterateOverWaitingPods(callback func(fwk.WaitingPod)) {
	for _, wp := range h.waitingPods.list() {
		callback(wp)
	}
}

// GetWaitingPod returns a waiting pod, or nil.
func (h *handle) GetWaitingPod(uid types.UID) fwk.WaitingPod {
	if wp := h.waitingPods.get(uid); wp != nil {
		return wp
	}
	return nil
}

// RejectWaitingPod rejects a waiting pod; it reports whether this call
// decided its fate. Plugins call it, possibly from Permit, so it does not
// take permitMu.
func (h *handle) RejectWaitingPod(uid types.UID) bool {
	if wp := h.waitingPods.get(uid); wp != nil {
		return wp.Reject("", "removed")
	}
	return false
}

// NewFramework builds the plugins of Registry. Their arguments are the
// defaults of upstream's own configuration API (latest.Default), never set
// by hand, and so are their order and their score weights (TaintToleration
// 3, NodeAffinity 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1),
// so that a pod's diagnosis and scores are the ones upstream's would be.
//
// The plugins need a framework Handle (for the client, among others).
// frameworkruntime.NewFramework with no registry and no profile returns a
// bare one, which serves the informer factory to the plugins; its
// background goroutines end with ctx. The clock times Permit waits.
// podGroupManager is the cache, which GangScheduling reads the pod groups'
// live state from. parallelism is how many goroutines the Score loop,
// the scheduler's Filter loop and preemption's dry runs use at most, as the
// bare handle's Parallelizer serves it to them all. scoringStrategy, when
// not empty, replaces NodeResourcesFit's default LeastAllocated (make
// quality packs pods with MostAllocated); its resources and weights stay
// upstream's defaults. DefaultPreemption reads the nodes of snapshot (the
// scheduling cycle's) and records the Preempted events on victims through
// recorder.
func NewFramework(ctx context.Context, client clientset.Interface, informerFactory informers.SharedInformerFactory, recorder events.EventRecorder, snapshot *internalcache.Snapshot, podGroupManager fwk.PodGroupManager, clk clock.WithDelayedExecution, parallelism int, scoringStrategy config.ScoringStrategyType) (*Framework, error) {
	bare, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithClientSet(client), frameworkruntime.WithInformerFactory(informerFactory), frameworkruntime.WithParallelism(parallelism))
	if err != nil {
		return nil, err
	}
	waiting := newWaitingPods()
	handle := &handle{Handle: bare, waitingPods: waiting, snapshot: snapshot, podGroupManager: podGroupManager, recorder: withLogger(recorder)}
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0]
	args := map[string]runtime.Object{}
	for _, pc := range profile.PluginConfig {
		args[pc.Name] = pc.Args
	}
	if scoringStrategy != "" {
		fitArgs := args[noderesources.Name].(*config.NodeResourcesFitArgs).DeepCopy()
		fitArgs.ScoringStrategy.Type = scoringStrategy
		args[noderesources.Name] = fitArgs
	}
	fts := features()
	f := &Framework{scorePluginWeight: map[string]int64{}, waitingPods: waiting, clock: clk, handle: handle}
	handle.framework = f
	order, weights := pluginOrder(profile)
	// The chapters' own plugin comes after upstream's.
	order = append(order, nodecost.Name)
	weights[nodecost.Name] = NodeCostWeight
	built := sets.New[string]()
	for _, p := range order {
		factory, ok := Registry[p]
		if !ok {
			continue
		}
		built.Insert(p)
		pl, err := factory(ctx, args[p], handle, fts)
		if err != nil {
			return nil, fmt.Errorf("initializing plugin %q: %w", p, err)
		}
		f.fillEnqueueExtensions(pl)
		if pl, ok := pl.(fwk.PreEnqueuePlugin); ok {
			f.preEnqueuePlugins = append(f.preEnqueuePlugins, pl)
		}
		if pl, ok := pl.(fwk.QueueSortPlugin); ok {
			f.queueSortPlugins = append(f.queueSortPlugins, pl)
		}
		if pl, ok := pl.(fwk.PreFilterPlugin); ok {
			f.preFilterPlugins = append(f.preFilterPlugins, pl)
		}
		if pl, ok := pl.(fwk.FilterPlugin); ok {
			f.filterPlugins = append(f.filterPlugins, pl)
		}
		if pl, ok := pl.(fwk.PostFilterPlugin); ok {
			f.postFilterPlugins = append(f.postFilterPlugins, pl)
		}
		if pl, ok := pl.(fwk.PreScorePlugin); ok {
			f.preScorePlugins = append(f.preScorePlugins, pl)
		}
		if pl, ok := pl.(fwk.ScorePlugin); ok {
			if weights[p] == 0 {
				return nil, fmt.Errorf("score plugin %q has no weight", p)
			}
			f.scorePlugins = append(f.scorePlugins, pl)
			f.scorePluginWeight[p] = weights[p]
		}
		if pl, ok := pl.(fwk.ReservePlugin); ok {
			f.reservePlugins = append(f.reservePlugins, pl)
		}
		if pl, ok := pl.(framework.PlacementFeasiblePlugin); ok {
			f.placementFeasiblePlugins = append(f.placementFeasiblePlugins, pl)
		}
		if pl, ok := pl.(fwk.PermitPlugin); ok {
			f.permitPlugins = append(f.permitPlugins, pl)
		}
		if pl, ok := pl.(fwk.PreBindPlugin); ok {
			f.preBindPlugins = append(f.preBindPlugins, pl)
		}
		if pl, ok := pl.(fwk.BindPlugin); ok {
			f.bindPlugins = append(f.bindPlugins, pl)
		}
		if pl, ok := pl.(fwk.PostBindPlugin); ok {
			f.postBindPlugins = append(f.postBindPlugins, pl)
		}
	}
	if n := len(built); n != len(Registry) {
		return nil, fmt.Errorf("upstream's default profile does not enable every plugin of this chapter: %d of %d found", n, len(Registry))
	}
	return f, nil
}

// SetPodNominator gives the plugins the queue's nominator, as upstream's
// framework method of that name does: the queue is built after the
// framework, since it needs the QueueSort and PreEnqueue plugins.
func (f *Framework) SetPodNominator(n fwk.PodNominator) { f.handle.podNominator = n }

// SetPodActivator gives the plugins the queue's Activate.
func (f *Framework) SetPodActivator(a fwk.PodActivator) { f.handle.podActivator = a }

// HasPostFilterPlugins says whether any PostFilter plugin is enabled.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilterPlugins) > 0 }

// HasScorePlugins says whether any plugin scores nodes: without one, the
// first feasible node is as good as any.
func (f *Framework) HasScorePlugins() bool { return len(f.scorePlugins) > 0 }

// Parallelizer runs a loop's pieces on up to parallelism goroutines. It is
// the bare handle's, so the plugins and the scheduler share one setting.
func (f *Framework) Parallelizer() fwk.Parallelizer { return f.handle.Parallelizer() }

// recorderLogger adds WithLogger to a recorder that lacks it.
type recorderLogger struct{ events.EventRecorder }

func (r recorderLogger) WithLogger(klog.Logger) events.EventRecorderLogger { return r }

// withLogger returns recorder as an EventRecorderLogger, which the Handle
// serves.
func withLogger(recorder events.EventRecorder) events.EventRecorderLogger {
	if r, ok := recorder.(events.EventRecorderLogger); ok {
		return r
	}
	return recorderLogger{recorder}
}

// PreEnqueuePlugins returns the plugins that may hold a pod back before it
// enters activeQ; the queue runs them.
func (f *Framework) PreEnqueuePlugins() []fwk.PreEnqueuePlugin {
	return f.preEnqueuePlugins
}

// QueueSortFunc returns the Less of the QueueSort plugin, which orders the
// scheduling queue's activeQ.
func (f *Framework) QueueSortFunc() fwk.LessFunc {
	return f.queueSortPlugins[0].Less
}

// EnqueueExtensions returns the plugins whose EventsToRegister decide which
// cluster events may make a pod they rejected schedulable.
func (f *Framework) EnqueueExtensions() []fwk.EnqueueExtensions {
	return f.enqueueExtensions
}

// fillEnqueueExtensions records the events a plugin registers. Only plugins
// that can reject a pod before it is bound count: PreEnqueue, PreFilter,
// Filter, Reserve and Permit. A Score plugin never makes a pod
// unschedulable, so no event needs to wait for it. A plugin that does not
// say which events it cares about (no EnqueueExtensions) gets every event:
// without it, a pod it rejected would wait for the leftover flush.
func (f *Framework) fillEnqueueExtensions(p fwk.Plugin) {
	switch p.(type) {
	case fwk.PreEnqueuePlugin, fwk.PreFilterPlugin, fwk.FilterPlugin, fwk.ReservePlugin, fwk.PermitPlugin:
	default:
		return
	}
	ext, ok := p.(fwk.EnqueueExtensions)
	if !ok {
		ext = &defaultEnqueueExtension{pluginName: p.Name()}
	}
	f.enqueueExtensions = append(f.enqueueExtensions, ext)
}

// defaultEnqueueExtension registers every event, with All actions, for a
// plugin that registers none itself, as upstream's of the same name does.
type defaultEnqueueExtension struct {
	pluginName string
}

func (p *defaultEnqueueExtension) Name() string { return p.pluginName }

// EventsToRegister lists every resource with All actions rather than the
// one wildcard event, as upstream does, so that each event still matches
// its own resource.
func (p *defaultEnqueueExtension) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	return framework.UnrollWildCardResource(), nil
}

// pluginOrder lists the default profile's plugins in their order, with the
// score weight of each (0 for plugins that do not score).
func pluginOrder(profile config.KubeSchedulerProfile) ([]string, map[string]int64) {
	var names []string
	weights := map[string]int64{}
	for _, p := range profile.Plugins.MultiPoint.Enabled {
		names = append(names, p.Name)
		weights[p.Name] = int64(p.Weight)
	}
	return names, weights
}

// features are the feature gates the in-tree plugins see: upstream's
// defaults for this release, as kube-scheduler passes them, except dynamic
// resource allocation. DRA needs a resource-claim manager that these
// chapters do not build, so its gates are off for the plugins.
func features() feature.Features {
	fts := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	fts.EnableDynamicResourceAllocation = false
	fts.EnableDRAExtendedResource = false
	return fts
}

// RunPreFilterPlugins runs every PreFilter plugin once for the pod. A
// plugin may answer Skip (its Filter is then skipped for this pod), narrow
// the candidate nodes (PreFilterResult), or reject the pod outright. It
// returns the merged result, the rejecting status, and the plugins that
// narrowed the nodes.
//
//workshop:part 02/1
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	var result *fwk.PreFilterResult
	skipPlugins := sets.New[string]()
	defer state.SetSkipFilterPlugins(skipPlugins)
	pluginsWithNodes := sets.New[string]()
	var returnStatus *fwk.Status
	for _, pl := range f.preFilterPlugins {
		ctx := klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), pl.Name()))
		r, s := pl.PreFilter(ctx, state, pod, nodes)
		if s.IsSkip() {
			skipPlugins.Insert(pl.Name())
			continue
		}
		if !s.IsSuccess() {
			s.SetPlugin(pl.Name())
			switch s.Code() {
			case fwk.UnschedulableAndUnresolvable:
				return nil, s, nil
			case fwk.Unschedulable:
				// The remaining PreFilters still run, for preemption's
				// sake, and the last Unschedulable status is the answer, as
				// upstream's frameworkImpl.RunPreFilterPlugins keeps it.
				returnStatus = s
				continue
			}
			return nil, fwk.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name()), nil
		}
		if !r.AllNodes() {
			pluginsWithNodes.Insert(pl.Name())
		}
		result = result.Merge(r)
		if !result.AllNodes() && len(result.NodeNames) == 0 {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(pluginsWithNodes))
			if len(pluginsWithNodes) == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", sets.List(pluginsWithNodes)[0])
			}
			return result, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, msg), pluginsWithNodes
		}
	}
	return result, returnStatus, pluginsWithNodes
}

// RunFilterPlugins runs the Filter plugins on one node and returns the first
// rejection: one reason per node is enough to explain it.
//
//workshop:part 02/2
func (f *Framework) RunFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	for _, pl := range f.filterPlugins {
		if state.GetSkipFilterPlugins().Has(pl.Name()) {
			continue
		}
		if status := pl.Filter(ctx, state, pod, nodeInfo); !status.IsSuccess() {
			if !status.IsRejected() {
				status = fwk.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), status.AsError()))
			}
			status.SetPlugin(pl.Name())
			return status
		}
	}
	return nil
}

// RunFilterPluginsWithNominatedPods runs the Filter plugins on a node as if
// the pods nominated to it with a priority equal to or higher than the
// pod's were running there already: those pods are owed the room their
// preemption is freeing, and the pod must yield to them. It may run the
// filters twice, as upstream's does: once with those pods added, and, if
// that passes and some were added, once more without them, because a
// filter such as inter-pod affinity may pass only with them. The pod must
// fit both ways, since a nominated pod may still land elsewhere.
// Lower-priority nominated pods are ignored: the pod may take their room.
//
//workshop:part 09/1
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	var status *fwk.Status
	podsAdded := false
	for i := 0; i < 2; i++ {
		stateToUse := state
		nodeInfoToUse := info
		if i == 0 {
			var err error
			podsAdded, stateToUse, nodeInfoToUse, err = f.addGENominatedPods(ctx, pod, state, info)
			if err != nil {
				return fwk.AsStatus(err)
			}
		} else if !podsAdded || !status.IsSuccess() {
			break
		}
		status = f.RunFilterPlugins(ctx, stateToUse, pod, nodeInfoToUse)
		if !status.IsSuccess() && !status.IsRejected() {
			return status
		}
	}
	return status
}

// addGENominatedPods returns a copy of the node and of the cycle state with
// the nominated pods of greater or equal priority added (through the
// PreFilter plugins' AddPod, so their precomputed state counts them too),
// and whether any was added. The originals are not changed.
//
//workshop:part 09/1
func (f *Framework) addGENominatedPods(ctx context.Context, pod *v1.Pod, state fwk.CycleState, nodeInfo fwk.NodeInfo) (bool, fwk.CycleState, fwk.NodeInfo, error) {
	nominatedPodInfos := f.handle.NominatedPodsForNode(nodeInfo.Node().Name)
	if len(nominatedPodInfos) == 0 {
		return false, state, nodeInfo, nil
	}
	nodeInfoOut := nodeInfo.Snapshot()
	stateOut := state.Clone()
	podsAdded := false
	for _, pi := range nominatedPodInfos {
		if corev1helpers.PodPriority(pi.GetPod()) >= corev1helpers.PodPriority(pod) && pi.GetPod().UID != pod.UID {
			nodeInfoOut.AddPodInfo(pi)
			if status := f.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, nodeInfoOut); !status.IsSuccess() {
				return false, state, nodeInfo, status.AsError()
			}
			podsAdded = true
		}
	}
	return podsAdded, stateOut, nodeInfoOut, nil
}

// RunPreFilterExtensionAddPod tells every PreFilter plugin that has
// PreFilterExtensions, and was not skipped for this pod, that podInfoToAdd
// now runs on the node, so it can update what it computed at PreFilter.
// Preemption's dry runs add and remove pods this way.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state fwk.CycleState, podToSchedule *v1.Pod, podInfoToAdd fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	for _, pl := range f.preFilterPlugins {
		if pl.PreFilterExtensions() == nil || state.GetSkipFilterPlugins().Has(pl.Name()) {
			continue
		}
		if status := pl.PreFilterExtensions().AddPod(ctx, state, podToSchedule, podInfoToAdd, nodeInfo); !status.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", pl.Name(), status.AsError()))
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod is RunPreFilterExtensionAddPod for a pod
// taken off the node.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state fwk.CycleState, podToSchedule *v1.Pod, podInfoToRemove fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	for _, pl := range f.preFilterPlugins {
		if pl.PreFilterExtensions() == nil || state.GetSkipFilterPlugins().Has(pl.Name()) {
			continue
		}
		if status := pl.PreFilterExtensions().RemovePod(ctx, state, podToSchedule, podInfoToRemove, nodeInfo); !status.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", pl.Name(), status.AsError()))
		}
	}
	return nil
}

// RunPostFilterPlugins runs the PostFilter plugins after a pod fitted on no
// node: they may make room for it (DefaultPreemption preempts pods). The
// first Success or UnschedulableAndUnresolvable ends it, and so does an
// error; after an Unschedulable the next plugin is tried. The result names
// the node nominated for the pod, if any.
//
//workshop:part 09/2
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, filteredNodeStatusMap fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	var result *fwk.PostFilterResult
	var reasons []string
	var rejectorPlugin string
	for _, pl := range f.postFilterPlugins {
		ctx := klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), pl.Name()))
		r, s := pl.PostFilter(ctx, state, pod, filteredNodeStatusMap)
		if s.IsSuccess() {
			return r, s
		} else if s.Code() == fwk.UnschedulableAndUnresolvable {
			return r, s.WithPlugin(pl.Name())
		} else if !s.IsRejected() {
			return nil, fwk.AsStatus(s.AsError()).WithPlugin(pl.Name())
		} else if r != nil && r.Mode() != fwk.ModeNoop {
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
		if rejectorPlugin == "" {
			rejectorPlugin = pl.Name()
		}
	}
	return result, fwk.NewStatus(fwk.Unschedulable, reasons...).WithPlugin(rejectorPlugin)
}

// RunPreScorePlugins runs every PreScore plugin once for the pod. A plugin
// that answers Skip is left out of scoring for this pod.
//
//workshop:part 03/3
func (f *Framework) RunPreScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	skipPlugins := sets.New[string]()
	defer state.SetSkipScorePlugins(skipPlugins)
	for _, pl := range f.preScorePlugins {
		ctx := klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), pl.Name()))
		status := pl.PreScore(ctx, state, pod, nodes)
		if status.IsSkip() {
			skipPlugins.Insert(pl.Name())
			continue
		}
		if !status.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), status.AsError()))
		}
	}
	return nil
}

// RunScorePlugins scores every node with every Score plugin not skipped for
// this pod, in three steps as upstream does, each spread over the
// Parallelizer's goroutines: raw scores, one node per piece; then each
// plugin's NormalizeScore over all nodes (to [0, 100]), one plugin per
// piece; then the weighted sum, one node per piece. Each piece writes only
// its own slots, so the steps need no lock; the first error cancels the
// rest of its step.
//
//workshop:part 03/3
//workshop:part 10/3
func (f *Framework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	var plugins []fwk.ScorePlugin
	for _, pl := range f.scorePlugins {
		if !state.GetSkipScorePlugins().Has(pl.Name()) {
			plugins = append(plugins, pl)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errCh := parallelize.NewResultChannel[error]()
	// 1. Raw scores, one list per plugin.
	perPlugin := make([]fwk.NodeScoreList, len(plugins))
	for i := range plugins {
		perPlugin[i] = make(fwk.NodeScoreList, len(nodes))
	}
	f.Parallelizer().Until(ctx, len(nodes), func(j int) {
		nodeInfo := nodes[j]
		for i, pl := range plugins {
			score, status := pl.Score(ctx, state, pod, nodeInfo)
			if !status.IsSuccess() {
				errCh.SendWithCancel(fmt.Errorf("plugin %q failed with: %w", pl.Name(), status.AsError()), cancel)
				return
			}
			perPlugin[i][j] = fwk.NodeScore{Name: nodeInfo.Node().Name, Score: score}
		}
	}, metrics.Score)
	if err := errCh.Receive(); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("running Score plugins: %w", err))
	}
	// Upstream logs no raw score: prioritizeNodes logs the weighted ones
	// only. make watch shows them, so the chapter logs each at -v=10, with
	// the plugin's weight, before NormalizeScore changes them.
	if loggerV := klog.FromContext(ctx).V(10); loggerV.Enabled() {
		for i, pl := range plugins {
			for _, s := range perPlugin[i] {
				loggerV.Info("Plugin's raw score of node for pod", "pod", klog.KObj(pod), "plugin", pl.Name(), "node", s.Name, "score", s.Score, "weight", f.scorePluginWeight[pl.Name()])
			}
		}
	}
	// 2. Normalize: a plugin sees all nodes' raw scores at once, so it can
	// scale them relative to each other.
	f.Parallelizer().Until(ctx, len(plugins), func(i int) {
		pl := plugins[i]
		if pl.ScoreExtensions() == nil {
			return
		}
		if status := pl.ScoreExtensions().NormalizeScore(ctx, state, pod, perPlugin[i]); !status.IsSuccess() {
			errCh.SendWithCancel(fmt.Errorf("plugin %q failed with: %w", pl.Name(), status.AsError()), cancel)
		}
	}, metrics.Score)
	if err := errCh.Receive(); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("running Normalize on Score plugins: %w", err))
	}
	// 3. Weight and sum.
	result := make([]fwk.NodePluginScores, len(nodes))
	f.Parallelizer().Until(ctx, len(nodes), func(j int) {
		result[j] = fwk.NodePluginScores{Name: nodes[j].Node().Name, Scores: make([]fwk.PluginScore, len(plugins))}
		for i, pl := range plugins {
			score := perPlugin[i][j].Score
			if score > fwk.MaxScore || score < fwk.MinScore {
				errCh.SendWithCancel(fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", pl.Name(), score, fwk.MinScore, fwk.MaxScore), cancel)
				return
			}
			weighted := score * f.scorePluginWeight[pl.Name()]
			result[j].Scores[i] = fwk.PluginScore{Name: pl.Name(), Score: weighted}
			result[j].TotalScore += weighted
		}
	}, metrics.Score)
	if err := errCh.Receive(); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("applying score defaultWeights on Score plugins: %w", err))
	}
	return result, nil
}

// RunPlacementFeasiblePlugins asks the PlacementFeasible plugins, during a
// pod-group cycle, whether the group can still be placed, given how many
// members are placed (progress.Scheduled) and how many are still to try
// (progress.Remaining). Unschedulable from any plugin ends the group's
// attempt; Wait from any means not yet; Success from all, yes. It mirrors
// upstream's loop of the same name.
//
//workshop:part 11/2
func (f *Framework) RunPlacementFeasiblePlugins(ctx context.Context, state fwk.PlacementCycleState, podGroupInfo fwk.PodGroupInfo, progress framework.PlacementProgress) *fwk.Status {
	var status *fwk.Status
	for _, pl := range f.placementFeasiblePlugins {
		s := pl.PlacementFeasible(ctx, state, podGroupInfo, progress)
		switch {
		case s.IsSuccess():
		case s.Code() == fwk.Wait:
			status = s.WithPlugin(pl.Name())
		case s.Code() == fwk.Unschedulable:
			return s.WithPlugin(pl.Name())
		case s.IsError():
			return fwk.AsStatus(fmt.Errorf("running PlacementFeasible plugin: %w", s.AsError())).WithPlugin(pl.Name())
		default:
			return fwk.AsStatus(fmt.Errorf("unexpected status from PlacementFeasible plugin: %v", s.Code())).WithPlugin(pl.Name())
		}
	}
	return status
}

// RunReservePluginsReserve tells the Reserve plugins that the pod is placed
// on nodeName. The first failure stops it; the caller then unreserves.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	for _, pl := range f.reservePlugins {
		if status := pl.Reserve(ctx, state, pod, nodeName); !status.IsSuccess() {
			if status.IsRejected() {
				return status.WithPlugin(pl.Name())
			}
			return fwk.AsStatus(fmt.Errorf("running Reserve plugin %q: %w", pl.Name(), status.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve undoes Reserve, in reverse order, whenever the
// pod fails after Reserve: every plugin is told, whether or not its Reserve
// ran, so Unreserve must be idempotent. It holds permitMu, because an
// Unreserve may reject waiting pods: that must not fall between a Permit
// counting them and allowing them. (No Unreserve here rejects any since
// GangScheduling replaced chapter 04's Gang, which rejected the rest of a
// gang.) It is never called while the Permit plugins run.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	f.waitingPods.permitMu.Lock()
	defer f.waitingPods.permitMu.Unlock()
	for _, pl := range slices.Backward(f.reservePlugins) {
		pl.Unreserve(ctx, state, pod, nodeName)
	}
}

// RunPermitPlugins asks every Permit plugin whether the pod may be bound.
// Any rejection wins. If some plugins ask to wait (and none rejects), the
// pod is registered as waiting, with one deadline per such plugin, and the
// result is Wait: the binding cycle then blocks in WaitOnPermit.
//
//workshop:part 04/2
func (f *Framework) RunPermitPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	// No deadline may reject a waiting pod while the plugins decide: see
	// waitingPods.permitMu.
	f.waitingPods.permitMu.Lock()
	defer f.waitingPods.permitMu.Unlock()
	waitTimes := map[string]time.Duration{}
	var waitStatus *fwk.Status
	for _, pl := range f.permitPlugins {
		status, timeout := pl.Permit(ctx, state, pod, nodeName)
		switch {
		case status.IsSuccess():
		case status.IsRejected():
			return status.WithPlugin(pl.Name())
		case status.IsWait():
			waitTimes[pl.Name()] = min(timeout, maxPermitTimeout)
			waitStatus = status
		default:
			return fwk.AsStatus(fmt.Errorf("running Permit plugin %q: %w", pl.Name(), status.AsError())).WithPlugin(pl.Name())
		}
	}
	if waitStatus != nil {
		f.waitingPods.add(newWaitingPod(pod, waitTimes, f.clock, &f.waitingPods.permitMu))
		return waitStatus
	}
	return nil
}

// WaitOnPermit blocks until every waiting plugin allowed the pod, one
// rejected it, a deadline passed, or ctx ended. A pod that was not asked to
// wait returns at once.
//
//workshop:part 04/4
func (f *Framework) WaitOnPermit(ctx context.Context, pod *v1.Pod) *fwk.Status {
	wp := f.waitingPods.get(pod.UID)
	if wp == nil {
		return nil
	}
	defer f.waitingPods.remove(pod.UID)
	klog.FromContext(ctx).V(4).Info("Pod waiting on permit", "pendingPlugins", wp.GetPendingPlugins())
	select {
	case s := <-wp.verdict:
		if s.IsSuccess() || s.IsRejected() {
			return s
		}
		return fwk.AsStatus(fmt.Errorf("waiting on permit: %w", s.AsError())).WithPlugin(s.Plugin())
	case <-ctx.Done():
		// Under permitMu, as a deadline's rejection (permitAwarePodGroupManager).
		f.waitingPods.permitMu.Lock()
		wp.Reject("", "the scheduler is stopping")
		f.waitingPods.permitMu.Unlock()
		return fwk.AsStatus(fmt.Errorf("waiting on permit: %w", context.Cause(ctx)))
	}
}

// RunPreBindPlugins runs the PreBind plugins, which prepare what the pod
// needs on its node before the Binding (upstream's VolumeBinding binds
// volumes here). The first failure stops it.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	for _, pl := range f.preBindPlugins {
		status := pl.PreBind(ctx, state, pod, nodeName)
		if status.IsSkip() {
			continue
		}
		if !status.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running PreBind plugin %q: %w", pl.Name(), status.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunBindPlugins asks the Bind plugins in turn; the first that does not
// answer Skip binds the pod (here DefaultBinder, which posts the Binding).
func (f *Framework) RunBindPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	for _, pl := range f.bindPlugins {
		status := pl.Bind(ctx, state, pod, nodeName)
		if status.IsSkip() {
			continue
		}
		if !status.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running Bind plugin %q: %w", pl.Name(), status.AsError())).WithPlugin(pl.Name())
		}
		return nil
	}
	return fwk.NewStatus(fwk.Error, "no bind plugin bound the pod")
}

// RunPostBindPlugins informs the PostBind plugins that the pod is bound.
// They cannot fail: the Binding is done.
func (f *Framework) RunPostBindPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	for _, pl := range f.postBindPlugins {
		pl.PostBind(ctx, state, pod, nodeName)
	}
}

// RejectWaitingPod rejects a pod if it waits at Permit, as when it is
// deleted meanwhile, with upstream's message; it reports whether this call
// decided the pod's fate. It holds permitMu, as a deadline does.
func (f *Framework) RejectWaitingPod(uid types.UID) bool {
	f.waitingPods.permitMu.Lock()
	defer f.waitingPods.permitMu.Unlock()
	if wp := f.waitingPods.get(uid); wp != nil {
		return wp.Reject("", "removed")
	}
	return false
}
