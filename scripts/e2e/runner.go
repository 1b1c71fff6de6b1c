package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minisched/scripts/cluster"
)

// DefaultSchedulerName is the name every chapter answers to by default.
const DefaultSchedulerName = "mini-scheduler"

// Scheduler says how to start the scheduler under test.
type Scheduler struct {
	// Chapter is the chapter number; it decides which invariants apply,
	// and which messages (Condition.For).
	Chapter int
	// Label names the scheduler in reports ("01-initial").
	Label string
	// Command starts the scheduler; the runner adds Args, then the
	// scenario's schedulerArgs.
	Command []string
	// Args returns the flags that connect the scheduler to the cluster,
	// put its HTTP server on addr, and pass on a scenario's
	// schedulerArgs (extra), which are the chapters' flags. Nil means a
	// chapter's: --kubeconfig, --metrics-bind-address, then extra.
	Args func(kubeconfig, addr string, extra []string) []string
	// Upstream marks kube-scheduler replaying a chapter's scenario (make
	// compare): it plays in a namespace of its own, with a log of its own.
	Upstream bool
	// KubeScheduler marks a scheduler that is kube-scheduler, built by
	// upstream or by chapter 13 with its plugins: it logs as kube-scheduler
	// does (no "Scheduling decision" lines to count), serves its metrics
	// over HTTPS, and exits 1 when stopped without leader election.
	KubeScheduler bool
}

// IsKubeScheduler says whether the scheduler is kube-scheduler: upstream's
// or chapter 13's.
func (s Scheduler) IsKubeScheduler() bool { return s.Upstream || s.KubeScheduler }

// Runner plays scenarios on one cluster.
type Runner struct {
	Cluster *cluster.Cluster
	Client  kubernetes.Interface
	// LogDir receives one scheduler log per scenario.
	LogDir string
	// OnePodPerStep makes every createPods step wait until its pods are
	// bound or marked unschedulable, as `make compare` needs.
	OnePodPerStep bool
}

// Result is the outcome of one scenario.
type Result struct {
	Scenario string
	Passed   bool
	// Problems lists what went wrong; empty when Passed.
	Problems []string
	Duration time.Duration
	// Placements maps every pod to its node ("" when unbound).
	Placements map[string]string
	// Unschedulable maps every unbound pod to its PodScheduled=False
	// message, if it has one.
	Unschedulable map[string]string
	// Bindings is the number of Binding requests the apiserver received.
	Bindings int
	// Attempts is the number of scheduling attempts the scheduler logged
	// (0 for kube-scheduler, whose log has no such line).
	Attempts int
	// Preempted lists, sorted, the pods deleted during the scenario that no
	// deletePods step deleted: the scheduler's preemption victims.
	Preempted []string
	// Nominations maps every pod ever nominated to the nodes it was
	// nominated to, in order.
	Nominations map[string][]string
	// Log is the scheduler's log file.
	Log string
}

// run is one scenario in progress.
type run struct {
	r       *Runner
	sc      *Scenario
	sched   Scheduler
	ns      string
	start   time.Time
	pods    map[string]*v1.Pod // every pod created, by name, as created
	deleted map[string]bool
	nodes   map[string]bool
	classes []string
	// runtimeClasses are the RuntimeClasses the scenario created.
	runtimeClasses []string
	proc           *Process
	// history is the watch on the namespace, from before the first step.
	history *podHistory
}

// newRun starts a run of sc by sched in namespace ns, now.
func (r *Runner) newRun(sc *Scenario, sched Scheduler, ns string) *run {
	return &run{
		r: r, sc: sc, sched: sched, ns: ns, start: time.Now(),
		pods: map[string]*v1.Pod{}, deleted: map[string]bool{}, nodes: map[string]bool{},
	}
}

