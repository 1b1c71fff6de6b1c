// Package e2e is the shared KWOK scenario suite: scenarios are data (nodes,
// pods, steps, expected outcomes) in scenarios/*.yaml, and one runner plays
// them against any chapter's scheduler binary, the way one test suite proves
// every chapter of a book. See scenarios/README.md for the format.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// Scenario is one scenario file.
type Scenario struct {
	// Name is the file name without .yaml.
	Name string `json:"-"`
	// File is where the scenario was loaded from.
	File string `json:"-"`

	Description string `json:"description"`
	// FirstChapter is the first chapter that must pass the scenario; every
	// later chapter must pass it too.
	FirstChapter int `json:"firstChapter"`
	// LastChapter, when set, is the last chapter that must pass it: a later
	// chapter no longer has what the scenario shows (chapter 11 replaces
	// the label gang gate of 04-10 with pod groups).
	LastChapter int `json:"lastChapter,omitempty"`
	// Deterministic marks scenarios with exactly one right placement for
	// every pod, which `make compare` replays against kube-scheduler.
	Deterministic bool `json:"deterministic,omitempty"`
	// TimeoutSeconds bounds how long a failing scenario waits (default 60).
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
	// SchedulerArgs are added to the scheduler's command line.
	SchedulerArgs []string `json:"schedulerArgs,omitempty"`
	Steps         []Step   `json:"steps"`
	Expect        Expect   `json:"expect"`
}

// Step does one thing. Exactly one field is set.
type Step struct {
	// StartScheduler starts the scheduler here rather than before the first
	// step, so pods created before it are found by its first list.
	StartScheduler *struct{}  `json:"startScheduler,omitempty"`
	CreateNodes    []NodeSpec `json:"createNodes,omitempty"`
	CreatePods     []PodSpec  `json:"createPods,omitempty"`
	// CreatePodGroups creates PodGroups of the Workload API
	// (scheduling.k8s.io/v1beta1), which pods name in podGroup.
	CreatePodGroups []PodGroupSpec `json:"createPodGroups,omitempty"`
	// CreatePriorityClasses creates PriorityClasses, removed after the
	// scenario.
	CreatePriorityClasses []PriorityClassSpec `json:"createPriorityClasses,omitempty"`
	// CreateRuntimeClasses creates RuntimeClasses with an overhead,
	// removed after the scenario.
	CreateRuntimeClasses []RuntimeClassSpec `json:"createRuntimeClasses,omitempty"`
	// CreatePodDisruptionBudgets creates PDBs and sets their status, as the
	// disruption controller would (none runs here).
	CreatePodDisruptionBudgets []PDBSpec   `json:"createPodDisruptionBudgets,omitempty"`
	DeletePods                 []string    `json:"deletePods,omitempty"`
	DeleteNodes                []string    `json:"deleteNodes,omitempty"`
	UpdateNode                 *NodeUpdate `json:"updateNode,omitempty"`
	UpdatePod                  *PodUpdate  `json:"updatePod,omitempty"`
	// WaitFor blocks until every listed pod is in the given state.
	WaitFor *Wait `json:"waitFor,omitempty"`
	// AssertUnbound checks, at this moment, that the pods have no node.
	AssertUnbound []string `json:"assertUnbound,omitempty"`
	// Sleep lets time pass ("3s"), so that a scheduler that retries on a
	// timer (chapters 02-05) shows what that costs in attempts. It never
	// waits for an outcome: waitFor does that.
	Sleep string `json:"sleep,omitempty"`
}

// NodeSpec describes fake nodes. With Count > 1 the names are Name-0,
// Name-1, ...
type NodeSpec struct {
	Name          string            `json:"name"`
	Count         int               `json:"count,omitempty"`
	CPU           string            `json:"cpu,omitempty"`    // default "4"
	Memory        string            `json:"memory,omitempty"` // default "16Gi"
	Pods          string            `json:"pods,omitempty"`   // default "110"
	Labels        map[string]string `json:"labels,omitempty"`
	Taints        []v1.Taint        `json:"taints,omitempty"`
	Unschedulable bool              `json:"unschedulable,omitempty"`
}

// Validate checks what MakeNode would otherwise panic on: the
// quantities.
func (n NodeSpec) Validate() error {
	return quantities(map[string]string{"cpu": n.CPU, "memory": n.Memory, "pods": n.Pods})
}

