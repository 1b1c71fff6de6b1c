package bench

// Placement quality (make quality): how good the nodes a scheduler picks
// are, not how fast it picks them. scheduler_perf measures throughput
// only; these workloads measure the placements against what a perfect
// placement would be.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"minisched/scripts/e2e"
)

// nodeMilliCPU is the CPU of every node of the workloads, benchNode's.
const nodeMilliCPU = 4000

// QualityConfig sizes the placement workloads.
type QualityConfig struct {
	// SpreadNodes and SpreadPods size the fast scale-up of
	// kubernetes/kubernetes#130692: identical pods of 100m, created at
	// once, on identical empty nodes.
	SpreadNodes, SpreadPods int
	// PackNodes is the node count of the two bin-packing workloads. Their
	// pods are cut from the nodes' CPU (500m to 2 CPUs each): pods of
	// half of the nodes' CPU for "pack-half", where a perfect packing
	// leaves half of the nodes empty, and of all of it for "pack-full",
	// where a perfect packing places every pod.
	PackNodes int
	// Seed makes the pods' sizes the same for every scheduler.
	Seed uint64
	// Cap bounds each workload: a scheduler that has not placed its pods
	// by then did not finish (DNF).
	Cap time.Duration
	// QPS and Burst are every scheduler's client rate limit.
	QPS   float32
	Burst int
}

// The workloads.
const (
	Spread   = "spread"
	PackHalf = "pack-half"
	PackFull = "pack-full"
)

// QualityResult is one workload's run of one scheduler.
type QualityResult struct {
	Name     string `json:"name"`
	Workload string `json:"workload"`
	// Strategy is NodeResourcesFit's scoring strategy the scheduler ran
	// with.
	Strategy  string `json:"strategy"`
	Pods      int    `json:"pods"`
	Scheduled int    `json:"scheduled"`
	Pending   int    `json:"pending"`
	DNF       bool   `json:"dnf"`
	// Seconds is the time to place: from the first pod's creation to the
	// last binding.
	Seconds float64 `json:"seconds"`
	// Spread: the fewest and the most pods on a node, and the coefficient
	// of variation (standard deviation over mean) of the CPU requested per
	// node, over every node.
	MinPods int     `json:"minPods"`
	MaxPods int     `json:"maxPods"`
	CPUCV   float64 `json:"cpuCV"`
	// Bin packing: the nodes holding a pod; the lower bound
	// ⌈Σ requests / node CPU⌉; the nodes first-fit-decreasing uses; the
	// pods first-fit-decreasing leaves out on the workload's nodes; and
	// of the pods left pending, how many a repacking would place.
	NodesUsed  int `json:"nodesUsed"`
	LowerBound int `json:"lowerBound"`
	FFDNodes   int `json:"ffdNodes"`
	FFDPending int `json:"ffdPending"`
	Repackable int `json:"repackable"`
}

// Skew is the most minus the fewest pods on a node.
func (r QualityResult) Skew() int { return r.MaxPods - r.MinPods }

// PackSizes cuts n nodes' CPU, in millicores, into pod sizes of 500m to
// 2 CPUs (multiples of 500m), node by node, and shuffles them: an exact
// packing onto n nodes exists, though first-fit-decreasing may not find it
// and a scheduler that sees the pods one at a time, in creation order,
// rarely does.
func PackSizes(n int, seed uint64) []int64 {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var sizes []int64
	for range n {
		for left := int64(nodeMilliCPU); left > 0; {
			size := min(500*(1+r.Int64N(4)), left)
			sizes = append(sizes, size)
			left -= size
		}
	}
	r.Shuffle(len(sizes), func(i, j int) { sizes[i], sizes[j] = sizes[j], sizes[i] })
	return sizes
}

// LowerBound is ⌈Σ sizes / capacity⌉: no packing uses fewer bins.
func LowerBound(sizes []int64, capacity int64) int {
	var sum int64
	for _, s := range sizes {
		sum += s
	}
	return int((sum + capacity - 1) / capacity)
}