// Run plays one scenario against one scheduler: a fresh namespace, no nodes,
// a fresh scheduler process. It always cleans up after itself.
func (r *Runner) Run(ctx context.Context, sc *Scenario, sched Scheduler) Result {
	timeout := time.Duration(sc.TimeoutSeconds) * time.Second
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ru := r.newRun(sc, sched, fmt.Sprintf("ch%02d-%s", sched.Chapter, sc.Name))
	if sched.Upstream {
		ru.ns += "-upstream"
	}
	res := Result{Scenario: sc.Name, Log: filepath.Join(r.LogDir, ru.ns+".log")}
	problems := ru.play(ctx, res.Log)
	if ru.history != nil {
		defer ru.history.Stop()
	}
	if ru.proc != nil {
		if len(problems) == 0 {
			ru.waitBindingsReturned(res.Log)
		}
		if err := ru.proc.StopAs(sched); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if !sched.IsKubeScheduler() {
		attempts, err := countAttempts(res.Log, ru.ns)
		if err != nil {
			problems = append(problems, err.Error())
		}
		for _, n := range attempts {
			res.Attempts += n
		}
		problems = append(problems, ru.checkAttempts(attempts)...)
		searched, err := readFeasible(res.Log, ru.ns)
		if err != nil {
			problems = append(problems, err.Error())
		}
		problems = append(problems, ru.checkSearched(searched)...)
	}
	res.Placements, _ = ru.placements(context.Background())
	res.Unschedulable = ru.unschedulableMessages(context.Background())
	if ru.history != nil {
		res.Nominations = ru.history.Nominations()
		res.Preempted = ru.preempted()
	}
	if len(problems) == 0 {
		checked, n := ru.checkInvariants(context.Background())
		problems = append(problems, checked...)
		problems = append(problems, ru.checkPreemption()...)
		res.Bindings = n
	}
	if err := ru.cleanup(); err != nil {
		problems = append(problems, "cleanup: "+err.Error())
	}
	res.Problems = problems
	res.Passed = len(problems) == 0
	res.Duration = time.Since(ru.start)
	return res
}

func (ru *run) play(ctx context.Context, logPath string) []string {
	if _, err := ru.r.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ru.ns}}, metav1.CreateOptions{}); err != nil {
		return []string{"creating the namespace: " + err.Error()}
	}
	history, err := watchPods(ctx, ru.r.Client, ru.ns)
	if err != nil {
		return []string{err.Error()}
	}
	ru.history = history
	startsLater := false
	for _, st := range ru.sc.Steps {
		if st.StartScheduler != nil {
			startsLater = true
		}
	}
	if !startsLater {
		if err := ru.startScheduler(logPath); err != nil {
			return []string{err.Error()}
		}
	}
	for i, st := range ru.sc.Steps {
		if err := ru.step(ctx, st, logPath); err != nil {
			return []string{fmt.Sprintf("step %d: %v", i+1, err)}
		}
		if ru.proc != nil && ru.proc.Exited() {
			return []string{fmt.Sprintf("the scheduler exited during step %d; see %s", i+1, logPath)}
		}
	}
	if err := ru.waitForExpectations(ctx); err != nil {
		return []string{err.Error()}
	}
	if ru.proc != nil && ru.proc.Exited() {
		return []string{"the scheduler exited before the scenario ended; see " + logPath}
	}
	return nil
}

func (ru *run) startScheduler(logPath string) error {
	proc, err := StartScheduler(ru.sched, ru.r.Cluster.Kubeconfig, ru.sc.SchedulerArgs, logPath)
	if err != nil {
		return err
	}
	ru.proc = proc
	return proc.WaitServing()
}

