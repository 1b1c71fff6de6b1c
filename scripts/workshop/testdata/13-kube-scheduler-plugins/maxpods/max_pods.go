// Package maxpods is the Filter plugin of chapter 13's exercise: chapter
// 02's MaxPods, now an out-of-tree plugin of kube-scheduler, with its limit
// an argument of the configuration instead of a constant.
package maxpods

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

const (
	// Name is the plugin's name in the registry, the configuration and
	// the diagnoses.
	Name = "MaxPods"
	// ErrReason is the rejection's reason, counted in the FitError message.
	ErrReason = "node(s) have too many pods"
)

// MaxPodsArgs are the plugin's arguments, under its name in the
// configuration's pluginConfig. kube-scheduler's scheme does not know
// them, so they reach New raw.
type MaxPodsArgs struct {
	// MaxPods is the number of pods from which a node is full.
	MaxPods int `json:"maxPods"`
}

// MaxPods rejects the nodes that hold maxPods pods or more.
type MaxPods struct {
	maxPods int
}

var (
	_ fwk.FilterPlugin      = &MaxPods{}
	_ fwk.EnqueueExtensions = &MaxPods{}
	_ fwk.SignPlugin        = &MaxPods{}
)

// New decodes the arguments and refuses a limit that would make every node
// full, so that a wrong configuration stops kube-scheduler at start with one
// line, not later with every pod pending.
func New(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	args := MaxPodsArgs{}
	if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
		return nil, fmt.Errorf("%s: decoding args: %w", Name, err)
	}
	if args.MaxPods <= 0 {
		return nil, fmt.Errorf("%s: maxPods must be positive, got %d", Name, args.MaxPods)
	}
	return &MaxPods{maxPods: args.MaxPods}, nil
}

// Name returns the plugin's name.
func (pl *MaxPods) Name() string { return Name }

// Filter rejects the node if it already holds maxPods pods or more. Another
// node may have room, or this one once a pod leaves, so the rejection is
// Unschedulable, not UnschedulableAndUnresolvable: preemption may free it.
func (pl *MaxPods) Filter(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	if len(nodeInfo.GetPods()) >= pl.maxPods {
		return fwk.NewStatus(fwk.Unschedulable, ErrReason)
	}
	return nil
}

// EventsToRegister names what can make a rejected pod fit: a pod leaving a
// node, or a new node. A Filter plugin without it is registered for every
// event of the cluster (defaultEnqueueExtension in
// framework/runtime/framework.go), and the pods it rejected would be
// retried on each.
func (pl *MaxPods) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}},
	}, nil
}

// SignPod says that the verdict depends on nothing in the pod: every Filter
// plugin must sign, or the profile turns OpportunisticBatching off for
// every pod (computeBatchablePlugins in framework/runtime/framework.go).
func (pl *MaxPods) SignPod(_ context.Context, _ *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, nil
}
