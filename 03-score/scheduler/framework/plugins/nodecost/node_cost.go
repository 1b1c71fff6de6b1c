// Package nodecost is a Score plugin written in this chapter, to show how a
// plugin is made: a type with a Name, and one method per extension point it
// implements, here PreScore, Score and NormalizeScore. Upstream's in-tree
// plugins live in pkg/scheduler/framework/plugins/<name>/ and are built the
// same way; tainttoleration/taint_toleration.go is a good one to read next.
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
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
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
)

// New builds the plugin, with the signature of upstream's in-tree factories
// (it needs no arguments and no handle).
func New(_ context.Context, _ runtime.Object, _ fwk.Handle, _ feature.Features) (fwk.Plugin, error) {
	return &NodeCost{}, nil
}

// Name returns the plugin's name.
func (pl *NodeCost) Name() string { return Name }

// PreScore runs once per pod before any Score. Returning Skip tells the
// framework not to call Score or NormalizeScore for this pod: that is how
// the plugin stays out of the way of pods that did not opt in.
//
//workshop:part 03/1
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
//
//workshop:part 03/1
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
//
//workshop:part 03/1
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