func (ru *run) step(ctx context.Context, st Step, logPath string) error {
	client := ru.r.Client
	switch {
	case st.StartScheduler != nil:
		return ru.startScheduler(logPath)
	case st.CreateNodes != nil:
		for _, spec := range st.CreateNodes {
			for _, name := range expand(spec.Name, spec.Count) {
				if _, err := client.CoreV1().Nodes().Create(ctx, MakeNode(name, spec), metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("creating node %s: %w", name, err)
				}
				ru.nodes[name] = true
			}
		}
	case st.CreatePods != nil:
		var created []string
		for _, spec := range st.CreatePods {
			for _, name := range expand(spec.Name, spec.Count) {
				pod, err := client.CoreV1().Pods(ru.ns).Create(ctx, MakePod(ru.ns, name, spec), metav1.CreateOptions{})
				if err != nil {
					return fmt.Errorf("creating pod %s: %w", name, err)
				}
				ru.pods[name] = pod
				created = append(created, name)
			}
		}
		if ru.r.OnePodPerStep && ru.proc != nil {
			return ru.waitFor(ctx, &Wait{Pods: created, Decided: true})
		}
	case st.CreatePodGroups != nil:
		for _, spec := range st.CreatePodGroups {
			pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ru.ns, Name: spec.Name}}
			if spec.MinCount > 0 {
				pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: spec.MinCount}
			} else {
				pg.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
			}
			switch spec.DisruptionMode {
			case "Single":
				pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
			case "All":
				pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
			}
			if _, err := client.SchedulingV1beta1().PodGroups(ru.ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating pod group %s: %w", spec.Name, err)
			}
		}
	case st.CreatePriorityClasses != nil:
		for _, pc := range st.CreatePriorityClasses {
			name := ru.ns + "-" + pc.Name
			obj := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: pc.Value}
			if pc.PreemptionPolicy != "" {
				policy := v1.PreemptionPolicy(pc.PreemptionPolicy)
				obj.PreemptionPolicy = &policy
			}
			if err := CreatePriorityClass(ctx, client, ru.ns, obj); err != nil {
				return err
			}
			ru.classes = append(ru.classes, name)
		}
	case st.CreateRuntimeClasses != nil:
		for _, spec := range st.CreateRuntimeClasses {
			rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: scopedName(ru.ns, spec.Name)}, Handler: "runc",
				Overhead: &nodev1.Overhead{PodFixed: quantityList(spec.CPU, spec.Memory)}}
			// No wait as for a PriorityClass: the RuntimeClass admission
			// plugin asks the apiserver when its lister does not know a
			// class yet (admission.go of plugin/pkg/admission/runtimeclass).
			if _, err := client.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating runtime class %s: %w", spec.Name, err)
			}
			ru.runtimeClasses = append(ru.runtimeClasses, rc.Name)
		}
	case st.CreatePodDisruptionBudgets != nil:
		for _, spec := range st.CreatePodDisruptionBudgets {
			if err := ru.createPDB(ctx, spec); err != nil {
				return err
			}
		}
	case st.DeletePods != nil:
		for _, pattern := range st.DeletePods {
			for _, name := range ru.podNames(pattern) {
				if err := client.CoreV1().Pods(ru.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
					return fmt.Errorf("deleting pod %s: %w", name, err)
				}
				ru.deleted[name] = true
			}
		}
	case st.DeleteNodes != nil:
		for _, name := range st.DeleteNodes {
			if err := client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				return fmt.Errorf("deleting node %s: %w", name, err)
			}
			delete(ru.nodes, name)
		}
	case st.UpdateNode != nil:
		return ru.updateNode(ctx, st.UpdateNode)
	case st.UpdatePod != nil:
		return ru.updatePod(ctx, st.UpdatePod)
	case st.WaitFor != nil:
		return ru.waitFor(ctx, st.WaitFor)
	case st.Sleep != "":
		d, _ := time.ParseDuration(st.Sleep)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	case st.AssertUnbound != nil:
		placed, err := ru.placements(ctx)
		if err != nil {
			return err
		}
		for _, pattern := range st.AssertUnbound {
			for _, name := range ru.podNames(pattern) {
				if placed[name] != "" {
					return fmt.Errorf("pod %s is bound to %s, want it unbound", name, placed[name])
				}
			}
		}
	}
	return nil
}

// createPDB creates a PodDisruptionBudget, then writes the status the
// disruption controller would, which is all the scheduler reads of it.
func (ru *run) createPDB(ctx context.Context, spec PDBSpec) error {
	pdbs := ru.r.Client.PolicyV1().PodDisruptionBudgets(ru.ns)
	maxUnavailable := intstr.FromInt32(spec.DisruptionsAllowed)
	pdb, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: spec.MatchLabels},
			MaxUnavailable: &maxUnavailable,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating PodDisruptionBudget %s: %w", spec.Name, err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation,
		DisruptionsAllowed: spec.DisruptionsAllowed,
	}
	if _, err := pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting the status of PodDisruptionBudget %s: %w", spec.Name, err)
	}
	return nil
}

func (ru *run) updateNode(ctx context.Context, u *NodeUpdate) error {
	nodes := ru.r.Client.CoreV1().Nodes()
	// KWOK writes the node too (its status, right after creation), so an
	// update may meet a newer version: read it again and retry.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, u.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Labels = applyLabels(node.Labels, u.Labels)
		if u.Taints != nil {
			node.Spec.Taints = *u.Taints
		}
		if u.Unschedulable != nil {
			node.Spec.Unschedulable = *u.Unschedulable
		}
		_, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating node %s: %w", u.Name, err)
	}
	if u.CPU != "" {
		q, err := resource.ParseQuantity(u.CPU)
		if err != nil {
			return err
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := nodes.Get(ctx, u.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node.Status.Allocatable[v1.ResourceCPU] = q
			node.Status.Capacity[v1.ResourceCPU] = q
			_, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("updating the status of node %s: %w", u.Name, err)
		}
	}
	return nil
}

func (ru *run) updatePod(ctx context.Context, u *PodUpdate) error {
	pods := ru.r.Client.CoreV1().Pods(ru.ns)
	pod, err := pods.Get(ctx, u.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pod.Labels = applyLabels(pod.Labels, u.Labels)
	if u.RemoveSchedulingGates {
		pod.Spec.SchedulingGates = nil
	}
	if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating pod %s: %w", u.Name, err)
	}
	return nil
}

