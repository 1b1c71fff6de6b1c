package scheduler

// This file mirrors pkg/scheduler/framework/runtime/instrumented_plugins.go
// of k8s.io/kubernetes: wrappers that count each call of a PreFilter,
// Filter, PreScore or Score plugin in plugin_evaluation_total, the metric
// that says how often each plugin ran, whatever it answered. The wrappers
// embed the plugin, so its other methods (PreFilterExtensions,
// ScoreExtensions, Name) are the plugin's own.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	compbasemetrics "k8s.io/component-base/metrics"
	fwk "k8s.io/kube-scheduler/framework"
)

type instrumentedFilterPlugin struct {
	fwk.FilterPlugin
	metric compbasemetrics.CounterMetric
}

func (p *instrumentedFilterPlugin) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	p.metric.Inc()
	return p.FilterPlugin.Filter(ctx, state, pod, nodeInfo)
}

// instrumentedPreFilterPlugin counts a PreFilter only when it did not
// answer Skip, as upstream's: a skipped plugin did not evaluate the pod.
type instrumentedPreFilterPlugin struct {
	fwk.PreFilterPlugin
	metric compbasemetrics.CounterMetric
}

func (p *instrumentedPreFilterPlugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	result, status := p.PreFilterPlugin.PreFilter(ctx, state, pod, nodes)
	if !status.IsSkip() {
		p.metric.Inc()
	}
	return result, status
}

// instrumentedPreScorePlugin counts a PreScore only when it did not answer
// Skip, as PreFilter's wrapper.
type instrumentedPreScorePlugin struct {
	fwk.PreScorePlugin
	metric compbasemetrics.CounterMetric
}

func (p *instrumentedPreScorePlugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	status := p.PreScorePlugin.PreScore(ctx, state, pod, nodes)
	if !status.IsSkip() {
		p.metric.Inc()
	}
	return status
}

type instrumentedScorePlugin struct {
	fwk.ScorePlugin
	metric compbasemetrics.CounterMetric
}

func (p *instrumentedScorePlugin) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	p.metric.Inc()
	return p.ScorePlugin.Score(ctx, state, pod, nodeInfo)
}