// Validate checks what MakePod would otherwise panic on: the quantities.
func (p PodSpec) Validate() error {
	if err := quantities(map[string]string{"cpu": p.CPU, "memory": p.Memory, "podCPU": p.PodCPU, "podMemory": p.PodMemory}); err != nil {
		return err
	}
	if len(p.Containers) > 0 && (p.CPU != "" || p.Memory != "") {
		return fmt.Errorf("cpu and memory are the one container's; with containers, give each its own")
	}
	for _, c := range append(slices.Clone(p.Containers), p.InitContainers...) {
		if !dnsLabel.MatchString(c.Name) {
			return fmt.Errorf("container name %q is not a DNS label", c.Name)
		}
		if err := quantities(map[string]string{"cpu": c.CPU, "memory": c.Memory}); err != nil {
			return fmt.Errorf("container %s: %w", c.Name, err)
		}
	}
	for _, c := range p.Containers {
		if c.Sidecar {
			return fmt.Errorf("container %s: only an init container can be a sidecar", c.Name)
		}
	}
	return nil
}

// ContainerSpec is a container of a pod, with its requests. An init
// container with Sidecar set restarts always: a sidecar (KEP-753), which
// runs beside the containers.
type ContainerSpec struct {
	Name    string `json:"name"`
	CPU     string `json:"cpu,omitempty"`
	Memory  string `json:"memory,omitempty"`
	Sidecar bool   `json:"sidecar,omitempty"`
}

// RuntimeClassSpec is a RuntimeClass whose overhead the RuntimeClass
// admission plugin adds to the pods that name it (spec.overhead).
type RuntimeClassSpec struct {
	Name   string `json:"name"`
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// quantities returns an error naming the first field, in name order,
// that is set and not a quantity.
func quantities(fields map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		v := fields[name]
		if v == "" {
			continue
		}
		if _, err := resource.ParseQuantity(v); err != nil {
			return fmt.Errorf("%s %q is not a quantity (like 500m, 2, 1Gi)", name, v)
		}
	}
	return nil
}

