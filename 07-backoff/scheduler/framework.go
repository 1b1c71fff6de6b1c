package scheduler

// This file mirrors pkg/scheduler/framework/runtime/framework.go of
// k8s.io/kubernetes: it builds the enabled plugins and runs them at each
// extension point (RunPreFilterPlugins, RunFilterPlugins,
// RunPreScorePlugins, RunScorePlugins, RunReservePlugins*,
// RunPermitPlugins, WaitOnPermit, RunPreBindPlugins, RunBindPlugins,
// RunPostBindPlugins), and collects the plugins' EventsToRegister
// (fillEnqueueExtensions). The plugins are upstream's own, but for two
// written in these chapters; the loops that run them are this chapter's.

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
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/schedulinggates"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"

	"minisched/07-backoff/scheduler/framework/plugins/gang"
	"minisched/07-backoff/scheduler/framework/plugins/nodecost"
)

// PluginFactory builds an in-tree plugin, as the factories of upstream's
// in-tree registry (pkg/scheduler/framework/plugins/registry.go) do.
type PluginFactory func(ctx context.Context, args runtime.Object, h fwk.Handle, fts feature.Features) (fwk.Plugin, error)

// Registry names the plugins this chapter enables: upstream's in-tree
// plugins, NodeCost (chapter 03) and Gang (chapter 04). The framework
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
	nodecost.Name: nodecost.New,
	gang.Name:     gang.New,
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
	preScorePlugins   []fwk.PreScorePlugin
	scorePlugins      []fwk.ScorePlugin
	scorePluginWeight map[string]int64
	reservePlugins    []fwk.ReservePlugin
	permitPlugins     []fwk.PermitPlugin
	preBindPlugins    []fwk.PreBindPlugin
	bindPlugins       []fwk.BindPlugin
	postBindPlugins   []fwk.PostBindPlugin
	// enqueueExtensions are the plugins whose rejection a cluster event can
	// undo, each with the events it registered.
	enqueueExtensions []fwk.EnqueueExtensions

	waitingPods *waitingPods
	clock       clock.WithDelayedExecution
}

// handle is the framework Handle the plugins get: upstream's bare one, with
// the waiting pods served from this chapter's own map. (The bare handle
// has none: its GetWaitingPod would panic.)
type handle struct {
	fwk.Handle
	waitingPods *waitingPods
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
// bare one; its background goroutines end with ctx. The clock times Permit
// waits, and gangTimeout is how long a gang member waits for the others.
func NewFramework(ctx context.Context, client clientset.Interface, clk clock.WithDelayedExecution, gangTimeout time.Duration) (*Framework, error) {
	bare, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithClientSet(client))
	if err != nil {
		return nil, err
	}
	waiting := newWaitingPods()
	handle := &handle{Handle: bare, waitingPods: waiting}
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0]
	args := map[string]runtime.Object{}
	for _, pc := range profile.PluginConfig {
		args[pc.Name] = pc.Args
	}
	args[gang.Name] = &gang.Args{Timeout: gangTimeout}
	fts := features()
	f := &Framework{scorePluginWeight: map[string]int64{}, waitingPods: waiting, clock: clk}
	order, weights := pluginOrder(profile)
	// The chapters' own plugins come after upstream's.
	order = append(order, nodecost.Name, gang.Name)
	weights[nodecost.Name] = NodeCostWeight
	for _, p := range order {
		factory, ok := Registry[p]
		if !ok {
			continue
		}
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
	// TaintToleration, NodeAffinity and NodeResourcesFit both filter and
	// score.
	if n := len(f.preEnqueuePlugins) + len(f.queueSortPlugins) + len(f.filterPlugins) + len(f.scorePlugins) - 3 + len(f.bindPlugins) + len(f.permitPlugins); n != len(Registry) {
		return nil, fmt.Errorf("upstream's default profile does not enable every plugin of this chapter: %d of %d found", n, len(Registry))
	}
	return f, nil
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
// this pod, in three steps as upstream does: raw scores per node, then each
// plugin's NormalizeScore over all nodes (to [0, 100]), then the weighted
// sum per node.
//
//workshop:part 03/3
func (f *Framework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	var plugins []fwk.ScorePlugin
	for _, pl := range f.scorePlugins {
		if !state.GetSkipScorePlugins().Has(pl.Name()) {
			plugins = append(plugins, pl)
		}
	}
	// 1. Raw scores, one list per plugin.
	perPlugin := make([]fwk.NodeScoreList, len(plugins))
	for i, pl := range plugins {
		perPlugin[i] = make(fwk.NodeScoreList, len(nodes))
		for j, nodeInfo := range nodes {
			score, status := pl.Score(ctx, state, pod, nodeInfo)
			if !status.IsSuccess() {
				return nil, fwk.AsStatus(fmt.Errorf("plugin %q failed with: %w", pl.Name(), status.AsError()))
			}
			perPlugin[i][j] = fwk.NodeScore{Name: nodeInfo.Node().Name, Score: score}
		}
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
	for i, pl := range plugins {
		if pl.ScoreExtensions() == nil {
			continue
		}
		if status := pl.ScoreExtensions().NormalizeScore(ctx, state, pod, perPlugin[i]); !status.IsSuccess() {
			return nil, fwk.AsStatus(fmt.Errorf("running Normalize on Score plugin %q: %w", pl.Name(), status.AsError()))
		}
	}
	// 3. Weight and sum.
	result := make([]fwk.NodePluginScores, len(nodes))
	for j, nodeInfo := range nodes {
		result[j] = fwk.NodePluginScores{Name: nodeInfo.Node().Name, Scores: make([]fwk.PluginScore, len(plugins))}
		for i, pl := range plugins {
			score := perPlugin[i][j].Score
			if score > fwk.MaxScore || score < fwk.MinScore {
				return nil, fwk.AsStatus(fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", pl.Name(), score, fwk.MinScore, fwk.MaxScore))
			}
			weighted := score * f.scorePluginWeight[pl.Name()]
			result[j].Scores[i] = fwk.PluginScore{Name: pl.Name(), Score: weighted}
			result[j].TotalScore += weighted
		}
	}
	return result, nil
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
// Unreserve may reject waiting pods (the Gang plugin rejects the rest of a
// gang): that must not fall between a Permit counting them and allowing
// them either. It is never called while the Permit plugins run.
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
		// Under permitMu, as a deadline's rejection.
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