// applyLabels sets the labels of changes on labels; a nil value removes it.
func applyLabels(labels map[string]string, changes map[string]*string) map[string]string {
	for k, v := range changes {
		if v == nil {
			delete(labels, k)
			continue
		}
		if labels == nil {
			labels = map[string]string{}
		}
		labels[k] = *v
	}
	return labels
}

// podNames expands a name or glob to the pods created so far.
func (ru *run) podNames(pattern string) []string {
	var out []string
	for name := range ru.pods {
		if ok, _ := path.Match(pattern, name); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// poll calls cond every 50ms until it returns true, an error, or ctx ends.
func poll(ctx context.Context, what string, cond func() (bool, string, error)) error {
	return pollEvery(ctx, 50*time.Millisecond, what, cond)
}

// pollEvery calls cond every interval until it returns true, an error, or
// ctx ends.
func pollEvery(ctx context.Context, interval time.Duration, what string, cond func() (bool, string, error)) error {
	last := ""
	for {
		ok, state, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		last = state
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for %s: %s", what, last)
		case <-time.After(interval):
		}
	}
}

func (ru *run) waitFor(ctx context.Context, w *Wait) error {
	var names []string
	for _, p := range w.Pods {
		names = append(names, ru.podNames(p)...)
	}
	what := fmt.Sprintf("pods %s to be bound", strings.Join(names, ", "))
	switch {
	case w.Condition != nil:
		what = fmt.Sprintf("pods %s to have %s", strings.Join(names, ", "), w.Condition)
	case w.Nominated != "":
		what = fmt.Sprintf("pods %s to be nominated to %s", strings.Join(names, ", "), w.Nominated)
	case w.Deleted:
		what = fmt.Sprintf("pods %s to be deleted", strings.Join(names, ", "))
	case w.Decided:
		what = fmt.Sprintf("pods %s to be bound, or unschedulable with no preemption under way", strings.Join(names, ", "))
	}
	return poll(ctx, what, func() (bool, string, error) {
		pods, err := ru.r.Client.CoreV1().Pods(ru.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		byName := map[string]*v1.Pod{}
		terminating := ""
		for i := range pods.Items {
			byName[pods.Items[i].Name] = &pods.Items[i]
			if pods.Items[i].DeletionTimestamp != nil {
				terminating = pods.Items[i].Name
			}
		}
		for _, n := range names {
			p := byName[n]
			if w.Deleted {
				if p != nil {
					return false, "pod " + n + " still exists", nil
				}
				continue
			}
			if p == nil {
				return false, "", fmt.Errorf("pod %s no longer exists", n)
			}
			if w.Bound && p.Spec.NodeName == "" {
				return false, "pod " + n + " is unbound", nil
			}
			if w.Nominated != "" && !ru.history.NominatedTo(n, w.Nominated) {
				return false, fmt.Sprintf("pod %s has not been nominated to %s (nominated: %v)", n, w.Nominated, ru.history.Nominations()[n]), nil
			}
			if w.Decided && p.Spec.NodeName == "" {
				switch {
				case !(&Condition{Type: string(v1.PodScheduled), Status: string(v1.ConditionFalse)}).matches(p):
					return false, "pod " + n + " is neither bound nor marked unschedulable", nil
				case p.Status.NominatedNodeName != "":
					return false, fmt.Sprintf("pod %s is nominated to %s and not yet bound", n, p.Status.NominatedNodeName), nil
				case terminating != "":
					return false, fmt.Sprintf("pod %s is unschedulable while pod %s is terminating", n, terminating), nil
				}
			}
			if w.Condition != nil && !w.Condition.For(ru.sched.Chapter).matches(p) {
				return false, fmt.Sprintf("pod %s has conditions %s", n, conditionsString(p)), nil
			}
		}
		return true, "", nil
	})
}

// waitForExpectations waits until every expected placement holds, then
// until every pod expected unbound carries its expected condition.
func (ru *run) waitForExpectations(ctx context.Context) error {
	return poll(ctx, "the expected outcome", func() (bool, string, error) {
		pods, err := ru.r.Client.CoreV1().Pods(ru.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		byName := map[string]*v1.Pod{}
		for i := range pods.Items {
			byName[pods.Items[i].Name] = &pods.Items[i]
		}
		for _, pattern := range slices.Sorted(maps.Keys(ru.sc.Expect.Bound)) {
			allowed := ru.sc.Expect.Bound[pattern]
			for _, name := range ru.podNames(pattern) {
				p := byName[name]
				switch {
				case p == nil:
					return false, "", fmt.Errorf("pod %s, expected bound, no longer exists", name)
				case p.Spec.NodeName == "":
					return false, fmt.Sprintf("pod %s is unbound (%s)", name, conditionsString(p)), nil
				case !allowed.Allows(p.Spec.NodeName):
					return false, "", fmt.Errorf("pod %s is bound to %s, want %s", name, p.Spec.NodeName, strings.Join(allowed, " or "))
				}
			}
		}
		deleted := ru.history.Deleted()
		for _, pattern := range ru.sc.Expect.Preempted {
			for _, name := range ru.podNames(pattern) {
				if p := byName[name]; p != nil {
					return false, fmt.Sprintf("pod %s, expected preempted, still exists (on %q)", name, p.Spec.NodeName), nil
				}
				// The List may see the deletion before the watch does.
				if deleted[name] == nil {
					return false, fmt.Sprintf("the watch has not yet seen pod %s deleted", name), nil
				}
			}
		}
		for _, pattern := range slices.Sorted(maps.Keys(ru.sc.Expect.Unbound)) {
			cond := ru.sc.Expect.Unbound[pattern].For(ru.sched.Chapter)
			for _, name := range ru.podNames(pattern) {
				p := byName[name]
				switch {
				case p == nil:
					return false, "", fmt.Errorf("pod %s, expected unbound, no longer exists", name)
				case p.Spec.NodeName != "":
					return false, "", fmt.Errorf("pod %s is bound to %s, want it unbound", name, p.Spec.NodeName)
				case cond != nil && !cond.matches(p):
					return false, fmt.Sprintf("pod %s has conditions %s, want %s", name, conditionsString(p), cond), nil
				}
			}
		}
		return true, "", nil
	})
}

func (c *Condition) matches(p *v1.Pod) bool {
	for _, pc := range p.Status.Conditions {
		if string(pc.Type) != c.Type {
			continue
		}
		return (c.Status == "" || string(pc.Status) == c.Status) &&
			(c.Reason == "" || pc.Reason == c.Reason) &&
			(c.Message == "" || pc.Message == c.Message)
	}
	return false
}

func (c *Condition) String() string {
	s := c.Type + "=" + c.Status
	if c.Reason != "" {
		s += " reason " + c.Reason
	}
	if c.Message != "" {
		s += fmt.Sprintf(" message %q", c.Message)
	}
	return s
}

func conditionsString(p *v1.Pod) string {
	var parts []string
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			parts = append(parts, fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if len(parts) == 0 {
		return "no PodScheduled condition"
	}
	return strings.Join(parts, "; ")
}

func (ru *run) unschedulableMessages(ctx context.Context) map[string]string {
	pods, err := ru.r.Client.CoreV1().Pods(ru.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if p.Spec.NodeName == "" && c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				out[p.Name] = c.Message
			}
		}
	}
	return out
}

func (ru *run) placements(ctx context.Context) (map[string]string, error) {
	pods, err := ru.r.Client.CoreV1().Pods(ru.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = p.Spec.NodeName
	}
	return out, nil
}

// cleanup removes the scenario's pods, nodes, PDBs and priority classes, and
// waits until they are gone, so the next scenario starts empty. Pods are
// deleted at once (there is no kubelet to wait for).
func (ru *run) cleanup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := ru.r.Client
	zero := int64(0)
	var errs []error
	if err := client.CoreV1().Pods(ru.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		errs = append(errs, err)
	}
	if err := client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		errs = append(errs, err)
	}
	if err := client.PolicyV1().PodDisruptionBudgets(ru.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		errs = append(errs, err)
	}
	for _, pc := range ru.classes {
		if err := client.SchedulingV1().PriorityClasses().Delete(ctx, pc, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	for _, rc := range ru.runtimeClasses {
		if err := client.NodeV1().RuntimeClasses().Delete(ctx, rc, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	// Without a namespace controller a deleted namespace never goes away;
	// the empty namespace stays, and names are never reused within a run.
	errs = append(errs, poll(ctx, "pods and nodes to be deleted", func() (bool, string, error) {
		pods, err := client.CoreV1().Pods(ru.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		return len(pods.Items) == 0 && len(nodes.Items) == 0, fmt.Sprintf("%d pods, %d nodes left", len(pods.Items), len(nodes.Items)), nil
	}))
	return errors.Join(errs...)
}

// MakeNode returns the KWOK node spec describes. Its quantities must
// parse (a scenario's are checked when it is read; make watch checks its
// form's).
func MakeNode(name string, spec NodeSpec) *v1.Node {
	or := func(v, def string) resource.Quantity {
		if v == "" {
			v = def
		}
		return resource.MustParse(v)
	}
	resources := v1.ResourceList{
		v1.ResourceCPU:    or(spec.CPU, "4"),
		v1.ResourceMemory: or(spec.Memory, "16Gi"),
		v1.ResourcePods:   or(spec.Pods, "110"),
	}
	labels := map[string]string{v1.LabelHostname: name}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{cluster.FakeNodeAnnotation: cluster.FakeNodeAnnotationValue},
		},
		Spec:   v1.NodeSpec{Taints: spec.Taints, Unschedulable: spec.Unschedulable},
		Status: v1.NodeStatus{Allocatable: resources, Capacity: resources.DeepCopy()},
	}
}

// MakePod returns the pod spec describes, in namespace ns. Its
// quantities must parse, as MakeNode's.
func MakePod(ns, name string, spec PodSpec) *v1.Pod {
	schedulerName := spec.SchedulerName
	if schedulerName == "" {
		schedulerName = DefaultSchedulerName
	}
	requests := v1.ResourceList{}
	if spec.CPU != "" {
		requests[v1.ResourceCPU] = resource.MustParse(spec.CPU)
	}
	if spec.Memory != "" {
		requests[v1.ResourceMemory] = resource.MustParse(spec.Memory)
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: spec.Labels, Annotations: spec.Annotations},
		Spec: v1.PodSpec{
			SchedulerName:     schedulerName,
			NodeSelector:      spec.NodeSelector,
			Affinity:          spec.Affinity,
			Tolerations:       spec.Tolerations,
			PriorityClassName: priorityClassName(ns, spec.PriorityClassName),
			Containers: []v1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: requests},
			}},
		},
	}
	if len(spec.Containers) > 0 {
		pod.Spec.Containers = nil
		for _, c := range spec.Containers {
			pod.Spec.Containers = append(pod.Spec.Containers, makeContainer(c))
		}
	}
	for _, c := range spec.InitContainers {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, makeContainer(c))
	}
	if spec.PodCPU != "" || spec.PodMemory != "" {
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: quantityList(spec.PodCPU, spec.PodMemory)}
	}
	if spec.RuntimeClassName != "" {
		rc := scopedName(ns, spec.RuntimeClassName)
		pod.Spec.RuntimeClassName = &rc
	}
	for _, g := range spec.SchedulingGates {
		pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, v1.PodSchedulingGate{Name: g})
	}
	if spec.PodGroup != "" {
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &spec.PodGroup}
	}
	return pod
}

