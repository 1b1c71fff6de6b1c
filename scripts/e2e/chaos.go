package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ChaosConfig sizes a chaos run (make chaos). Every churn action touches
// Fraction of the nodes or of the pending pods; each kind happens twice, so
// about 2×Fraction of the nodes are deleted in all.
type ChaosConfig struct {
	Nodes int // nodes at the start
	Pods  int // pods created, in Waves waves
	Waves int
	// Pause is the time between two waves; churn happens in the pauses.
	Pause    time.Duration
	Fraction float64
	// Settle bounds the wait, after the last wave, for every pending pod
	// that fits somewhere to be bound.
	Settle time.Duration
	// Restart stops kube-apiserver once, half way through, for Down, and
	// starts it again.
	Restart bool
	Down    time.Duration
	// OutagePods are created just before the apiserver goes down, so that
	// the scheduler is binding when it does (the chapters' client allows
	// 50 requests a second after a burst of 100).
	OutagePods int
	Seed       uint64
}

// DefaultChaos is what `make chaos` runs: a few hundred nodes, a few
// thousand pods, in about three minutes per chapter.
var DefaultChaos = ChaosConfig{Nodes: 300, Pods: 3000, Waves: 10, Pause: 3 * time.Second, Fraction: 0.05, Settle: 3 * time.Minute, Restart: true, Down: 5 * time.Second, OutagePods: 300, Seed: 1}

// ChaosReport is what a chaos run did and found.
type ChaosReport struct {
	Pods, Nodes                                  int // created, nodes including those added later
	NodesDeleted, PendingDeleted, OrphansDeleted int
	LabelChanges, TaintChanges                   int
	Restarts                                     int
	// OutageErrors counts the lines the scheduler logged about refused
	// connections after the apiserver went down. It may be 0: client-go
	// retries a request the stopping apiserver answered with Retry-After,
	// and requests held by the client's rate limiter may only leave once
	// the apiserver is back.
	OutageErrors int
	// Bound and Pending count the pods left at the end.
	Bound, Pending int
	// Bindings is the number of Bindings the apiserver accepted; Refused
	// those it refused (a pod deleted meanwhile, or already bound by a
	// Binding whose answer a restart swallowed).
	Bindings, Refused int
	// LateBindings are accepted Bindings to a node that no longer existed:
	// sent before the scheduler saw the deletion, or InFlight. Their pods
	// were deleted as PodGC would. They are allowed.
	LateBindings int
	// InFlight counts the Bindings issued after the scheduler saw their
	// node deleted, by a cycle that had chosen the node before (allowed,
	// as in kube-scheduler; see lateBinds).
	InFlight int
	Settled  time.Duration
	// From chapter 09 on: Preemptions the scheduler logged deciding,
	// PreemptionsChecked those checked for room elsewhere (not those around
	// the apiserver's restart), Victims the pods it deleted, Nominated the
	// pods ever nominated. From chapter 11 on, GangCandidates counts the
	// preemptions on a node that held a bound gang member (a member was a
	// potential victim), and GangVictims the members preempted.
	Preemptions, PreemptionsChecked, Victims, Nominated int
	GangCandidates, GangVictims                         int
	// From chapter 11 on: Gangs is the PodGroups created, GangCycles the
	// cycles that bound their members, which checkGangs judged.
	Gangs, GangCycles int
	// Cache is what the scheduler's scheduler_cache_size said at the end,
	// by type (assumed_pods, pods, nodes), once it agreed with the cluster;
	// Chapters 05 on export it.
	Cache      map[string]int
	Violations []string
	Log        string
}

// chaosTaint is the taint the churn adds and removes; some pods tolerate it.
var chaosTaint = v1.Taint{Key: "chaos.minisched.io/dedicated", Value: "true", Effect: v1.TaintEffectNoSchedule}

var chaosZones = []string{"zone-a", "zone-b", "zone-c"}

// chaos is one chaos run in progress. The run embeds a scenario run for its
// namespace, scheduler process, capacity checks and cleanup.
type chaos struct {
	*run
	cfg      ChaosConfig
	rng      *rand.Rand
	report   ChaosReport
	nextNode int
	// outageFrom is the size of the scheduler's log when the apiserver
	// went down.
	outageFrom int64
	tainted    []string
	orphans    atomic.Int64
	// outage is when kube-apiserver was stopped and when it answered again.
	outage [2]time.Time
	// churned holds the names of the pods the churn and PodGC deleted
	// (the scheduler deletes the others, to preempt them).
	churned sync.Map
	// gangs holds the minCount of each PodGroup the run created (chapter
	// 11 on).
	gangs map[string]int
}

