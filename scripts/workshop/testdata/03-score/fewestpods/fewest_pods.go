// Package fewestpods is the Score plugin of chapter 03's third exercise,
// built like NodeCost: pods annotated minisched.io/prefer-fewer-pods: "true"
// prefer the nodes that run the fewest pods; other pods are not scored by it.
package fewestpods

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
)

const (
	// Name is the plugin's name in logs and weights.
	Name = "FewestPods"
	// PreferFewerPodsAnnotation is the pod annotation that opts in.
	PreferFewerPodsAnnotation = "minisched.io/prefer-fewer-pods"
	// Weight is the plugin's score weight.
	Weight = 1
)

// FewestPods scores nodes with fewer pods higher for the pods that opt in.
type FewestPods struct{}

var (
	_ fwk.PreScorePlugin  = &FewestPods{}
	_ fwk.ScorePlugin     = &FewestPods{}
	_ fwk.ScoreExtensions = &FewestPods{}
)

// New builds the plugin, with the signature of upstream's in-tree factories.
func New(_ context.Context, _ runtime.Object, _ fwk.Handle, _ feature.Features) (fwk.Plugin, error) {
	return &FewestPods{}, nil
}

// Name returns the plugin's name.
func (pl *FewestPods) Name() string { return Name }

// PreScore skips the plugin for pods that did not opt in.
func (pl *FewestPods) PreScore(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if pod.Annotations[PreferFewerPodsAnnotation] != "true" {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score returns the number of pods on the node as the raw score.
func (pl *FewestPods) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	return int64(len(nodeInfo.GetPods())), nil
}

// ScoreExtensions returns the plugin itself, which implements NormalizeScore.
func (pl *FewestPods) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore maps pod counts to scores: the emptiest node gets MaxScore,
// the fullest 0, the others in between; all get MaxScore if the counts are
// equal.
func (pl *FewestPods) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	if len(scores) == 0 {
		return nil
	}
	lowest, highest := scores[0].Score, scores[0].Score
	for _, s := range scores[1:] {
		lowest, highest = min(lowest, s.Score), max(highest, s.Score)
	}
	for i := range scores {
		if highest == lowest {
			scores[i].Score = fwk.MaxScore
			continue
		}
		scores[i].Score = fwk.MaxScore * (highest - scores[i].Score) / (highest - lowest)
	}
	return nil
}