// makeContainer is a scenario's container: a pause container with the
// requests given, restarting always if it is a sidecar.
func makeContainer(c ContainerSpec) v1.Container {
	out := v1.Container{Name: c.Name, Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: quantityList(c.CPU, c.Memory)}}
	if c.Sidecar {
		always := v1.ContainerRestartPolicyAlways
		out.RestartPolicy = &always
	}
	return out
}

// quantityList is the CPU and memory given, as a resource list; an empty
// one is left out.
func quantityList(cpu, memory string) v1.ResourceList {
	out := v1.ResourceList{}
	if cpu != "" {
		out[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		out[v1.ResourceMemory] = resource.MustParse(memory)
	}
	return out
}

// scopedName scopes a scenario's name of a cluster-wide object
// (a RuntimeClass) to its namespace.
func scopedName(ns, name string) string { return ns + "-" + name }

// priorityClassName scopes a scenario's PriorityClass names to its
// namespace, since PriorityClasses are cluster-wide.
func priorityClassName(ns, name string) string {
	if name == "" {
		return ""
	}
	return ns + "-" + name
}

// Process is a running scheduler.
type Process struct {
	cmd     *exec.Cmd
	addr    string // where its HTTP server listens
	logPath string
	done    chan struct{}
	err     error
}

// StartScheduler starts a scheduler connected to the cluster of kubeconfig,
// with extra flags, its output going to logPath.
//
// The address is chosen free and then handed to the process, which binds
// it only once it has set up: kube-scheduler first generates its
// self-signed serving certificate, which takes seconds on a busy machine.
// Another lane of the suite, or another tool, may take the address in
// between. So StartScheduler waits until the process serves (WaitServing)
// and starts it again on another address when it exited because its
// address was in use, up to five times.
func StartScheduler(s Scheduler, kubeconfig string, extra []string, logPath string) (*Process, error) {
	for attempt := 1; ; attempt++ {
		addr, err := pickAddress()
		if err != nil {
			return nil, err
		}
		p, err := startScheduler(s, kubeconfig, extra, logPath, addr)
		if err != nil {
			return nil, err
		}
		if err := p.WaitServing(); err == nil || attempt == 5 || !p.lostItsAddress() {
			return p, nil // the caller's WaitServing reports a failure
		}
	}
}

// lostItsAddress says whether the process, which has exited, did so because
// its address was in use.
func (p *Process) lostItsAddress() bool {
	if !p.Exited() {
		return false
	}
	log, err := os.ReadFile(p.logPath)
	return err == nil && strings.Contains(string(log), "address already in use")
}

func startScheduler(s Scheduler, kubeconfig string, extra []string, logPath, addr string) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{}, s.Command[1:]...)
	if s.Args != nil {
		args = append(args, s.Args(kubeconfig, addr, extra)...)
	} else {
		args = append(args, "--kubeconfig="+kubeconfig, "--metrics-bind-address="+addr)
		args = append(args, extra...)
	}
	cmd := exec.Command(s.Command[0], args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", s.Label, err)
	}
	p := &Process{cmd: cmd, addr: addr, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// WaitServing waits until the scheduler's HTTP server listens, so the
// first step does not race the process's start. A connection alone does
// not tell: it may reach another process that took the address first, while
// this one is about to exit. Where /proc tells which process owns a
// listening socket (Linux), WaitServing waits for this process's own.
func (p *Process) WaitServing() error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if p.Exited() {
			return fmt.Errorf("the scheduler exited at start: %v; see %s", p.err, p.logPath)
		}
		if p.listening() {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("the scheduler did not listen on %s within 60s", p.addr)
}

// listening says whether the process listens on its address: whether one of
// its file descriptors is the socket that /proc/net/tcp lists as listening
// on that port. Without /proc, it says whether the address accepts a
// connection.
func (p *Process) listening() bool {
	inodes, err := listeningSockets(p.addr)
	if err != nil {
		conn, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			conn.Close()
		}
		return err == nil
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	if err != nil {
		return false // it has just exited
	}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", p.cmd.Process.Pid, fd.Name()))
		if err == nil && inodes[target] {
			return true
		}
	}
	return false
}

