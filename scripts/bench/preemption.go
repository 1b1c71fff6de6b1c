package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"minisched/scripts/e2e"
)

// Names of the preemption workloads, after scheduler_perf's
// default_preemption/performance-config.yaml.
const (
	PreemptionBasic = "PreemptionBasic"
	PreemptionAsync = "PreemptionAsync"
)

// PreemptionConfig sizes both preemption workloads. As in scheduler_perf,
// every node (4 CPUs) first gets four low-priority pods of 900m
// (templates/pod-low-priority.yaml: priority 0,
// terminationGracePeriodSeconds 0), so 3.6 CPUs are used; a preemptor asks
// for 3970m (default_preemption/templates/pod-high-priority.yaml: priority
// 9999999, terminationGracePeriodSeconds 0) and must preempt all four.
//   - PreemptionBasic measures Pods high-priority pods.
//   - PreemptionAsync measures Pods pods of 100m (pod-default.yaml), which
//     fit while a node has no preemptor, while a preemptor arrives every
//     Interval (200ms upstream): asynchronous preemption keeps the victims'
//     deletions out of the scheduling loop, and this shows what that buys.
//     Upstream's churn creates preemptors without end; here there are at
//     most as many as nodes, since a node holds one.
//
// PreemptionBasic needs Pods ≤ Nodes for the same reason.
type PreemptionConfig struct {
	Nodes, Pods int
	// AsyncNodes and AsyncPods size PreemptionAsync: its measured pods are
	// fast to schedule, so it needs many more of them for a measured phase
	// of several seconds. Four fit a node beside its low-priority pods,
	// none a node a preemptor took: the preemptors arriving meanwhile must
	// leave room for them all.
	AsyncNodes, AsyncPods int
	Interval              time.Duration
	Cap                   time.Duration
}

// Sized returns the nodes and measured pods of a workload.
func (c PreemptionConfig) Sized(workload string) (nodes, pods int) {
	if workload == PreemptionAsync {
		return c.AsyncNodes, c.AsyncPods
	}
	return c.Nodes, c.Pods
}

// Phases splits the time of a preemptor into what an observer of the API
// sees: from its creation to its nomination (the queue, a failed Filter,
// the dry runs of PostFilter, the status patch); from its nomination to the
// deletion of the last pod on its node (the victims' deletions); and from
// there to its binding (the event that requeues it, its second cycle, the
// Binding). Medians in milliseconds over the preemptors bound to the node
// they were nominated to.
type Phases struct {
	Preemptors int `json:"preemptors"`
	// Unbound counts the preemptors not bound by the end of the run (its
	// cap, twice for PreemptionAsync's preemptors, which are not
	// measured): the phases are over the others.
	Unbound    int     `json:"unbound,omitempty"`
	Victims    int     `json:"victims"`
	ToNominate float64 `json:"toNominateMs"`
	ToDelete   float64 `json:"toDeleteMs"`
	ToBind     float64 `json:"toBindMs"`
}

// preemptionWatch follows a preemption workload's pods: bindings of
// measured pods, and the times of each preemptor's creation, nomination
// and binding, and of every deletion on each node.
type preemptionWatch struct {
	boundMeasured, lastBound atomic.Int64
	bound                    atomic.Int64

	mu        sync.Mutex
	created   map[string]time.Time
	nominated map[string]time.Time
	nominee   map[string]string
	boundAt   map[string]time.Time
	boundTo   map[string]string
	deletions map[string][]time.Time // node → when its pods were deleted
	victims   int
}

func newPreemptionWatch() *preemptionWatch {
	return &preemptionWatch{
		created: map[string]time.Time{}, nominated: map[string]time.Time{}, nominee: map[string]string{},
		boundAt: map[string]time.Time{}, boundTo: map[string]string{}, deletions: map[string][]time.Time{},
	}
}

const preemptorLabel = "minisched.io/bench-preemptor"

func (w *preemptionWatch) handlers() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			p := obj.(*v1.Pod)
			if p.Labels[preemptorLabel] != "" {
				w.mu.Lock()
				w.created[p.Name] = time.Now()
				w.mu.Unlock()
			}
			// A pod first seen bound: the watch missed its binding and a
			// relist brought it (right after the apiserver started, a
			// watch can end at once).
			if p.Spec.NodeName != "" {
				w.handlers().UpdateFunc(&v1.Pod{ObjectMeta: p.ObjectMeta}, p)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, p := oldObj.(*v1.Pod), newObj.(*v1.Pod)
			now := time.Now()
			if old.Spec.NodeName == "" && p.Spec.NodeName != "" {
				w.bound.Add(1)
				if p.Labels[measured] != "" {
					w.boundMeasured.Add(1)
					w.lastBound.Store(now.UnixNano())
				}
			}
			if p.Labels[preemptorLabel] == "" {
				return
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if n := p.Status.NominatedNodeName; n != "" && w.nominee[p.Name] == "" {
				w.nominated[p.Name], w.nominee[p.Name] = now, n
			}
			if old.Spec.NodeName == "" && p.Spec.NodeName != "" {
				w.boundAt[p.Name], w.boundTo[p.Name] = now, p.Spec.NodeName
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			p, ok := obj.(*v1.Pod)
			if !ok || p.Spec.NodeName == "" {
				return
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			w.deletions[p.Spec.NodeName] = append(w.deletions[p.Spec.NodeName], time.Now())
			w.victims++
		},
	}
}

// preemptorsBound says whether every preemptor created so far is bound.
func (w *preemptionWatch) preemptorsBound() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.boundAt) == len(w.created)
}

