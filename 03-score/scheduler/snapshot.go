package scheduler

// This file does what pkg/scheduler/backend/cache/snapshot.go of
// k8s.io/kubernetes does (NewSnapshot): one NodeInfo per node, holding the
// pods bound to it, for the plugins to judge the node by. Upstream keeps it
// up to date from a cache; this chapter lists the cluster for every pod.

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// snapshot lists the nodes and the pods bound to them, and returns a
// NodeInfo per node, in the apiserver's order. Pods that have terminated no
// longer use their node's resources and are left out.
func (sched *Scheduler) snapshot(ctx context.Context) ([]fwk.NodeInfo, error) {
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
	for i := range pods.Items {
		p := &pods.Items[i]
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	infos := make([]fwk.NodeInfo, 0, len(nodes.Items))
	for i := range nodes.Items {
		info := framework.NewNodeInfo(byNode[nodes.Items[i].Name]...)
		info.SetNode(&nodes.Items[i])
		infos = append(infos, info)
	}
	return infos, nil
}