// listeningSockets returns, as /proc/PID/fd links name them ("socket:[N]"),
// the sockets listening on addr's port, from /proc/net/tcp: one line per
// socket, "sl local_address rem_address st ... inode", with the port in hex
// after the colon of local_address and 0A as the state LISTEN.
func listeningSockets(addr string) (map[string]bool, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	want, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		_, hexPort, _ := strings.Cut(f[1], ":")
		if n, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(n) == want {
			inodes["socket:["+f[9]+"]"] = true
		}
	}
	return inodes, nil
}

// Pid is the scheduler's process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Addr is where its HTTP server listens.
func (p *Process) Addr() string { return p.addr }

// Err is how the process ended (once Exited).
func (p *Process) Err() error { return p.err }

// Exited says whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM and expects a clean exit 0 (unless exit0 is false): a
// crash, a data race found by the race detector (exit 66) or a hang fails
// the scenario.
func (p *Process) Stop(exit0 bool) error {
	if p.Exited() {
		return fmt.Errorf("the scheduler had exited on its own: %v", p.err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("the scheduler did not stop within 30s of SIGTERM")
	}
	if p.err != nil && exit0 {
		return fmt.Errorf("the scheduler did not exit cleanly after SIGTERM: %v", p.err)
	}
	return nil
}

// StopAs stops the process as Stop does and checks how scheduler s ended:
// a chapter exits 0; kube-scheduler without leader election exits 1, as
// app.Run returns "finished without leader elect" once its context ends
// (Run in cmd/kube-scheduler/app/server.go) and cli.Run exits 1 on any
// error. Any other exit (a crash, a data race found by the race detector,
// exit 66) fails.
func (p *Process) StopAs(s Scheduler) error {
	if err := p.Stop(false); err != nil {
		return err
	}
	if p.err == nil {
		return nil
	}
	var exit *exec.ExitError
	if s.IsKubeScheduler() && errors.As(p.err, &exit) && exit.ExitCode() == 1 {
		return nil
	}
	return fmt.Errorf("the scheduler did not exit cleanly after SIGTERM: %v", p.err)
}

// pickAddress chooses each scheduler's address: freeAddress, or in tests an
// address they choose.
var pickAddress = freeAddress

// freeAddress returns a free loopback address for a scheduler's server.
// It picks a port below Linux's ephemeral range (32768 and up), which the
// kernel hands out to every outgoing connection and every listen on port
// 0: a port from that range, free now, can be some client's a moment
// later, before the scheduler binds it.
func freeAddress() (string, error) {
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		addr := l.Addr().String()
		l.Close()
		return addr, nil
	}
	return "", fmt.Errorf("no free port between 20000 and 32000 in 100 tries")
}

