package bench

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RequeueConfig sizes the requeue workload: Pods pods that want a label no
// node has, then Rounds rounds of cluster changes that do not help them (a
// label of no interest changed on every node, and a node added without the
// label), Pause apart; then a node big enough for all of them is added,
// and once more Pause later gets the label they want.
type RequeueConfig struct {
	Nodes, Pods, Rounds int
	Pause               time.Duration
	// Cap bounds the wait for every pod to be bound once the label is set.
	Cap time.Duration
}

// RequeueResult is one requeue run of one scheduler.
type RequeueResult struct {
	Name     string `json:"name"`
	Pods     int    `json:"pods"`
	Bound    int    `json:"bound"`
	Attempts int    `json:"attempts"`
	// Wasted is Attempts beyond the two every pod needs: the one that
	// finds no node, and the one that binds it once the label is there.
	Wasted int  `json:"wasted"`
	DNF    bool `json:"dnf"`
}

// AttemptsPerPod is the average number of scheduling attempts per pod.
func (r RequeueResult) AttemptsPerPod() float64 {
	if r.Pods == 0 {
		return 0
	}
	return float64(r.Attempts) / float64(r.Pods)
}

const (
	readyLabel = "minisched.io/bench-ready"
	noiseLabel = "minisched.io/bench-noise"
)

// RunRequeue runs the requeue workload against one scheduler and reads its
// attempts from its metrics.
func (e *Env) RunRequeue(ctx context.Context, t Target, cfg RequeueConfig, run int) (RequeueResult, error) {
	client := e.Client
	res := RequeueResult{Name: t.Name, Pods: cfg.Pods}
	ns, nodes, err := e.setUp(ctx, "requeue", t, run, cfg.Nodes)
	defer cleanup(client, ns)
	if err != nil {
		return res, err
	}
	proc, err := e.start(t, ns)
	if err != nil {
		return res, err
	}
	defer func() { _ = proc.Stop(false) }()
	if err := createPods(ctx, client, ns, "waiting", cfg.Pods, nil, map[string]string{readyLabel: "true"}); err != nil {
		return res, err
	}
	// Every pod is tried once and found unschedulable before the noise.
	if err := waitFor(ctx, cfg.Cap, func() bool { return e.countPods(ctx, ns, unschedulable) == cfg.Pods }); err != nil {
		return res, fmt.Errorf("%s: the pods were not all marked unschedulable: %w", t.Name, err)
	}
	patch := func(name, key, value string) error {
		body := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
		_, err := client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	for r := range cfg.Rounds {
		if err := forEach(ctx, len(nodes), func(i int) error { return patch(nodes[i], noiseLabel, fmt.Sprint(r)) }); err != nil {
			return res, fmt.Errorf("relabelling: %w", err)
		}
		added, err := e.createNodes(ctx, ns, len(nodes), 1, nil)
		if err != nil {
			return res, err
		}
		nodes = append(nodes, added...)
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(cfg.Pause):
		}
	}
	// The node that helps: added without the label (one more change that
	// does not help), then labelled. It holds every pod, so one event makes
	// them all schedulable at once: labelling many nodes one by one would
	// let pods be tried, and fail, while only some had the label.
	big := fmt.Sprintf("%s-big", ns)
	if _, err := client.CoreV1().Nodes().Create(ctx, bigNode(big, cfg.Pods), metav1.CreateOptions{}); err != nil {
		return res, err
	}
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(cfg.Pause):
	}
	if err := patch(big, readyLabel, "true"); err != nil {
		return res, fmt.Errorf("labelling: %w", err)
	}
	if err := waitFor(ctx, cfg.Cap, func() bool { return e.countPods(ctx, ns, isBound) == cfg.Pods }); err != nil {
		res.DNF = true
	}
	res.Bound = e.countPods(ctx, ns, isBound)
	if proc.Exited() {
		return res, fmt.Errorf("%s exited: %v", t.Name, proc.Err())
	}
	// The last pods' attempts are counted after their Bindings show: wait
	// for them, or an attempt is missing (a round once read 199 for 100
	// pods).
	if !res.DNF {
		_ = waitFor(ctx, cfg.Cap, func() bool {
			n, err := scrapeScheduled(ctx, proc.Addr(), t.Sched.IsKubeScheduler())
			return err == nil && n >= res.Bound
		})
	}
	if res.Attempts, err = scrapeAttempts(ctx, proc.Addr(), t.Sched.IsKubeScheduler()); err != nil {
		return res, err
	}
	res.Wasted = res.Attempts - 2*cfg.Pods
	return res, nil
}

// bigNode has room for n pods of the pod template (100m, 500Mi).
func bigNode(name string, n int) *v1.Node {
	node := benchNode(name, nil)
	room := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(int64(100*n), resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(int64(n)*500<<20, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(int64(n), resource.DecimalSI),
	}
	node.Status.Allocatable, node.Status.Capacity = room, room.DeepCopy()
	return node
}

func isBound(p *v1.Pod) bool { return p.Spec.NodeName != "" }

// unschedulable: the scheduler tried the pod and found no node for it.
func unschedulable(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// countPods lists the namespace's pods and counts those that match (-1 if
// the list fails, which no wait accepts).
func (e *Env) countPods(ctx context.Context, ns string, match func(*v1.Pod) bool) int {
	list, err := e.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return -1
	}
	n := 0
	for i := range list.Items {
		if match(&list.Items[i]) {
			n++
		}
	}
	return n
}