// PodSpec describes pods. With Count > 1 the names are Name-0, Name-1, ...
type PodSpec struct {
	Name  string `json:"name"`
	Count int    `json:"count,omitempty"`
	// SchedulerName defaults to the scheduler under test.
	SchedulerName     string            `json:"schedulerName,omitempty"`
	CPU               string            `json:"cpu,omitempty"`
	Memory            string            `json:"memory,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	NodeSelector      map[string]string `json:"nodeSelector,omitempty"`
	Affinity          *v1.Affinity      `json:"affinity,omitempty"`
	Tolerations       []v1.Toleration   `json:"tolerations,omitempty"`
	PriorityClassName string            `json:"priorityClassName,omitempty"`
	SchedulingGates   []string          `json:"schedulingGates,omitempty"`
	// PodGroup names the pod's PodGroup (spec.schedulingGroup).
	PodGroup string `json:"podGroup,omitempty"`
	// Containers replace the one container of CPU and Memory, each with
	// its requests; InitContainers run before them.
	Containers     []ContainerSpec `json:"containers,omitempty"`
	InitContainers []ContainerSpec `json:"initContainers,omitempty"`
	// PodCPU and PodMemory are pod-level requests (spec.resources).
	PodCPU    string `json:"podCPU,omitempty"`
	PodMemory string `json:"podMemory,omitempty"`
	// RuntimeClassName names a RuntimeClass of the scenario's
	// createRuntimeClasses.
	RuntimeClassName string `json:"runtimeClassName,omitempty"`
}

// PodGroupSpec is a PodGroup: a gang of minCount, or with minCount 0 the
// basic policy (no minimum). DisruptionMode is Single (the default) or
// All: whether preemption may evict one member, or only the whole group.
type PodGroupSpec struct {
	Name           string `json:"name"`
	MinCount       int32  `json:"minCount,omitempty"`
	DisruptionMode string `json:"disruptionMode,omitempty"`
}

// PriorityClassSpec is a PriorityClass.
type PriorityClassSpec struct {
	Name  string `json:"name"`
	Value int32  `json:"value"`
	// PreemptionPolicy is PreemptLowerPriority (the default) or Never. The
	// priority admission plugin copies it from the class into the pod.
	PreemptionPolicy string `json:"preemptionPolicy,omitempty"`
}

// PDBSpec is a PodDisruptionBudget over the pods with the given labels.
// No disruption controller runs on the local cluster, so the runner writes
// the status itself: DisruptionsAllowed is what the scheduler reads
// (upstream's preemption util.go, FilterVictimsWithPDBViolation).
type PDBSpec struct {
	Name               string            `json:"name"`
	MatchLabels        map[string]string `json:"matchLabels"`
	DisruptionsAllowed int32             `json:"disruptionsAllowed"`
}

// NodeUpdate changes a node. A label with a null value is removed; Taints,
// when given, replace the node's taints.
type NodeUpdate struct {
	Name          string             `json:"name"`
	Labels        map[string]*string `json:"labels,omitempty"`
	Taints        *[]v1.Taint        `json:"taints,omitempty"`
	Unschedulable *bool              `json:"unschedulable,omitempty"`
	// CPU, when set, changes the node's allocatable and capacity cpu.
	CPU string `json:"cpu,omitempty"`
}

// PodUpdate changes a pending pod.
type PodUpdate struct {
	Name   string             `json:"name"`
	Labels map[string]*string `json:"labels,omitempty"`
	// RemoveSchedulingGates clears spec.schedulingGates.
	RemoveSchedulingGates bool `json:"removeSchedulingGates,omitempty"`
}

// Wait names pods and the state to wait for.
type Wait struct {
	Pods []string `json:"pods"`
	// Bound waits for a node.
	Bound bool `json:"bound,omitempty"`
	// Condition waits for a pod condition, e.g. PodScheduled=False with
	// reason Unschedulable.
	Condition *Condition `json:"condition,omitempty"`
	// Nominated waits until each pod has been nominated to this node
	// (status.nominatedNodeName), at any moment since the scenario began.
	Nominated string `json:"nominated,omitempty"`
	// Deleted waits until each pod is gone, e.g. a preemption victim.
	Deleted bool `json:"deleted,omitempty"`
	// Decided waits until each pod is bound, or has PodScheduled=False and
	// no nomination while no pod of the scenario is terminating: a
	// preemptor is decided once its victims are gone and it is bound (the
	// runner's OnePodPerStep uses it; scenarios do not).
	Decided bool `json:"-"`
}

// Condition matches a pod condition; empty fields match anything.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Preemption is what preemption (chapter 09 on, and kube-scheduler
	// with DefaultPreemption) appends to a FitError's message: from
	// PreemptionChapter on, the message must be Message + " preemption: " +
	// Preemption. Empty: the message does not change.
	Preemption string `json:"preemption,omitempty"`
}

// PreemptionChapter is the first chapter whose scheduler preempts.
const PreemptionChapter = 9

// SearchChapter is the first chapter whose scheduler stops searching once
// it has found enough feasible nodes (percentageOfNodesToScore).
const SearchChapter = 10

// PodGroupChapter is the first chapter whose scheduler schedules pod
// groups of the Workload API (spec.schedulingGroup) together.
const PodGroupChapter = 11

// ObservabilityChapter is the first chapter whose /metrics serves
// kube-scheduler's own metrics (pkg/scheduler/metrics).
const ObservabilityChapter = 12

// LastChapter is the newest chapter a scenario may name.
const LastChapter = 13

// AppliesTo says whether the chapter must pass the scenario.
func (s *Scenario) AppliesTo(chapter int) bool {
	return s.FirstChapter <= chapter && (s.LastChapter == 0 || chapter <= s.LastChapter)
}

// For returns the condition a scheduler of the chapter sets: the message
// with the preemption verdict appended from PreemptionChapter on.
func (c *Condition) For(chapter int) *Condition {
	if c == nil || c.Preemption == "" || chapter < PreemptionChapter {
		return c
	}
	out := *c
	out.Message = c.Message + " preemption: " + c.Preemption
	return &out
}

// Expect is the outcome the scenario waits for once its steps are done.
type Expect struct {
	// Bound maps pod names (or globs, e.g. web-*) to the nodes they may be
	// bound to: one name or glob (c-*), a list, or "*" for any node.
	Bound map[string]Nodes `json:"bound,omitempty"`
	// Unbound maps pods (or globs) that must stay without a node to the
	// PodScheduled condition they must carry (nil: no condition checked).
	Unbound map[string]*Condition `json:"unbound,omitempty"`
	// MayStayPending names pods that a plugin holds back on purpose although
	// they fit (the gang gate of chapter 04), exempt from the invariant
	// "no pod that fits stays pending".
	MayStayPending []string `json:"mayStayPending,omitempty"`
	// Preempted names the pods (or globs) the scheduler must delete as
	// preemption victims, with the DisruptionTarget condition. Every other
	// pod must survive, unless a deletePods step deletes it.
	Preempted []string `json:"preempted,omitempty"`
	// Nominated maps pods to the node each must have been nominated to at
	// some moment (status.nominatedNodeName); "" means never nominated.
	Nominated map[string]string `json:"nominated,omitempty"`
	// Attempts bounds how often the scheduler may try pods, counted from its
	// "Scheduling decision" log lines, from a chapter on: a queue that
	// retries on events (chapter 06 on) tries a pod again only when
	// something could have helped it.
	Attempts *ExpectAttempts `json:"attempts,omitempty"`
	// Searched pins how many feasible nodes a scheduler found for a pod,
	// read from the feasibleNodes of the decision that bound it, from a
	// chapter on: a scheduler that stops searching early (chapter 10 on)
	// finds fewer than the nodes that fit.
	Searched *ExpectSearched `json:"searched,omitempty"`
}

// ExpectSearched pins the feasible nodes found per pod.
type ExpectSearched struct {
	// FromChapter is the first chapter the numbers apply to.
	FromChapter int `json:"fromChapter"`
	// Feasible maps pod names (or globs) to the feasibleNodes each pod's
	// binding decision must log.
	Feasible map[string]int `json:"feasible"`
}

// ExpectAttempts caps the scheduling attempts of pods.
type ExpectAttempts struct {
	// FromChapter is the first chapter the caps apply to.
	FromChapter int `json:"fromChapter"`
	// Max maps pod names (or globs) to the most attempts each may take.
	Max map[string]int `json:"max"`
}

// Nodes is a set of node names or globs (c-*); "*" is any node. In YAML it
// is a name or a list of names.
type Nodes []string

// UnmarshalJSON accepts "node" as well as ["a", "b"].
func (n *Nodes) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*n = Nodes{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		if string(b) == "true" || string(b) == "false" {
			// YAML reads y, n, yes, no, on and off as booleans.
			return fmt.Errorf("want a node name, got the boolean %s: quote the name", b)
		}
		return fmt.Errorf("want a node name or a list of node names, got %s", b)
	}
	*n = many
	return nil
}

// Allows says whether node is in the set.
func (n Nodes) Allows(node string) bool {
	for _, want := range n {
		if ok, _ := path.Match(want, node); ok {
			return true
		}
	}
	return false
}

// expand names count objects after name.
func expand(name string, count int) []string {
	if count <= 1 {
		return []string{name}
	}
	out := make([]string, count)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", name, i)
	}
	return out
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// LoadDir loads every scenario in dir, sorted by first chapter, then name.
func LoadDir(dir string) ([]*Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no scenario files in %s", dir)
	}
	var out []*Scenario
	var errs []error
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].FirstChapter != out[j].FirstChapter {
			return out[i].FirstChapter < out[j].FirstChapter
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Load reads and checks one scenario file. Every error names the file and
// the problem.
func Load(file string) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s := &Scenario{}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s.File = file
	s.Name = strings.TrimSuffix(filepath.Base(file), ".yaml")
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

func (s *Scenario) validate() error {
	if !dnsLabel.MatchString(s.Name) || len(s.Name) > 50 {
		return fmt.Errorf("the file name %q must be a DNS label of at most 50 characters", s.Name)
	}
	if s.Description == "" {
		return errors.New("description is missing")
	}
	if s.FirstChapter < 1 || s.FirstChapter > LastChapter {
		return fmt.Errorf("firstChapter is %d, want 1 to %d", s.FirstChapter, LastChapter)
	}
	if s.LastChapter != 0 && (s.LastChapter < s.FirstChapter || s.LastChapter >= LastChapter) {
		return fmt.Errorf("lastChapter is %d, want %d to %d, or none", s.LastChapter, s.FirstChapter, LastChapter-1)
	}
	if len(s.Steps) == 0 {
		return errors.New("steps are missing")
	}
	if len(s.Expect.Bound) == 0 && len(s.Expect.Unbound) == 0 && len(s.Expect.Preempted) == 0 {
		return errors.New("expect has no bound, unbound or preempted pods")
	}
	pods, nodes, runtimeClasses := map[string]bool{}, map[string]bool{}, map[string]bool{}
	starts := 0
	for i, st := range s.Steps {
		n := 0
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(st); err != nil {
			return err
		}
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(b.Bytes(), &fields)
		n = len(fields)
		if n != 1 {
			return fmt.Errorf("step %d has %d actions, want exactly one", i+1, n)
		}
		if st.StartScheduler != nil {
			starts++
		}
		if st.Sleep != "" {
			d, err := time.ParseDuration(st.Sleep)
			if err != nil || d <= 0 || d > 30*time.Second {
				return fmt.Errorf("step %d: sleep %q is not a duration between 0 and 30s", i+1, st.Sleep)
			}
		}
		for _, ns := range st.CreateNodes {
			if ns.Name == "" {
				return fmt.Errorf("step %d: a node has no name", i+1)
			}
			if err := ns.Validate(); err != nil {
				return fmt.Errorf("step %d: node %s: %w", i+1, ns.Name, err)
			}
			for _, name := range expand(ns.Name, ns.Count) {
				nodes[name] = true
			}
		}
		for _, ps := range st.CreatePods {
			if ps.Name == "" {
				return fmt.Errorf("step %d: a pod has no name", i+1)
			}
			if err := ps.Validate(); err != nil {
				return fmt.Errorf("step %d: pod %s: %w", i+1, ps.Name, err)
			}
			for _, name := range expand(ps.Name, ps.Count) {
				if pods[name] {
					return fmt.Errorf("step %d: pod %s is created twice", i+1, name)
				}
				pods[name] = true
			}
		}
		var refs []string
		refs = append(refs, st.DeletePods...)
		refs = append(refs, st.AssertUnbound...)
		if st.UpdatePod != nil {
			refs = append(refs, st.UpdatePod.Name)
		}
		if st.WaitFor != nil {
			w := st.WaitFor
			if len(w.Pods) == 0 || (!w.Bound && w.Condition == nil && w.Nominated == "" && !w.Deleted) {
				return fmt.Errorf("step %d: waitFor needs pods and one of bound, condition, nominated or deleted", i+1)
			}
			if w.Deleted && (w.Bound || w.Condition != nil || w.Nominated != "") {
				return fmt.Errorf("step %d: waitFor deleted cannot be combined with another state", i+1)
			}
			if w.Nominated != "" && !nodes[w.Nominated] {
				return fmt.Errorf("step %d names node %q, which no earlier step creates", i+1, w.Nominated)
			}
			refs = append(refs, w.Pods...)
		}
		for _, pc := range st.CreatePriorityClasses {
			if pc.PreemptionPolicy != "" && pc.PreemptionPolicy != "Never" && pc.PreemptionPolicy != "PreemptLowerPriority" {
				return fmt.Errorf("step %d: priority class %s: preemptionPolicy %q, want Never or PreemptLowerPriority", i+1, pc.Name, pc.PreemptionPolicy)
			}
		}
		for _, pg := range st.CreatePodGroups {
			if !dnsLabel.MatchString(pg.Name) || pg.MinCount < 0 {
				return fmt.Errorf("step %d: a PodGroup needs a DNS-label name and minCount >= 0", i+1)
			}
			if pg.DisruptionMode != "" && pg.DisruptionMode != "Single" && pg.DisruptionMode != "All" {
				return fmt.Errorf("step %d: pod group %s: disruptionMode %q, want Single or All", i+1, pg.Name, pg.DisruptionMode)
			}
		}
		for _, rc := range st.CreateRuntimeClasses {
			if !dnsLabel.MatchString(rc.Name) {
				return fmt.Errorf("step %d: a RuntimeClass needs a DNS-label name", i+1)
			}
			if err := quantities(map[string]string{"cpu": rc.CPU, "memory": rc.Memory}); err != nil {
				return fmt.Errorf("step %d: runtime class %s: %w", i+1, rc.Name, err)
			}
			runtimeClasses[rc.Name] = true
		}
		for _, ps := range st.CreatePods {
			if ps.RuntimeClassName != "" && !runtimeClasses[ps.RuntimeClassName] {
				return fmt.Errorf("step %d: pod %s names runtime class %q, which no earlier step creates", i+1, ps.Name, ps.RuntimeClassName)
			}
		}
		for _, pdb := range st.CreatePodDisruptionBudgets {
			if pdb.Name == "" || len(pdb.MatchLabels) == 0 || pdb.DisruptionsAllowed < 0 {
				return fmt.Errorf("step %d: a PodDisruptionBudget needs a name, matchLabels and disruptionsAllowed >= 0", i+1)
			}
		}
		for _, p := range refs {
			if !matchesAny(p, pods) {
				return fmt.Errorf("step %d names pod %q, which no earlier step creates", i+1, p)
			}
		}
		var nodeRefs []string
		nodeRefs = append(nodeRefs, st.DeleteNodes...)
		if st.UpdateNode != nil {
			nodeRefs = append(nodeRefs, st.UpdateNode.Name)
		}
		for _, n := range nodeRefs {
			if !nodes[n] {
				return fmt.Errorf("step %d names node %q, which no earlier step creates", i+1, n)
			}
		}
	}
	if starts > 1 {
		return errors.New("startScheduler appears more than once")
	}
	if s.Deterministic {
		// make compare creates pods one per step, each waiting for its
		// Binding, so both schedulers see the same cluster for every pod. A
		// pod group is scheduled as one, so its members come in one step.
		for i, st := range s.Steps {
			n := 0
			groups := map[string]bool{}
			for _, ps := range st.CreatePods {
				n += len(expand(ps.Name, ps.Count))
				groups[ps.PodGroup] = true
			}
			if n > 1 && (len(groups) != 1 || groups[""]) {
				return fmt.Errorf("step %d creates %d pods; a deterministic scenario creates one pod, or the members of one pod group, per step", i+1, n)
			}
		}
	}
	for p, ns := range s.Expect.Bound {
		if !matchesAny(p, pods) {
			return fmt.Errorf("expect.bound names pod %q, which no step creates", p)
		}
		if len(ns) == 0 {
			return fmt.Errorf("expect.bound.%s lists no node", p)
		}
		for _, n := range ns {
			if n != "*" && !matchesAny(n, nodes) {
				return fmt.Errorf("expect.bound.%s names node %q, which no step creates", p, n)
			}
		}
	}
	for p := range s.Expect.Unbound {
		if !matchesAny(p, pods) {
			return fmt.Errorf("expect.unbound names pod %q, which no step creates", p)
		}
	}
	for _, p := range s.Expect.Preempted {
		if !matchesAny(p, pods) {
			return fmt.Errorf("expect.preempted names pod %q, which no step creates", p)
		}
	}
	for p, n := range s.Expect.Nominated {
		if !matchesAny(p, pods) {
			return fmt.Errorf("expect.nominated names pod %q, which no step creates", p)
		}
		if n != "" && !nodes[n] {
			return fmt.Errorf("expect.nominated.%s names node %q, which no step creates", p, n)
		}
	}
	if (len(s.Expect.Preempted) > 0 || len(s.Expect.Nominated) > 0) && s.FirstChapter < PreemptionChapter {
		return fmt.Errorf("expect.preempted and expect.nominated need firstChapter %d or later", PreemptionChapter)
	}
	if a := s.Expect.Attempts; a != nil {
		if a.FromChapter < s.FirstChapter || a.FromChapter > LastChapter {
			return fmt.Errorf("expect.attempts.fromChapter is %d, want %d to %d", a.FromChapter, s.FirstChapter, LastChapter)
		}
		if len(a.Max) == 0 {
			return errors.New("expect.attempts.max names no pod")
		}
		for p, n := range a.Max {
			if !matchesAny(p, pods) {
				return fmt.Errorf("expect.attempts.max names pod %q, which no step creates", p)
			}
			if n < 1 {
				return fmt.Errorf("expect.attempts.max.%s is %d, want at least 1", p, n)
			}
		}
	}
	if a := s.Expect.Searched; a != nil {
		if a.FromChapter < s.FirstChapter || a.FromChapter > LastChapter {
			return fmt.Errorf("expect.searched.fromChapter is %d, want %d to %d", a.FromChapter, s.FirstChapter, LastChapter)
		}
		if len(a.Feasible) == 0 {
			return errors.New("expect.searched.feasible names no pod")
		}
		for p, n := range a.Feasible {
			if !matchesAny(p, pods) {
				return fmt.Errorf("expect.searched.feasible names pod %q, which no step creates", p)
			}
			if _, ok := s.Expect.Bound[p]; !ok {
				return fmt.Errorf("expect.searched.feasible names pod %q, which expect.bound does not", p)
			}
			if n < 1 {
				return fmt.Errorf("expect.searched.feasible.%s is %d, want at least 1", p, n)
			}
		}
	}
	return nil
}

// matchesAny says whether pattern (a name or a glob) matches a known pod.
func matchesAny(pattern string, pods map[string]bool) bool {
	for p := range pods {
		if ok, _ := path.Match(pattern, p); ok {
			return true
		}
	}
	return false
}