// boundLine matches the line a scheduler logs once a pod's Binding has
// returned: every chapter's decision that bound it, and kube-scheduler's
// "Successfully bound pod to node" (schedule_one.go, -v=2).
var boundLine = regexp.MustCompile(`(?:"Scheduling decision" pod="([^"]+)".* result="scheduled"|"Successfully bound pod to node" pod="([^"]+)")`)

// waitBindingsReturned waits, for 10 seconds at most, until the scheduler
// has logged that the Binding of every bound pod of the run returned. The
// outcome is judged as soon as the pods are bound, which the apiserver
// reports before its answer to the Binding reaches the scheduler: a SIGTERM
// then would cancel a request that succeeded, and the audit log would
// record it as refused (HTTP 504).
func (ru *run) waitBindingsReturned(logPath string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := ru.r.Client.CoreV1().Pods(ru.ns).List(context.Background(), metav1.ListOptions{})
		data, readErr := os.ReadFile(logPath)
		if err != nil || readErr != nil {
			return
		}
		returned := map[string]bool{}
		for _, m := range boundLine.FindAllStringSubmatch(string(data), -1) {
			returned[m[1]+m[2]] = true
		}
		waiting := false
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.Spec.SchedulerName == DefaultSchedulerName && !returned[p.Namespace+"/"+p.Name] {
				waiting = true
				break
			}
		}
		if !waiting {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// decisionLine matches the decision line every chapter logs once per
// attempt, and captures the pod.
var decisionLine = regexp.MustCompile(`"Scheduling decision" pod="([^"]+)"`)

// countAttempts counts the scheduling attempts per pod of namespace ns in a
// scheduler's log.
func countAttempts(logPath, ns string) (map[string]int, error) {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return nil, fmt.Errorf("reading the scheduler log: %w", err)
	}
	out := map[string]int{}
	for _, m := range decisionLine.FindAllStringSubmatch(string(data), -1) {
		if namespace, name, ok := strings.Cut(m[1], "/"); ok && namespace == ns {
			out[name]++
		}
	}
	return out, nil
}