// Chaos runs sched while the cluster churns under it, then checks the
// invariants of issue 7: every remaining pod that fits is bound exactly
// once, no Binding was issued after the scheduler had seen its node
// deleted, no node is over-committed, and the scheduler never exited.
// From chapter 09 on, pods have priorities, the larger high-priority ones
// preempt, and the preemption invariants hold too (checkPreemptions).
// From chapter 11 on, gangs of the Workload API come with every wave, and
// none is ever part bound (checkGangs).
func (r *Runner) Chaos(ctx context.Context, sched Scheduler, cfg ChaosConfig) ChaosReport {
	c := &chaos{
		run: r.newRun(&Scenario{Name: "chaos"}, sched, fmt.Sprintf("chaos-%02d", sched.Chapter)),
		cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.Seed, uint64(sched.Chapter))),
	}
	c.report.Log = filepath.Join(r.LogDir, c.ns+".log")
	if err := c.play(ctx); err != nil {
		c.violate("%v", err)
	}
	if c.history != nil {
		defer c.history.Stop()
		if c.proc != nil && !c.proc.Exited() && len(c.report.Violations) == 0 && c.sched.Chapter >= PreemptionChapter {
			c.checkNominationsEnd(ctx)
		}
	}
	if c.proc != nil && !c.proc.Exited() && len(c.report.Violations) == 0 && c.sched.Chapter >= 5 {
		c.checkCache(ctx)
	}
	if c.proc != nil {
		if c.proc.Exited() {
			c.violate("the scheduler exited during the run: %v (log: %s)", c.proc.err, c.report.Log)
		} else if err := c.proc.StopAs(c.sched); err != nil {
			c.violate("%v", err)
		}
	}
	if c.proc != nil && len(c.report.Violations) == 0 {
		c.checkBindings()
		c.checkOutage()
		c.checkPreemptions()
		c.checkGangs()
	}
	if err := c.cleanup(); err != nil {
		c.violate("cleanup: %v", err)
	}
	return c.report
}

func (c *chaos) violate(format string, args ...any) {
	c.report.Violations = append(c.report.Violations, fmt.Sprintf(format, args...))
}