// phases computes the medians over the preemptors bound where they were
// nominated.
func (w *preemptionWatch) phases() Phases {
	w.mu.Lock()
	defer w.mu.Unlock()
	var toNominate, toDelete, toBind []float64
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for pod, nominatedAt := range w.nominated {
		node, boundAt := w.nominee[pod], w.boundAt[pod]
		if w.boundTo[pod] != node || boundAt.IsZero() {
			continue
		}
		// The last deletion on the node before the preemptor was bound.
		var lastDeletion time.Time
		for _, t := range w.deletions[node] {
			if t.Before(boundAt) && t.After(lastDeletion) {
				lastDeletion = t
			}
		}
		if lastDeletion.Before(nominatedAt) {
			// Deleted before the watch saw the nomination: the status
			// patch and the deletions raced (asynchronous preemption).
			lastDeletion = nominatedAt
		}
		toNominate = append(toNominate, ms(nominatedAt.Sub(w.created[pod])))
		toDelete = append(toDelete, ms(lastDeletion.Sub(nominatedAt)))
		toBind = append(toBind, ms(boundAt.Sub(lastDeletion)))
	}
	return Phases{Preemptors: len(toNominate), Unbound: len(w.created) - len(w.boundAt), Victims: w.victims, ToNominate: median(toNominate), ToDelete: median(toDelete), ToBind: median(toBind)}
}

// RunPreemption runs PreemptionBasic or PreemptionAsync for one scheduler on
// its own namespace and nodes, and removes them afterwards.
func (e *Env) RunPreemption(ctx context.Context, workload string, t Target, cfg PreemptionConfig, run int) (Result, error) {
	client := e.Client
	res := Result{Name: t.Name}
	if t.Sched == nil {
		return res, fmt.Errorf("%s needs a scheduler", workload)
	}
	nodes, pods := cfg.Sized(workload)
	ns, _, err := e.setUp(ctx, map[string]string{PreemptionBasic: "preempt", PreemptionAsync: "preempt-async"}[workload], t, run, nodes)
	defer cleanup(client, ns)
	if err != nil {
		return res, err
	}
	if workload == PreemptionBasic && pods > nodes {
		return res, fmt.Errorf("%s: %d preemptors do not fit %d nodes (one each)", workload, pods, nodes)
	}
	if workload == PreemptionAsync && pods > 4*nodes {
		return res, fmt.Errorf("%s: %d pods of 100m do not fit %d nodes (four each)", workload, pods, nodes)
	}
	// The apiserver computes a pod's priority from its PriorityClass, so a
	// class stands in for the template's priority: 9999999.
	high := ns + "-high"
	if err := e2e.CreatePriorityClass(ctx, client, ns, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: high}, Value: 9999999}); err != nil {
		return res, err
	}
	defer func() {
		_ = client.SchedulingV1().PriorityClasses().Delete(context.Background(), high, metav1.DeleteOptions{})
	}()

	w := newPreemptionWatch()
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(w.handlers()); err != nil {
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

	initPods := 4 * nodes
	if err := createFromTemplate(ctx, client, ns, "low", initPods, podTemplate{CPU: "900m", Graceless: true}); err != nil {
		return res, err
	}
	if err := waitFor(ctx, 5*time.Minute, func() bool { return w.bound.Load() >= int64(initPods) }); err != nil {
		return res, fmt.Errorf("the %d low-priority pods were not scheduled: %w", initPods, err)
	}

	cpuAtStart, _ := cpuSeconds(proc.Pid())
	preemptor := podTemplate{CPU: "3970m", PriorityClassName: high, Labels: map[string]string{preemptorLabel: "true"}, Graceless: true}
	s := newSampler(time.Second)
	start := time.Now()
	profiled := e.profileWindow(ctx, t, proc, ns)
	measureCtx, stopMeasure := context.WithCancel(ctx)
	defer stopMeasure()
	createErr := make(chan error, 2)
	churnDone := make(chan struct{})
	switch workload {
	case PreemptionBasic:
		close(churnDone)
		preemptor.Labels[measured] = "true"
		go func() { createErr <- createFromTemplate(measureCtx, client, ns, "high", pods, preemptor) }()
	case PreemptionAsync:
		// One high-priority pod every Interval, at most one per node (a
		// node holds one), until the measured pods are scheduled.
		go func() {
			defer close(churnDone)
			tick := time.NewTicker(cfg.Interval)
			defer tick.Stop()
			for i := 0; i < nodes; i++ {
				select {
				case <-measureCtx.Done():
					return
				case <-tick.C:
				}
				if err := createFromTemplate(measureCtx, client, ns, fmt.Sprintf("high-%05d", i), 1, preemptor); err != nil && measureCtx.Err() == nil {
					createErr <- err
					return
				}
			}
		}()
		go func() {
			createErr <- createFromTemplate(measureCtx, client, ns, "measured", pods, podTemplate{CPU: "100m", Labels: map[string]string{measured: "true"}})
		}()
	default:
		return res, fmt.Errorf("unknown workload %q", workload)
	}
	if res.DNF, err = sampleUntil(ctx, s, pods, cfg.Cap, func() int { return int(w.boundMeasured.Load()) }, createErr); err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	stopMeasure()
	<-churnDone
	res.Scheduled = int(w.boundMeasured.Load())
	if last := time.Unix(0, w.lastBound.Load()); res.Scheduled > 0 && last.After(start) {
		res.Overall = float64(res.Scheduled) / last.Sub(start).Seconds()
	}
	res.Throughput = Summarize(s.samples)
	if proc.Exited() {
		return res, fmt.Errorf("%s exited: %v", t.Name, proc.Err())
	}
	res.PeakRSS, _ = peakRSS(proc.Pid())
	if cpu, err := cpuSeconds(proc.Pid()); err == nil {
		res.CPUSeconds = cpu - cpuAtStart
	}
	if res.Profile, err = profiled(); err != nil {
		return res, err
	}
	// The preemptors created while measuring may still be on their way:
	// their phases need them bound (not counted in the throughput). A
	// scheduler that leaves some unbound is reported so (Phases.Unbound,
	// and DNF where they are the measured pods), not failed: one slow run
	// must not cost the rest of a long make bench.
	if !res.DNF {
		if err := waitFor(ctx, cfg.Cap, w.preemptorsBound); err != nil && ctx.Err() != nil {
			return res, err
		}
	}
	p := w.phases()
	if p.Unbound > 0 {
		fmt.Fprintf(os.Stderr, "%s, %s: %d preemptors were not bound (logs in %s)\n", workload, t.Name, p.Unbound, e.LogDir)
	}
	res.Phases = &p
	return res, nil
}

