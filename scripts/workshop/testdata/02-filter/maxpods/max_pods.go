// Package maxpods is the Filter plugin of chapter 02's first exercise: it
// rejects a node that already holds Limit pods or more.
package maxpods

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
)

const (
	// Name is the plugin's name in logs and diagnoses.
	Name = "MaxPods"
	// Limit is the number of pods from which a node is full.
	Limit = 3
	// ErrReason is the rejection's reason, counted in the FitError message.
	ErrReason = "node(s) have too many pods"
)

// MaxPods rejects nodes that hold Limit pods or more.
type MaxPods struct{}

var _ fwk.FilterPlugin = &MaxPods{}

// New builds the plugin, with the signature of upstream's in-tree factories.
func New(_ context.Context, _ runtime.Object, _ fwk.Handle, _ feature.Features) (fwk.Plugin, error) {
	return &MaxPods{}, nil
}

// Name returns the plugin's name.
func (pl *MaxPods) Name() string { return Name }

// Filter rejects the node if it already holds Limit pods or more. Another
// node may have room, or this one may once a pod leaves, so the rejection
// is Unschedulable, not UnschedulableAndUnresolvable.
func (pl *MaxPods) Filter(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	if len(nodeInfo.GetPods()) >= Limit {
		return fwk.NewStatus(fwk.Unschedulable, ErrReason)
	}
	return nil
}