// play creates the nodes, starts the scheduler, creates the pods in waves
// with churn in between, and waits for the pending pods to settle.
func (c *chaos) play(ctx context.Context) error {
	client := c.r.Client
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the namespace: %w", err)
	}
	var err error
	if c.history, err = watchPods(ctx, client, c.ns); err != nil {
		return err
	}
	if err := c.createPriorityClasses(ctx); err != nil {
		return err
	}
	if err := c.addNodes(ctx, c.cfg.Nodes); err != nil {
		return err
	}
	extra := []string{}
	if c.sched.Chapter >= 6 {
		// Chaos checks safety, not latency: a move lost in 06 waits for
		// the leftover flush, five minutes by default. 30 s keeps the
		// settle bounded in every chapter.
		extra = append(extra, "--pod-max-in-unschedulable-pods-duration=30s")
	}
	if c.proc, err = StartScheduler(c.sched, c.r.Cluster.Kubeconfig, extra, c.report.Log); err != nil {
		return err
	}
	if err := c.proc.WaitServing(); err != nil {
		return err
	}

	// PodGC: without a controller-manager, pods bound to a deleted node
	// would stay forever, holding nothing but counted by nobody.
	gcCtx, stopGC := context.WithCancel(ctx)
	var gcDone sync.WaitGroup
	gcDone.Add(1)
	go func() {
		defer gcDone.Done()
		for gcCtx.Err() == nil {
			_ = c.podGC(gcCtx)
			select {
			case <-gcCtx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	defer func() { stopGC(); gcDone.Wait() }()

	churn := []func(context.Context) error{
		c.relabel, c.replaceNodes, c.deletePending, c.taint, c.restart,
		c.replaceNodes, c.deletePending, c.untaint, c.relabel,
	}
	perWave := (c.cfg.Pods + c.cfg.Waves - 1) / c.cfg.Waves
	for w := 0; w < c.cfg.Waves; w++ {
		if err := c.createPods(ctx, min(perWave, c.cfg.Pods-w*perWave)); err != nil {
			return err
		}
		if c.sched.Chapter >= PodGroupChapter {
			// A gang of three per 30 pods, besides the pods.
			if err := c.createGangs(ctx, max(1, perWave/30)); err != nil {
				return err
			}
		}
		if w < len(churn) {
			if err := churn[w](ctx); err != nil {
				return err
			}
		}
		if c.proc.Exited() {
			return fmt.Errorf("the scheduler exited during the run: %v (log: %s)", c.proc.err, c.report.Log)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.cfg.Pause):
		}
	}
	return c.settle(ctx)
}

// settle waits until no pending pod fits a node with room for it, then
// runs PodGC a last time and counts what is left.
func (c *chaos) settle(ctx context.Context) error {
	start := time.Now()
	var problems []string
	for {
		if err := c.podGC(ctx); err != nil {
			return err
		}
		pods, err := c.currentPods(ctx)
		if err != nil {
			return err
		}
		problems = c.checkCapacity(ctx, pods)
		if len(problems) == 0 || time.Since(start) > c.cfg.Settle || c.proc.Exited() {
			c.report.Settled = time.Since(start)
			c.report.Bound, c.report.Pending = 0, 0
			for _, p := range pods {
				if p.Spec.NodeName != "" {
					c.report.Bound++
				} else {
					c.report.Pending++
				}
			}
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	c.report.OrphansDeleted = int(c.orphans.Load())
	for _, p := range problems {
		c.violate("after %s: %s", c.report.Settled.Round(time.Second), p)
	}
	return nil
}

func (c *chaos) currentPods(ctx context.Context) (map[string]*v1.Pod, error) {
	list, err := c.r.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods := map[string]*v1.Pod{}
	for i := range list.Items {
		pods[list.Items[i].Name] = &list.Items[i]
	}
	return pods, nil
}

// podGC deletes the pods bound to nodes that no longer exist, as the
// controller-manager's PodGC does.
func (c *chaos) podGC(ctx context.Context) error {
	nodes, err := c.r.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	for _, n := range nodes.Items {
		exists[n.Name] = true
	}
	pods, err := c.currentPods(ctx)
	if err != nil {
		return err
	}
	for _, p := range pods {
		// A pod terminating on a deleted node has no kubelet (no KWOK) to
		// finish it: PodGC deletes it at once too.
		if p.Spec.NodeName != "" && !exists[p.Spec.NodeName] {
			deleted, err := c.deletePod(ctx, p.Name)
			if err != nil {
				return err
			}
			if deleted {
				c.orphans.Add(1)
			}
		}
	}
	return nil
}

// deletePod deletes a pod at once and says whether this call deleted it
// (PodGC and the churn may race for the same pod).
func (c *chaos) deletePod(ctx context.Context, name string) (bool, error) {
	zero := int64(0)
	// Recorded before the call: the watch may report the deletion before
	// the call returns.
	c.churned.Store(name, true)
	err := c.r.Client.CoreV1().Pods(c.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// addNodes creates n nodes of nodeCPU CPUs, 32 GiB and 110 pods, spread
// over three zones.
func (c *chaos) addNodes(ctx context.Context, n int) error {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-node-%04d", c.ns, c.nextNode)
		c.nextNode++
	}
	err := parallel(ctx, len(names), func(i int) error {
		spec := NodeSpec{CPU: c.nodeCPU(), Memory: "32Gi", Labels: map[string]string{"zone": chaosZones[i%len(chaosZones)]}}
		_, err := c.r.Client.CoreV1().Nodes().Create(ctx, MakeNode(names[i], spec), metav1.CreateOptions{})
		return err
	})
	for _, name := range names {
		c.nodes[name] = true
	}
	c.report.Nodes += n
	return err
}

// nodeCPU is each node's CPU. Up to chapter 08 the nodes have room for
// every wave (8 CPUs). From chapter 09 on they have 2 CPUs, a quarter of
// that: the pods ask for about 0.45 CPU on average, so the waves fill the
// cluster before the apiserver's restart (about half way), and from then
// on the high-priority pods find no room and must preempt. Without a full
// cluster no preemption happens, and the preemption checks have nothing
// to judge.
func (c *chaos) nodeCPU() string {
	if c.sched.Chapter >= PreemptionChapter {
		return "2"
	}
	return "8"
}

// createPods creates n pods of 100m-500m CPU and 128Mi-1Gi: a quarter ask
// for a zone, and one in ten tolerates the churn's taint.
func (c *chaos) createPods(ctx context.Context, n int) error {
	pods := make([]*v1.Pod, n)
	for i := range pods {
		spec := PodSpec{
			CPU:    fmt.Sprintf("%dm", 100*(1+c.rng.IntN(5))),
			Memory: fmt.Sprintf("%dMi", 128*(1+c.rng.IntN(8))),
		}
		if c.rng.IntN(4) == 0 {
			spec.NodeSelector = map[string]string{"zone": chaosZones[c.rng.IntN(len(chaosZones))]}
		}
		if c.rng.IntN(10) == 0 {
			spec.Tolerations = []v1.Toleration{{Key: chaosTaint.Key, Operator: v1.TolerationOpExists, Effect: chaosTaint.Effect}}
		}
		if c.sched.Chapter >= PreemptionChapter {
			c.prioritize(&spec)
		}
		pods[i] = MakePod(c.ns, fmt.Sprintf("pod-%05d", c.report.Pods+i), spec)
		c.pods[pods[i].Name] = pods[i]
	}
	c.report.Pods += n
	return parallel(ctx, n, func(i int) error {
		_, err := c.r.Client.CoreV1().Pods(c.ns).Create(ctx, pods[i], metav1.CreateOptions{})
		return err
	})
}

// pick returns about Fraction of the names (at least one), at random.
func (c *chaos) pick(names []string) []string {
	n := max(1, int(float64(len(names))*c.cfg.Fraction))
	if n > len(names) {
		n = len(names)
	}
	shuffled := slices.Clone(names)
	c.rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	return shuffled[:n]
}

func (c *chaos) liveNodes() []string {
	var names []string
	for name, alive := range c.nodes {
		if alive {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// replaceNodes deletes some nodes, with the pods bound to them, and adds as
// many new ones.
func (c *chaos) replaceNodes(ctx context.Context) error {
	victims := c.pick(c.liveNodes())
	for _, name := range victims {
		if err := c.r.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting node %s: %w", name, err)
		}
		c.nodes[name] = false
		c.tainted = slices.DeleteFunc(c.tainted, func(n string) bool { return n == name })
	}
	c.report.NodesDeleted += len(victims)
	if err := c.podGC(ctx); err != nil {
		return err
	}
	return c.addNodes(ctx, len(victims))
}

// deletePending deletes some of the pods that are not bound yet.
func (c *chaos) deletePending(ctx context.Context) error {
	pods, err := c.currentPods(ctx)
	if err != nil {
		return err
	}
	var pending []string
	for name, p := range pods {
		if p.Spec.NodeName == "" {
			pending = append(pending, name)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	slices.Sort(pending)
	victims := c.pick(pending)
	for _, name := range victims {
		deleted, err := c.deletePod(ctx, name)
		if err != nil {
			return err
		}
		if deleted {
			c.report.PendingDeleted++
		}
	}
	return nil
}

// relabel moves some nodes to another zone.
func (c *chaos) relabel(ctx context.Context) error {
	for _, name := range c.pick(c.liveNodes()) {
		zone := chaosZones[c.rng.IntN(len(chaosZones))]
		patch := fmt.Sprintf(`{"metadata":{"labels":{"zone":%q}}}`, zone)
		if _, err := c.r.Client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("relabelling node %s: %w", name, err)
		}
		c.report.LabelChanges++
	}
	return nil
}

// taint puts the churn's NoSchedule taint on some nodes.
func (c *chaos) taint(ctx context.Context) error {
	for _, name := range c.pick(c.liveNodes()) {
		if slices.Contains(c.tainted, name) {
			continue
		}
		if err := c.setTaints(ctx, name, []v1.Taint{chaosTaint}); err != nil {
			return err
		}
		c.tainted = append(c.tainted, name)
		c.report.TaintChanges++
	}
	return nil
}

// untaint removes the taint from half of the tainted nodes.
func (c *chaos) untaint(ctx context.Context) error {
	half := c.tainted[:len(c.tainted)/2]
	for _, name := range half {
		if err := c.setTaints(ctx, name, nil); err != nil {
			return err
		}
		c.report.TaintChanges++
	}
	c.tainted = slices.Clone(c.tainted[len(half):])
	return nil
}

func (c *chaos) setTaints(ctx context.Context, name string, taints []v1.Taint) error {
	node, err := c.r.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	node.Spec.Taints = taints
	if _, err := c.r.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("tainting node %s: %w", name, err)
	}
	return nil
}

// restart creates OutagePods pods, then at once stops kube-apiserver under
// the running scheduler for a few seconds, and starts it again. Without
// work in flight, the scheduler would not notice: client-go's reflectors
// retry a refused watch without a word.
func (c *chaos) restart(ctx context.Context) error {
	if !c.cfg.Restart {
		return nil
	}
	if err := c.createPods(ctx, c.cfg.OutagePods); err != nil {
		return err
	}
	if info, err := os.Stat(c.report.Log); err == nil {
		c.outageFrom = info.Size()
	}
	c.outage[0] = time.Now()
	if err := c.r.Cluster.RestartAPIServer(c.cfg.Down); err != nil {
		return err
	}
	c.outage[1] = time.Now()
	c.report.Restarts++
	return nil
}

// outageLine is a line about a refused connection: a reflector's failed
// list or watch, or a failed Binding (in the scheduling decision), status
// patch or event write.
var outageLine = regexp.MustCompile(`^[IEW]\d{4} .*connection refused`)

// checkCache compares the scheduler's cache with the cluster once churn is
// over: no pod may stay assumed (a leaked assumed pod holds its node's room
// for ever), the cache must count every bound pod the cluster has and no
// other, and every node. The scheduler's informers may still be delivering
// the last events, so it polls until the two agree, for at most 30 s.
func (c *chaos) checkCache(ctx context.Context) {
	var got, want map[string]int
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := poll(ctx, "the scheduler's cache to match the cluster", func() (bool, string, error) {
		var err error
		if got, err = scrapeCacheSize(ctx, c.proc.Addr(), c.sched.IsKubeScheduler()); err != nil {
			return false, "", err
		}
		if want, err = c.clusterSize(ctx); err != nil {
			return false, "", err
		}
		return maps.Equal(got, want), fmt.Sprintf("scheduler_cache_size %v, cluster %v", got, want), nil
	})
	c.report.Cache = got
	if err != nil {
		c.violate("%v", err)
	}
}

// clusterSize counts what the scheduler's cache should hold: no assumed
// pod, every pod bound to a node that has not terminated (the scheduler's
// pod informer leaves terminated pods out), and every node, including a
// deleted one that bound pods still name.
func (c *chaos) clusterSize(ctx context.Context) (map[string]int, error) {
	pods, err := c.r.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	nodes, err := c.r.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	// The cache keeps a NodeInfo for a deleted node while pods bound to it
	// remain (PodGC deletes them later), and counts it, as upstream does.
	names := map[string]bool{}
	for _, n := range nodes.Items {
		names[n.Name] = true
	}
	bound := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			bound++
			names[p.Spec.NodeName] = true
		}
	}
	return map[string]int{"assumed_pods": 0, "pods": bound, "nodes": len(names)}, nil
}

// scrapeCacheSize reads scheduler_cache_size from a scheduler's /metrics.
func scrapeCacheSize(ctx context.Context, addr string, kubeScheduler bool) (map[string]int, error) {
	page, err := GetMetrics(ctx, addr, kubeScheduler)
	if err != nil {
		return nil, err
	}
	return parseCacheSize(bytes.NewReader(page))
}

// cacheSizeLine matches one sample of scheduler_cache_size.
var cacheSizeLine = regexp.MustCompile(`^scheduler_cache_size\{type="([a-z_]+)"\} ([0-9.e+]+)$`)

// parseCacheSize reads the samples of scheduler_cache_size from a page in
// Prometheus' text format. A page without all three types is an error.
func parseCacheSize(r io.Reader) (map[string]int, error) {
	out := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		m := cacheSizeLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, err
		}
		out[m[1]] = int(v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, t := range []string{"assumed_pods", "pods", "nodes"} {
		if _, ok := out[t]; !ok {
			return nil, fmt.Errorf("no scheduler_cache_size{type=%q} on the metrics page", t)
		}
	}
	return out, nil
}

// countLines counts the lines of the file matching re from offset from on.
func countLines(path string, from int64, re *regexp.Regexp) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		if re.Match(sc.Bytes()) {
			n++
		}
	}
	return n, sc.Err()
}

// checkBindings reads the audit log and the scheduler's log: each pod was
// bound at most once, each pod still bound has its Binding, and no Binding
// was issued after the scheduler had logged its node's deletion.
func (c *chaos) checkBindings() {
	seen, binds, err := readChaosLog(c.report.Log, c.ns, c.podGroups())
	if err != nil {
		c.violate("reading the scheduler log: %v", err)
		return
	}
	bindings, nodeChanges, err := readAudit(c.r.Cluster.AuditLog, c.ns, c.start)
	if err != nil {
		c.violate("reading the audit log: %v", err)
		return
	}
	c.report.Bindings, c.report.Refused = checkBoundOnce(c.run, bindings, c.violate)
	for _, b := range bindings {
		if b.Code < 300 && !slices.ContainsFunc(nodesAt(nodeChanges[b.Node], b.At), func(n *v1.Node) bool { return n != nil }) {
			c.report.LateBindings++
		}
	}
	violations, inFlight := lateBinds(seen, binds)
	c.report.InFlight = inFlight
	for _, v := range violations {
		c.violate("%s", v)
	}
}

// checkBoundOnce checks the run's Bindings in the audit log: at most one
// accepted per pod, and one for every pod still bound. It returns how many
// the apiserver accepted and refused.
func checkBoundOnce(ru *run, bindings []binding, violate func(string, ...any)) (accepted, refused int) {
	byPod := map[string][]binding{}
	for _, b := range bindings {
		if b.Code >= 300 {
			refused++
			continue
		}
		accepted++
		byPod[b.Pod] = append(byPod[b.Pod], b)
	}
	for _, pod := range slices.Sorted(maps.Keys(byPod)) {
		if bs := byPod[pod]; len(bs) > 1 {
			violate("pod %s was bound %d times (to %s, then %s)", pod, len(bs), bs[0].Node, bs[1].Node)
		}
	}
	pods, err := ru.r.Client.CoreV1().Pods(ru.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		violate("%v", err)
		return accepted, refused
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && len(byPod[p.Name]) == 0 && !mayHaveLanded(bindings, p.Name, p.Spec.NodeName) {
			violate("pod %s is bound to %s, but no Binding was accepted", p.Name, p.Spec.NodeName)
		}
	}
	return accepted, refused
}

// mayHaveLanded says whether a Binding of pod to node ended in a server
// error (5xx). When the client goes away mid-request, as the scheduler's
// connections do when the outage cuts them, the apiserver answers 504
// ("context canceled") to a request whose write to etcd may still
// complete: the pod is then bound although no Binding was accepted, and
// the scheduler, which saw an error, tries again and hears that the pod is
// already assigned.
func mayHaveLanded(bindings []binding, pod, node string) bool {
	return slices.ContainsFunc(bindings, func(b binding) bool {
		return b.Pod == pod && b.Node == node && b.Code >= 500
	})
}

// checkOutage counts what the scheduler said about the apiserver being
// gone. That it went on is what the other checks show: the process never
// exited, and the pods created just before the outage were bound.
func (c *chaos) checkOutage() {
	if c.report.Restarts == 0 {
		return
	}
	n, err := countLines(c.report.Log, c.outageFrom, outageLine)
	if err != nil {
		c.violate("reading the scheduler log: %v", err)
		return
	}
	c.report.OutageErrors = n
}

// logBind is a Binding the scheduler logged it was about to issue, with
// the start of the scheduling cycle that chose the node.
type logBind struct {
	Pod, Node string
	Cycle, At time.Time
}

var (
	klogTime        = regexp.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})`)
	nodeDeletedLine = regexp.MustCompile(`"Delete event for node" node="([^"]+)"`)
	bindLine        = regexp.MustCompile(`"Attempting to bind pod to node"`)
	// memberAttemptLine is a pod-group member's line in its group's cycle.
	memberAttemptLine = regexp.MustCompile(`"Attempting to schedule a pod belonging to a pod group"`)
	podKey            = regexp.MustCompile(` pod="([^"]+)"`)
	podGroupKey       = regexp.MustCompile(` podGroup="([^"]+)"`)
	nodeKey           = regexp.MustCompile(` node="([^"]+)"`)
)