// FirstFitDecreasing packs the sizes, largest first, each into the first
// bin with room, opening a bin when none has room but never more than
// maxBins. It returns the bins used and the sizes left out. It uses at
// most 11/9 of the optimum plus one bin (Johnson's bound), a yardstick
// a scheduler that sees one pod at a time cannot be held to exactly.
func FirstFitDecreasing(sizes []int64, capacity int64, maxBins int) (bins, left int) {
	sorted := slices.Clone(sizes)
	slices.SortFunc(sorted, func(a, b int64) int { return int(b - a) })
	var free []int64
	for _, s := range sorted {
		i := slices.IndexFunc(free, func(f int64) bool { return f >= s })
		switch {
		case i >= 0:
			free[i] -= s
		case len(free) < maxBins && s <= capacity:
			free = append(free, capacity-s)
		default:
			left++
		}
	}
	return len(free), left
}

// SpreadStats returns the fewest and the most pods on a node and the
// coefficient of variation of the CPU requested per node, over every node.
func SpreadStats(podsPerNode []int, cpuPerNode []int64) (minPods, maxPods int, cv float64) {
	if len(podsPerNode) == 0 {
		return 0, 0, 0
	}
	minPods, maxPods = slices.Min(podsPerNode), slices.Max(podsPerNode)
	var sum float64
	for _, c := range cpuPerNode {
		sum += float64(c)
	}
	mean := sum / float64(len(cpuPerNode))
	if mean == 0 {
		return minPods, maxPods, 0
	}
	var sq float64
	for _, c := range cpuPerNode {
		sq += (float64(c) - mean) * (float64(c) - mean)
	}
	return minPods, maxPods, math.Sqrt(sq/float64(len(cpuPerNode))) / mean
}