// feasibleLine matches a decision that bound a pod, and captures the pod
// and the feasible nodes its search found.
var feasibleLine = regexp.MustCompile(`"Scheduling decision" pod="([^"]+)".* result="scheduled".* feasibleNodes=(\d+)`)

// readFeasible reads, per pod of namespace ns, the feasibleNodes of the
// decision that bound it.
func readFeasible(logPath, ns string) (map[string]int, error) {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return nil, fmt.Errorf("reading the scheduler log: %w", err)
	}
	out := map[string]int{}
	for _, m := range feasibleLine.FindAllStringSubmatch(string(data), -1) {
		if namespace, name, ok := strings.Cut(m[1], "/"); ok && namespace == ns {
			out[name], _ = strconv.Atoi(m[2])
		}
	}
	return out, nil
}

// checkSearched compares the feasible nodes found with the scenario's, if
// they apply to this chapter.
func (ru *run) checkSearched(feasible map[string]int) []string {
	a := ru.sc.Expect.Searched
	if a == nil || ru.sched.Chapter < a.FromChapter {
		return nil
	}
	var problems []string
	for _, pattern := range slices.Sorted(maps.Keys(a.Feasible)) {
		for _, name := range ru.podNames(pattern) {
			if got, ok := feasible[name]; !ok {
				problems = append(problems, fmt.Sprintf("pod %s: no decision bound it with a feasibleNodes count", name))
			} else if got != a.Feasible[pattern] {
				problems = append(problems, fmt.Sprintf("pod %s: the search found %d feasible nodes, want %d", name, got, a.Feasible[pattern]))
			}
		}
	}
	return problems
}

// checkAttempts compares the attempts with the scenario's caps, if they
// apply to this chapter.
func (ru *run) checkAttempts(attempts map[string]int) []string {
	a := ru.sc.Expect.Attempts
	if a == nil || ru.sched.Chapter < a.FromChapter {
		return nil
	}
	var problems []string
	for _, pattern := range slices.Sorted(maps.Keys(a.Max)) {
		for _, name := range ru.podNames(pattern) {
			if attempts[name] > a.Max[pattern] {
				problems = append(problems, fmt.Sprintf("pod %s took %d scheduling attempts, want at most %d", name, attempts[name], a.Max[pattern]))
			}
		}
	}
	return problems
}