// readChaosLog reads a scheduler's -v=3 log. It returns when the scheduler
// saw each node's deletion ("Delete event for node"), and each Binding of a
// pod of namespace ns it was about to issue ("Attempting to bind pod to
// node", logged by the scheduler and again by DefaultBinder: counted once
// per cycle) with the start of its cycle ("Attempting to schedule pod", or
// for a member of a pod group, which groupOf names, its group's
// "Attempting to schedule pod group").
func readChaosLog(path, ns string, groupOf map[string]string) (map[string]time.Time, []logBind, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	seen := map[string]time.Time{}
	cycle := map[string]time.Time{}    // pod → start of its latest cycle
	recorded := map[string]time.Time{} // pod → cycle of its latest Binding
	// groupStart is each pod group's latest cycle. Once the log has shown
	// a line per member (kube-scheduler at -v=3, the chapters at -v=4), a
	// group's cycle is only the members it names: kube-scheduler starts a
	// new cycle for the members whose Binding failed while the others of
	// the last one still wait at Permit or bind, and their Bindings belong
	// to the cycle that chose them.
	groupStart := map[string]time.Time{}
	memberLines := false
	var binds []logBind
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		m := klogTime.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		// On this machine's clock, as the audit log's times are.
		at := klogTimeLocal(line)
		if at.IsZero() {
			continue
		}
		switch {
		case nodeDeletedLine.MatchString(line):
			node := nodeDeletedLine.FindStringSubmatch(line)[1]
			if _, ok := seen[node]; !ok {
				seen[node] = at
			}
		case memberAttemptLine.MatchString(line):
			// A member's line in its group's cycle: the group's line,
			// before it, began the member's cycle.
			memberLines = true
			p, g := podKey.FindStringSubmatch(line), podGroupKey.FindStringSubmatch(line)
			if p != nil && g != nil {
				if start, ok := groupStart[g[1]]; ok {
					cycle[p[1]] = start
				}
			}
		case attemptLine.MatchString(line):
			cycle[attemptLine.FindStringSubmatch(line)[1]] = at
		case groupAttemptLine.MatchString(line):
			g := groupAttemptLine.FindStringSubmatch(line)[1]
			groupStart[g] = at
			if memberLines {
				continue
			}
			// A pod group's cycle is all its members' (chapters 11 on at
			// -v=3 log no line per member).
			for pod, group := range groupOf {
				if ns+"/"+group == g {
					cycle[ns+"/"+pod] = at
				}
			}
		case bindLine.MatchString(line):
			p, n := podKey.FindStringSubmatch(line), nodeKey.FindStringSubmatch(line)
			if p == nil || n == nil || !strings.HasPrefix(p[1], ns+"/") {
				continue
			}
			if c, ok := recorded[p[1]]; ok && c.Equal(cycle[p[1]]) {
				continue
			}
			recorded[p[1]] = cycle[p[1]]
			binds = append(binds, logBind{Pod: strings.TrimPrefix(p[1], ns+"/"), Node: n[1], Cycle: cycle[p[1]], At: at})
		}
	}
	return seen, binds, sc.Err()
}

// lateBinds sorts the Bindings to nodes the scheduler saw deleted. A cycle
// that started after the scheduler had seen the deletion must not have
// chosen the node: those are violations. A Binding issued after the
// deletion by a cycle that started before it was already on its way, as in
// kube-scheduler, whose binding cycle does not look at the node again; it
// is counted in inFlight, and PodGC deletes its pod.
func lateBinds(seen map[string]time.Time, binds []logBind) (violations []string, inFlight int) {
	for _, b := range binds {
		deleted, ok := seen[b.Node]
		switch {
		case !ok || !b.At.After(deleted):
		case b.Cycle.After(deleted):
			violations = append(violations, fmt.Sprintf("pod %s: a cycle started %s after the scheduler saw node %s deleted chose it", b.Pod, b.Cycle.Sub(deleted), b.Node))
		default:
			inFlight++
		}
	}
	return violations, inFlight
}

// parallel runs do(0..n-1) on eight workers and returns the first error.
func parallel(ctx context.Context, n int, do func(i int) error) error {
	var (
		wg   sync.WaitGroup
		next atomic.Int64
		mu   sync.Mutex
		errs []error
	)
	for range min(8, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return errors.Join(ctx.Err())
}