// RunQuality runs one workload for one target on its own namespace and
// nodes: it creates every pod at once, waits until each is bound or
// reported unschedulable and nothing has changed for two seconds, and
// measures the placements.
func (e *Env) RunQuality(ctx context.Context, workload string, t Target, strategy string, cfg QualityConfig, run int) (QualityResult, error) {
	res := QualityResult{Name: t.Name, Workload: workload, Strategy: strategy}
	var sizes []int64
	nodes := cfg.PackNodes
	switch workload {
	case Spread:
		nodes = cfg.SpreadNodes
		for range cfg.SpreadPods {
			sizes = append(sizes, 100)
		}
	case PackHalf:
		sizes = PackSizes(cfg.PackNodes/2, cfg.Seed)
	case PackFull:
		sizes = PackSizes(cfg.PackNodes, cfg.Seed)
	default:
		return res, fmt.Errorf("no workload %q", workload)
	}
	res.Pods = len(sizes)
	ns, nodeNames, err := e.setUp(ctx, workload, t, run, nodes)
	defer cleanup(e.Client, ns)
	if err != nil {
		return res, err
	}

	// settled counts pods bound or marked unschedulable; changed is the
	// last time that count or a binding changed.
	var bound, unschedulable atomic.Int64
	var lastBound, changed atomic.Int64
	factory := informers.NewSharedInformerFactoryWithOptions(e.Client, 0, informers.WithNamespace(ns))
	podInformer := factory.Core().V1().Pods().Informer()
	isUnschedulable := func(p *v1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				return true
			}
		}
		return false
	}
	_, err = podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if obj.(*v1.Pod).Spec.NodeName != "" {
				bound.Add(1)
				lastBound.Store(time.Now().UnixNano())
			}
			changed.Store(time.Now().UnixNano())
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*v1.Pod), newObj.(*v1.Pod)
			if o.Spec.NodeName == "" && n.Spec.NodeName != "" {
				bound.Add(1)
				lastBound.Store(time.Now().UnixNano())
				if isUnschedulable(o) {
					unschedulable.Add(-1)
				}
			} else if n.Spec.NodeName == "" && isUnschedulable(n) != isUnschedulable(o) {
				if isUnschedulable(n) {
					unschedulable.Add(1)
				} else {
					unschedulable.Add(-1)
				}
			}
			changed.Store(time.Now().UnixNano())
		},
	})
	if err != nil {
		return res, err
	}
	infCtx, stopInformer := context.WithCancel(ctx)
	defer stopInformer()
	factory.Start(infCtx.Done())
	factory.WaitForCacheSync(infCtx.Done())

	proc, err := e.start(t, ns)
	if err != nil {
		return res, err
	}
	defer func() { _ = proc.Stop(false) }()

	start := time.Now()
	changed.Store(start.UnixNano())
	err = forEach(ctx, len(sizes), func(i int) error {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%05d", workload, i)},
			Spec: v1.PodSpec{
				SchedulerName: e2e.DefaultSchedulerName,
				Containers: []v1.Container{{
					Name: "pause", Image: "registry.k8s.io/pause:3.10",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
						v1.ResourceCPU: *resource.NewMilliQuantity(sizes[i], resource.DecimalSI), v1.ResourceMemory: resource.MustParse("500Mi"),
					}},
				}},
			},
		}
		_, err := e.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return res, fmt.Errorf("creating pods: %w", err)
	}
	settled := func() bool {
		return bound.Load()+unschedulable.Load() >= int64(len(sizes)) && time.Since(time.Unix(0, changed.Load())) > 2*time.Second
	}
	if err := waitFor(ctx, cfg.Cap, settled); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.DNF = true
	}
	if proc.Exited() {
		return res, fmt.Errorf("%s exited: %v", t.Name, proc.Err())
	}
	if last := time.Unix(0, lastBound.Load()); last.After(start) {
		res.Seconds = last.Sub(start).Seconds()
	}

	pods, err := e.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return res, err
	}
	index := map[string]int{}
	for i, n := range nodeNames {
		index[n] = i
	}
	podsPerNode := make([]int, len(nodeNames))
	cpuPerNode := make([]int64, len(nodeNames))
	for _, p := range pods.Items {
		i, ok := index[p.Spec.NodeName]
		if !ok {
			res.Pending++
			continue
		}
		res.Scheduled++
		podsPerNode[i]++
		cpuPerNode[i] += p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
	}
	res.MinPods, res.MaxPods, res.CPUCV = SpreadStats(podsPerNode, cpuPerNode)
	for _, n := range podsPerNode {
		if n > 0 {
			res.NodesUsed++
		}
	}
	res.LowerBound = LowerBound(sizes, nodeMilliCPU)
	res.FFDNodes, res.FFDPending = FirstFitDecreasing(sizes, nodeMilliCPU, len(nodeNames))
	res.Repackable = max(0, res.Pending-res.FFDPending)
	return res, nil
}

// MedianQuality takes, per scheduler and workload, the run with the median
// time to place, and the median of each measure over the runs.
func MedianQuality(runs [][]QualityResult) []QualityResult {
	if len(runs) == 0 {
		return nil
	}
	out := make([]QualityResult, len(runs[0]))
	for i, first := range runs[0] {
		var secs, cv []float64
		var minPods, maxPods, used, pending, repack, scheduled []int
		dnf := false
		for _, run := range runs {
			r := run[i]
			secs, cv = append(secs, r.Seconds), append(cv, r.CPUCV)
			minPods, maxPods, used = append(minPods, r.MinPods), append(maxPods, r.MaxPods), append(used, r.NodesUsed)
			pending, repack, scheduled = append(pending, r.Pending), append(repack, r.Repackable), append(scheduled, r.Scheduled)
			dnf = dnf || r.DNF
		}
		m := first
		m.Seconds, m.CPUCV = median(secs), median(cv)
		m.MinPods, m.MaxPods, m.NodesUsed = median(minPods), median(maxPods), median(used)
		m.Pending, m.Repackable, m.Scheduled = median(pending), median(repack), median(scheduled)
		m.DNF = dnf
		out[i] = m
	}
	return out
}
