package scheduler

// This file mirrors pkg/scheduler/framework/runtime/framework.go of
// k8s.io/kubernetes: it builds the enabled plugins and runs them at each
// extension point (RunPreFilterPlugins, RunFilterPlugins,
// RunPreScorePlugins, RunScorePlugins). The plugins are upstream's own, but
// for one written in this chapter; the loops that run them are this
// chapter's.

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/03-score/scheduler/framework/plugins/nodecost"
)

// PluginFactory builds an in-tree plugin, as the factories of upstream's
// in-tree registry (pkg/scheduler/framework/plugins/registry.go) do.
type PluginFactory func(ctx context.Context, args runtime.Object, h fwk.Handle, fts feature.Features) (fwk.Plugin, error)

// Registry names the plugins this chapter enables: upstream's in-tree
// plugins, and NodeCost, written in this chapter. The framework below runs
// them.
var Registry = map[string]PluginFactory{
	nodeunschedulable.Name:               nodeunschedulable.New,
	nodename.Name:                        nodename.New,
	tainttoleration.Name:                 tainttoleration.New,
	nodeaffinity.Name:                    nodeaffinity.New,
	noderesources.Name:                   noderesources.NewFit,
	noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
	nodecost.Name:                        nodecost.New,
}

// NodeCostWeight is NodeCost's weight. It is not in upstream's default
// profile, which sets the others'; 5 lets a pod that opts in prefer a
// cheaper node over a less loaded one.
const NodeCostWeight = 5

// Framework holds the enabled plugins of each extension point, in the order
// upstream's default profile lists them, and runs them.
type Framework struct {
	preFilterPlugins  []fwk.PreFilterPlugin
	filterPlugins     []fwk.FilterPlugin
	preScorePlugins   []fwk.PreScorePlugin
	scorePlugins      []fwk.ScorePlugin
	scorePluginWeight map[string]int64
}

// NewFramework builds the plugins of Registry. Their arguments are the
// defaults of upstream's own configuration API (latest.Default), never set
// by hand, and so are their order and their score weights (TaintToleration
// 3, NodeAffinity 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1),
// so that a pod's diagnosis and scores are the ones upstream's would be.
//
// The plugins need a framework Handle (for the client, among others).
// frameworkruntime.NewFramework with no registry and no profile returns a
// bare one; its background goroutines end with ctx.
func NewFramework(ctx context.Context, client clientset.Interface) (*Framework, error) {
	handle, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithClientSet(client))
	if err != nil {
		return nil, err
	}
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0]
	args := map[string]runtime.Object{}
	for _, pc := range profile.PluginConfig {
		args[pc.Name] = pc.Args
	}
	fts := features()
	f := &Framework{scorePluginWeight: map[string]int64{}}
	order, weights := pluginOrder(profile)
	// This chapter's own plugin comes after upstream's.
	order = append(order, nodecost.Name)
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
	}
	if n := len(f.filterPlugins) + len(f.scorePlugins) - 3; n != len(Registry) {
		// TaintToleration, NodeAffinity and NodeResourcesFit both filter
		// and score.
		return nil, fmt.Errorf("upstream's default profile does not enable every plugin of this chapter: %d of %d found", n, len(Registry))
	}
	return f, nil
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
