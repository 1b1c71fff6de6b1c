package scheduler

// This file does what pkg/scheduler/backend/cache/snapshot.go of
// k8s.io/kubernetes does (NewSnapshot): one NodeInfo per node, holding the
// pods bound or assumed on it, for the plugins to judge the node by.
// Upstream keeps it up to date from a cache; this chapter lists the cluster
// for every pod and adds the assumed pods.

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// snapshot lists the nodes and the pods bound to them, adds the assumed
// pods, and returns a NodeInfo per node, in the apiserver's order. Pods that
// have terminated no longer use their node's resources and are left out.
func (sched *Scheduler) snapshot(ctx context.Context) ([]fwk.NodeInfo, error) {
	// The assumed pods are read before the List: a Binding that finishes in
	// between then shows in the List, in the assumed pods, or in both
	// (counted once), never in neither.
	assumed := sched.cache.AssumedPods()
	nodes, err := sched.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := sched.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.AndSelectors(
			fields.OneTermNotEqualSelector("spec.nodeName", ""),
			fields.OneTermNotEqualSelector("status.phase", string(v1.PodSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(v1.PodFailed)),
		).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing bound pods: %w", err)
	}
	byNode := map[string][]*v1.Pod{}
	listed := sets.New[types.UID]()
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" {
			continue // only a bound pod stands in for its assumed copy
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		listed.Insert(p.UID)
	}
	for _, p := range assumed {
		if !listed.Has(p.UID) {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	infos := make([]fwk.NodeInfo, 0, len(nodes.Items))
	for i := range nodes.Items {
		info := framework.NewNodeInfo(byNode[nodes.Items[i].Name]...)
		info.SetNode(&nodes.Items[i])
		infos = append(infos, info)
	}
	return infos, nil
}
