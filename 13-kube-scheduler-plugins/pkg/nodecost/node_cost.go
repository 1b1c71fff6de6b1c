// Package nodecost is chapter 03's Score plugin, unchanged in what it does,
// now run by kube-scheduler itself: config/nodecost.yaml adds it to
// upstream's default profile. Two things changed, both because it leaves
// the chapters' own framework for upstream's:
//   - New has the signature app.WithPlugin takes
//     (frameworkruntime.PluginFactory), without feature gates;
//   - it signs pods (SignPod), so that kube-scheduler's OpportunisticBatching
//     stays on for the profile: a Score plugin that cannot sign turns it off
//     for every pod (computeBatchablePlugins in framework/runtime/framework.go).
//     Upstream's default profile signs no pod anyway in v1.37.1:
//     PodTopologySpread refuses while it has default constraints
//     (PodTopologySpread.SignPod); a profile without them batches.
//
// NodeCost steers the pods that ask for it towards cheaper nodes. A node
// says what it costs with the label minisched.io/cost (a whole number, in
// any unit); a pod opts in with the annotation
// minisched.io/prefer-cheap-nodes: "true". Pods that do not opt in are not
// scored by it at all, so they are placed exactly as upstream places them.
package nodecost

import (
	"context"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

const (
	// Name is the plugin's name in logs, diagnoses and weights.
	Name = "NodeCost"
	// CostLabel is the node label that holds the node's cost.
	CostLabel = "minisched.io/cost"
	// PreferCheapAnnotation is the pod annotation that opts in.
	PreferCheapAnnotation = "minisched.io/prefer-cheap-nodes"
)

// NodeCost scores cheaper nodes higher for the pods that opt in.
type NodeCost struct{}

var (
	_ fwk.PreScorePlugin  = &NodeCost{}
	_ fwk.ScorePlugin     = &NodeCost{}
	_ fwk.ScoreExtensions = &NodeCost{}
	_ fwk.SignPlugin      = &NodeCost{}
)

// New builds the plugin. It needs no arguments and no handle.
func New(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return &NodeCost{}, nil
}

// Name returns the plugin's name.
func (pl *NodeCost) Name() string { return Name }

// preferCheapSignerName is the key of NodeCost's part of a pod's
// signature, named after the field it reads, as signers.go of
// k8s.io/kube-scheduler/framework asks.
const preferCheapSignerName = "v1.Pod.Annotations[" + PreferCheapAnnotation + "]"

// SignPod returns what NodeCost's score depends on in the pod: whether it
// opted in. Two pods that agree on it, and on every other plugin's
// fragments, get the same scores on the same nodes, so kube-scheduler may
// reuse the first one's scored node list for the second
// (OpportunisticBatching, KEP-5598).
func (pl *NodeCost) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{{Key: preferCheapSignerName, Value: pod.Annotations[PreferCheapAnnotation] == "true"}}, nil
}

// PreScore runs once per pod before any Score. Returning Skip tells the
// framework not to call Score or NormalizeScore for this pod: that is how
// the plugin stays out of the way of pods that did not opt in.
func (pl *NodeCost) PreScore(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if pod.Annotations[PreferCheapAnnotation] != "true" {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// unknownCost is the raw score of a node without a valid cost label.
const unknownCost = -1

// Score returns the node's cost as a raw score. Raw scores may be on any
// scale; NormalizeScore maps them to [0, 100] once every node has one.
func (pl *NodeCost) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	cost, err := strconv.ParseInt(nodeInfo.Node().Labels[CostLabel], 10, 64)
	if err != nil || cost < 0 {
		return unknownCost, nil
	}
	return cost, nil
}

// ScoreExtensions returns the plugin itself, which implements NormalizeScore.
func (pl *NodeCost) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore turns costs into scores: the cheapest node gets
// MaxScore, the dearest 0, the others in between; a node whose cost is
// unknown gets 0. Normalizing needs every node's raw score, which is why it
// is a separate step.
func (pl *NodeCost) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	lowest, highest := int64(-1), int64(-1)
	for _, s := range scores {
		if s.Score == unknownCost {
			continue
		}
		if lowest == -1 || s.Score < lowest {
			lowest = s.Score
		}
		if s.Score > highest {
			highest = s.Score
		}
	}
	for i := range scores {
		switch {
		case scores[i].Score == unknownCost:
			scores[i].Score = fwk.MinScore
		case highest == lowest:
			scores[i].Score = fwk.MaxScore
		default:
			// In float64: MaxScore times a difference of costs overflows
			// int64 once two costs differ by more than MaxInt64/100.
			scores[i].Score = int64(float64(fwk.MaxScore) * float64(highest-scores[i].Score) / float64(highest-lowest))
		}
	}
	return nil
}