// PreemptionMedians returns each preemption workload's medians, by name.
func (r *Report) PreemptionMedians() map[string][]Result {
	return map[string][]Result{PreemptionBasic: r.PreemptionBasicMedian, PreemptionAsync: r.PreemptionAsyncMedian}
}

// PreemptionWorkloads are the preemption workloads, in the order they run.
var PreemptionWorkloads = []string{PreemptionBasic, PreemptionAsync}

// MedianPhases takes, target by target, the median of each phase over the
// runs, in the order of MedianBasic.
func MedianPhases(runs [][]Result, medians []Result) {
	for i := range medians {
		var n, victims, unbound []int
		var nominate, del, bind []float64
		for _, run := range runs {
			for _, r := range run {
				if r.Name == medians[i].Name && r.Phases != nil {
					n, victims = append(n, r.Phases.Preemptors), append(victims, r.Phases.Victims)
					unbound = append(unbound, r.Phases.Unbound)
					nominate, del, bind = append(nominate, r.Phases.ToNominate), append(del, r.Phases.ToDelete), append(bind, r.Phases.ToBind)
				}
			}
		}
		if len(n) > 0 {
			medians[i].Phases = &Phases{Preemptors: median(n), Unbound: median(unbound), Victims: median(victims), ToNominate: median(nominate), ToDelete: median(del), ToBind: median(bind)}
		}
	}
}

// phaseNames are the columns of the phases, for the reports.
var phaseNames = []string{"created→nominated ms", "nominated→victims gone ms", "victims gone→bound ms"}

// PhaseRow formats a result's phases for a table ("–" without them).
func PhaseRow(r Result) []string {
	if r.Phases == nil || r.Phases.Preemptors == 0 {
		return []string{"–", "–", "–", "–"}
	}
	p := r.Phases
	who := fmt.Sprintf("%d/%d", p.Preemptors, p.Victims)
	if p.Unbound > 0 {
		who += fmt.Sprintf(" (%d unbound)", p.Unbound)
	}
	return []string{who, fmt.Sprintf("%.0f", p.ToNominate), fmt.Sprintf("%.0f", p.ToDelete), fmt.Sprintf("%.0f", p.ToBind)}
}
