package scheduler

// This file mirrors pkg/scheduler/framework/runtime/framework.go of
// k8s.io/kubernetes: it builds the enabled plugins and runs them at each
// extension point (RunPreFilterPlugins, RunFilterPlugins). The plugins are
// upstream's own; the loops that run them are this chapter's.

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
)

// PluginFactory builds an in-tree plugin, as the factories of upstream's
// in-tree registry (pkg/scheduler/framework/plugins/registry.go) do.
type PluginFactory func(ctx context.Context, args runtime.Object, h fwk.Handle, fts feature.Features) (fwk.Plugin, error)

// Registry names the plugins this chapter enables. Each is upstream's
// in-tree plugin; the framework below runs it.
var Registry = map[string]PluginFactory{
	nodeunschedulable.Name: nodeunschedulable.New,
	nodename.Name:          nodename.New,
	tainttoleration.Name:   tainttoleration.New,
	nodeaffinity.Name:      nodeaffinity.New,
	noderesources.Name:     noderesources.NewFit,
}

// Framework holds the enabled plugins of each extension point, in the order
// upstream's default profile lists them, and runs them.
type Framework struct {
	preFilterPlugins []fwk.PreFilterPlugin
	filterPlugins    []fwk.FilterPlugin
}

// NewFramework builds the plugins of Registry. Their arguments are the
// defaults of upstream's own configuration API (latest.Default), never set
// by hand, and their order is the default profile's, so that a pod's
// diagnosis names the same plugin upstream's would.
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
	f := &Framework{}
	for _, p := range pluginOrder(profile) {
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
	}
	if len(f.filterPlugins) != len(Registry) {
		return nil, fmt.Errorf("upstream's default profile does not enable every plugin of this chapter: %d of %d found", len(f.filterPlugins), len(Registry))
	}
	return f, nil
}

// pluginOrder lists the default profile's plugins in their order.
func pluginOrder(profile config.KubeSchedulerProfile) []string {
	var names []string
	for _, p := range profile.Plugins.MultiPoint.Enabled {
		names = append(names, p.Name)
	}
	return names
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
