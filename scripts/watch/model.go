// Package watch builds what make watch shows of a scheduler at work: its
// nodes and the pods on them, its queue, and each attempt of each pod with
// every plugin's verdict, from what a scheduler already gives: the
// apiserver's objects and the scheduler's structured log.
//
// Two dialects of log lines are read. The chapters' own ("Scheduling
// decision", "Pod moved to an internal scheduling queue" on every move) and
// kube-scheduler v1.37.1's ("Successfully bound pod to node",
// "Entity moved to an internal scheduling queue" at -v=5, "Plugin scored
// node for pod" at -v=10). What only the chapters log is listed in
// Capabilities, so that the page can say what a kube-scheduler lane cannot
// show.
package watch

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"minisched/scripts/klogtext"
)

// Queue names, as both dialects log them, and the states the page adds.
const (
	Active        = "Active"
	Backoff       = "Backoff"
	Unschedulable = "Unschedulable"
	// Gated is a pod a PreEnqueue plugin keeps out of activeQ. Upstream
	// logs it as moved to Unschedulable "because it is gated".
	Gated = "Gated"
	// InFlight is a pod between its Pop and its decision.
	InFlight = "InFlight"
	// Scheduled is a pod whose attempt the log says chose a node (both
	// dialects log it once the Binding returned) and that the apiserver
	// has not yet shown bound.
	Scheduled = "Scheduled"
	// Bound is a pod with a node (from the apiserver).
	Bound = "Bound"
	// Pending is a pod with no node of which the log says nothing yet.
	Pending = "Pending"
)

// maxEvents bounds the events a lane keeps: the page shows the latest.
const maxEvents = 500

// Lane is one scheduler and its cluster.
type Lane struct {
	Name string `json:"name"`
	// Upstream is kube-scheduler's lane: the page says what its log
	// cannot show. Chapter is a chapter's number: the page leaves out
	// the queues a chapter does not have yet (backoffQ before 07).
	Upstream bool
	Chapter  int
	Nodes    map[string]*Node
	Pods     map[string]*Pod
	// Groups are the pod groups the log names, by namespace/name.
	Groups map[string]*Group
	Events []Event
	// Capabilities says which kinds of lines the log had so far.
	Capabilities Capabilities
	// Start is the time of the first input: the page's clock starts there.
	Start time.Time
	// PendingPods is the scheduler's own count of its pending pods by queue
	// (the scheduler_pending_pods gauge of its /metrics, chapters 06 on
	// and kube-scheduler), last read: a check on the queue the page
	// rebuilds from the log.
	PendingPods map[string]float64
	// eventIndex finds an Event object's line by its UID.
	eventIndex map[string]int
}

// Capabilities are the kinds of lines seen in a lane's log.
type Capabilities struct {
	Queue          bool `json:"queue"`
	FilterVerdicts bool `json:"filterVerdicts"`
	Scores         bool `json:"scores"`
	RawScores      bool `json:"rawScores"`
	BackoffExpiry  bool `json:"backoffExpiry"`
	Preemption     bool `json:"preemption"`
	PodGroups      bool `json:"podGroups"`
}

// Node is a node with what the pods bound to it request.
type Node struct {
	Name        string            `json:"name"`
	Allocatable Resources         `json:"allocatable"`
	Requested   Resources         `json:"requested"`
	Labels      map[string]string `json:"labels,omitempty"`
	Taints      []string          `json:"taints,omitempty"`
	Pods        []string          `json:"pods"`
}

// Resources are the three the page draws as bars.
type Resources struct {
	MilliCPU int64 `json:"milliCPU"`
	Memory   int64 `json:"memory"`
	Pods     int64 `json:"pods"`
}

// Pod is a pod, where the scheduler keeps it, and its attempts.
type Pod struct {
	Name string `json:"name"` // namespace/name
	// UID tells a pod from an earlier one of the same name.
	UID      string    `json:"uid,omitempty"`
	Node     string    `json:"node,omitempty"`
	Priority int32     `json:"priority"`
	Requests Resources `json:"requests"`
	// Queue is Pending, Active, Backoff, Unschedulable, Gated, InFlight,
	// Scheduled, Bound or Deleted.
	Queue string `json:"queue"`
	// BackoffUntil is when its backoff ends, where the log says.
	BackoffUntil         *time.Time `json:"backoffUntil,omitempty"`
	UnschedulablePlugins []string   `json:"unschedulablePlugins,omitempty"`
	GatingPlugin         string     `json:"gatingPlugin,omitempty"`
	NominatedNode        string     `json:"nominatedNode,omitempty"`
	PodGroup             string     `json:"podGroup,omitempty"`
	// Condition is the PodScheduled condition's message, if false.
	Condition string     `json:"condition,omitempty"`
	Moves     []Move     `json:"moves"`
	Attempts  []*Attempt `json:"attempts"`
	Deleted   bool       `json:"deleted,omitempty"`
}

// Move is a pod entering a queue, and the event that sent it there.
type Move struct {
	At    time.Time `json:"at"`
	Queue string    `json:"queue"`
	Event string    `json:"event,omitempty"`
}

// Attempt is one scheduling attempt of a pod.
type Attempt struct {
	Start  time.Time  `json:"start"`
	End    *time.Time `json:"end,omitempty"`
	Result string     `json:"result,omitempty"` // scheduled, unschedulable, error
	Node   string     `json:"node,omitempty"`
	// Message is the decision's message: the FitError for a pod that
	// did not fit.
	Message        string `json:"message,omitempty"`
	EvaluatedNodes int    `json:"evaluatedNodes,omitempty"`
	FeasibleNodes  int    `json:"feasibleNodes,omitempty"`
	// Filter is each evaluated node's verdict: the plugin that rejected
	// it and why, or none for a feasible node.
	Filter map[string]Verdict `json:"filter,omitempty"`
	// Scores holds each node's scores by plugin; Totals each node's sum.
	Scores     map[string]map[string]*Score `json:"scores,omitempty"`
	Totals     map[string]int64             `json:"totals,omitempty"`
	Preemption *Preemption                  `json:"preemption,omitempty"`
}

// Verdict is a node's Filter result.
type Verdict struct {
	Plugin string `json:"plugin,omitempty"` // empty: the node passed
	Reason string `json:"reason,omitempty"`
}

// Score is a plugin's score of a node. Weighted comes from upstream's
// "Plugin scored node for pod", which both dialects log at -v=10; Raw and
// Weight from the chapters' "Plugin's raw score of node for pod", which
// upstream does not log; Normalized is Weighted over Weight.
type Score struct {
	Raw        *int64 `json:"raw,omitempty"`
	Normalized *int64 `json:"normalized,omitempty"`
	Weight     *int64 `json:"weight,omitempty"`
	Weighted   int64  `json:"weighted"`
}

// Preemption is what PostFilter found and did.
type Preemption struct {
	// Candidates are the nodes with the victims the dry run chose there.
	Candidates map[string][]string `json:"candidates,omitempty"`
	Node       string              `json:"node,omitempty"`
	Victims    []string            `json:"victims,omitempty"`
	// Result is PostFilter's status where the log gives it.
	Result string `json:"result,omitempty"`
}

// Group is a pod group of the queue.
type Group struct {
	Name  string `json:"name"`
	Queue string `json:"queue"`
	Moves []Move `json:"moves"`
	// Members are its pods the log or the apiserver named.
	Members []string `json:"members"`
	Result  string   `json:"result,omitempty"`
	// moveMembers are the members whose lines the last move has had.
	moveMembers map[string]bool
}

// Event is a line for the page's event list: a cluster event the
// scheduler handled, or an Event object from the apiserver.
type Event struct {
	At      time.Time `json:"at"`
	Source  string    `json:"source"` // "scheduler" or "apiserver"
	Reason  string    `json:"reason"`
	Object  string    `json:"object,omitempty"`
	Message string    `json:"message,omitempty"`
	UID     string    `json:"-"`
}

// NewLane returns an empty lane.
func NewLane(name string) *Lane {
	return &Lane{Name: name, Nodes: map[string]*Node{}, Pods: map[string]*Pod{}, Groups: map[string]*Group{}, eventIndex: map[string]int{}}
}

func (l *Lane) clock(at time.Time) {
	if l.Start.IsZero() || at.Before(l.Start) {
		l.Start = at
	}
}

func (l *Lane) pod(name string) *Pod {
	p := l.Pods[name]
	if p == nil {
		p = &Pod{Name: name, Queue: Pending, Moves: []Move{}, Attempts: []*Attempt{}}
		l.Pods[name] = p
	}
	return p
}

func (l *Lane) group(name string) *Group {
	g := l.Groups[name]
	if g == nil {
		g = &Group{Name: name}
		l.Groups[name] = g
	}
	return g
}

func (l *Lane) event(e Event) {
	l.Events = append(l.Events, e)
	if n := len(l.Events) - maxEvents; n > 0 {
		l.Events = slices.Delete(l.Events, 0, n)
		for uid, i := range l.eventIndex {
			if i < n {
				delete(l.eventIndex, uid)
			} else {
				l.eventIndex[uid] = i - n
			}
		}
	}
}

// enter records a pod's move to a queue at the time it happened. The log
// is read a moment after it is written, so its lines can come after the
// apiserver's news of the same pod: the pod bound, say, before the log's
// move that led there. A move is put in its place in time, and only the
// latest sets where the pod is now.
func (p *Pod) enter(at time.Time, queue, event string) {
	i := len(p.Moves)
	for i > 0 && p.Moves[i-1].At.After(at) {
		i--
	}
	p.Moves = slices.Insert(p.Moves, i, Move{At: at, Queue: queue, Event: event})
	if i == len(p.Moves)-1 {
		p.Queue = queue
		p.BackoffUntil = nil
	}
}

// enter records a group's move. The chapters log one line per member for
// one move of the group, a few microseconds apart (logMove in their
// scheduling_queue.go): a member's line joins the move the last line
// started when it goes to the same queue for the same event and that
// member has not been seen in it yet. member is "" for a line about the
// whole group.
func (g *Group) enter(at time.Time, queue, event, member string) {
	if n := len(g.Moves); n > 0 && member != "" && g.Queue == queue && g.Moves[n-1].Event == event && !g.moveMembers[member] {
		g.moveMembers[member] = true
		return
	}
	g.Queue = queue
	g.Moves = append(g.Moves, Move{At: at, Queue: queue, Event: event})
	g.moveMembers = map[string]bool{}
	if member != "" {
		g.moveMembers[member] = true
	}
}

func (p *Pod) attempt() *Attempt {
	if len(p.Attempts) == 0 {
		return nil
	}
	return p.Attempts[len(p.Attempts)-1]
}

// nodeNames are the keys klog gives a node: "n1", or for a KObj of a
// cluster-scoped object also "n1".
func name(v string) string { return strings.TrimPrefix(v, "/") }

// ApplyLog applies one structured line of the scheduler's log.
func (l *Lane) ApplyLog(r klogtext.Record) {
	l.clock(r.Time)
	f := r.Fields
	podName := f["pod"]
	switch r.Msg {
	// The queue.
	case "Pod moved to an internal scheduling queue", "Entity moved to an internal scheduling queue",
		"Entity moved to an internal scheduling queue because the Pod is updated":
		l.Capabilities.Queue = true
		if isGroup(f["type"]) {
			l.group(f["entity"]).enter(r.Time, f["queue"], f["event"], "")
			return
		}
		if podName == "" {
			podName = f["entity"]
		}
		if podName == "" {
			return
		}
		p := l.pod(podName)
		p.enter(r.Time, f["queue"], f["event"])
		if d, err := time.ParseDuration(f["backoff"]); err == nil && f["queue"] == Backoff && p.Queue == Backoff {
			l.Capabilities.BackoffExpiry = true
			until := r.Time.Add(d)
			p.BackoffUntil = &until
		}
		if plugins, ok := f["unschedulablePlugins"]; ok {
			p.UnschedulablePlugins = klogtext.Strings(plugins)
		} else if plugins, ok := f["unschedulable plugins"]; ok {
			p.UnschedulablePlugins = klogtext.Strings(plugins)
		}
		if g := f["podGroup"]; g != "" {
			// Chapters 11 and 12 log a pod group's move once per member
			// (logMove in their scheduling_queue.go), where upstream logs
			// one line with type podgroup: the group moves with them.
			l.Capabilities.PodGroups = true
			p.PodGroup = g
			l.member(g, podName)
			l.group(g).enter(r.Time, f["queue"], f["event"], podName)
		}
	case "Pod moved to an internal scheduling queue, because it is gated", "Entity moved to an internal scheduling queue, because it is gated":
		l.Capabilities.Queue = true
		if podName == "" {
			podName = f["entity"]
		}
		if podName == "" || isGroup(f["type"]) {
			return
		}
		p := l.pod(podName)
		p.enter(r.Time, Gated, f["event"])
		p.GatingPlugin = f["gatingPlugin"]
	case "Pod group moved to an internal scheduling queue":
		// After its cycle. The members' lines of the same move may have
		// come first (to activeQ or backoffQ), with the event.
		l.Capabilities.PodGroups = true
		if g := l.group(f["podGroup"]); g.Queue != f["queue"] {
			g.enter(r.Time, f["queue"], f["event"], "")
		}

	// An attempt starts.
	case "Attempting to schedule pod", "Attempting to schedule a pod belonging to a pod group":
		if podName == "" {
			return
		}
		p := l.pod(podName)
		p.enter(r.Time, InFlight, "")
		p.Attempts = append(p.Attempts, &Attempt{Start: r.Time})
		if g := f["podGroup"]; g != "" {
			p.PodGroup = g
			l.member(g, podName)
		}
	case "Attempting to schedule pod group":
		l.Capabilities.PodGroups = true
		l.group(f["podGroup"]).enter(r.Time, InFlight, "", "")

	// Filter and Score. These lines come from the attempt's own Filter
	// pass (findNodesThatPassFilters), never from a preemption's dry run.
	case "Plugin rejected node for pod", "Node passed the Filter plugins for pod":
		l.Capabilities.FilterVerdicts = true
		if a := l.attemptOf(podName); a != nil {
			if a.Filter == nil {
				a.Filter = map[string]Verdict{}
			}
			var v Verdict // passed
			if r.Msg == "Plugin rejected node for pod" {
				v = Verdict{Plugin: f["plugin"], Reason: f["status"]}
			}
			a.Filter[name(f["node"])] = v
		}
	case "Plugin scored node for pod", "Plugin's raw score of node for pod":
		l.Capabilities.Scores = true
		a := l.attemptOf(podName)
		if a == nil {
			return
		}
		s := a.score(name(f["node"]), f["plugin"])
		if r.Msg == "Plugin scored node for pod" {
			s.Weighted = integer(f["score"])
		} else {
			l.Capabilities.RawScores = true
			s.Raw, s.Weight = ptr(integer(f["score"])), ptr(integer(f["weight"]))
		}
		// The normalized score is the weighted one over the weight:
		// neither dialect logs it.
		if s.Weight != nil && *s.Weight != 0 {
			s.Normalized = ptr(s.Weighted / *s.Weight)
		}
	case "Calculated node's final score for pod":
		if a := l.attemptOf(podName); a != nil {
			if a.Totals == nil {
				a.Totals = map[string]int64{}
			}
			a.Totals[name(f["node"])] = integer(f["score"])
		}

	// Preemption. The preemptor is the logger's pod: scheduleOne puts it
	// on the logger, and PostFilter and SelectVictimsOnNode log through
	// the context's.
	case "Dry run the preemption":
		l.Capabilities.Preemption = true
		if a := l.attemptOf(podName); a != nil {
			a.preemption()
		}
	case "Pods are potential preemption victims on node":
		a := l.attemptOf(podName)
		if a == nil {
			return
		}
		pre := a.preemption()
		if pre.Candidates == nil {
			pre.Candidates = map[string][]string{}
		}
		// One line per victim (or victim group) on the node.
		node := name(f["node"])
		for _, v := range objectRefs(f["pods"]) {
			if !slices.Contains(pre.Candidates[node], v) {
				pre.Candidates[node] = append(pre.Candidates[node], v)
			}
		}
	case "the target node for the preemption is determined":
		l.Capabilities.Preemption = true
		if a := l.attemptOf(podName); a != nil {
			a.preemption().Node = name(f["node"])
		}
	case "No preemption candidate is found; preemption is not helpful for scheduling", "Preemption will not help schedule pod on any node":
		if a := l.attemptOf(podName); a != nil {
			a.preemption().Result = r.Msg
		}
	case "Preemptor Pod preempted victim Pod":
		// The eviction runs after the attempt, maybe while the next one
		// runs: the victims go to the attempt that chose their node.
		l.Capabilities.Preemption = true
		p := l.pod(f["preemptor"])
		for i := len(p.Attempts) - 1; i >= 0; i-- {
			if pre := p.Attempts[i].Preemption; pre != nil && pre.Node == name(f["node"]) {
				pre.Victims = append(pre.Victims, f["victim"])
				break
			}
		}
		l.event(Event{At: r.Time, Source: "scheduler", Reason: "Preempted", Object: f["victim"], Message: "by " + f["preemptor"] + " on " + f["node"]})
	case "Updating pod condition and nominated node name":
		if n := f["nominatedNodeName"]; n != "" && podName != "" {
			l.pod(podName).NominatedNode = n
		}

	// Decisions.
	case "Scheduling decision":
		l.decide(r.Time, podName, f["result"], name(f["node"]), f["message"], f)
	case "Successfully bound pod to node":
		l.decide(r.Time, podName, "scheduled", name(f["node"]), "", f)
	case "Unable to schedule pod; no fit; waiting", "Unable to schedule pod belonging to a pod group; waiting",
		"Unable to schedule pod; no nodes are registered to the cluster; waiting":
		l.decide(r.Time, podName, "unschedulable", "", f["err"], f)
	case "Error scheduling pod; retrying":
		l.decide(r.Time, podName, "error", "", f["err"], f)
	case "Successfully scheduled a pod group", "Unable to schedule a pod group":
		// The cycle is over: the group is out of the queue until a line
		// moves it back.
		g := l.group(f["podGroup"])
		g.Result = r.Msg
		g.Queue = ""

	// Cluster events the scheduler handled.
	case "Add event for node", "Update event for node", "Delete event for node",
		"Add event for unscheduled pod", "Delete event for unscheduled pod",
		"Add event for scheduled pod", "Delete event for scheduled pod",
		"Add event for pod group", "Delete event for pod group":
		obj := f["node"]
		if obj == "" {
			obj = podName
		}
		if obj == "" {
			obj = f["podGroup"]
		}
		l.event(Event{At: r.Time, Source: "scheduler", Reason: r.Msg, Object: name(obj)})
	case "Cluster event handled":
		// Only the events that moved pods: the handlers' own lines
		// already list every event the scheduler received.
		if n, _ := strconv.Atoi(f["moved"]); n > 0 {
			l.event(Event{At: r.Time, Source: "scheduler", Reason: f["event"], Message: "moved " + f["moved"] + " pods"})
		}
	}
}

// member records that pod belongs to group.
func (l *Lane) member(group, pod string) {
	g := l.group(group)
	if !slices.Contains(g.Members, pod) {
		g.Members = append(g.Members, pod)
		slices.Sort(g.Members)
	}
}

func (l *Lane) decide(at time.Time, podName, result, node, message string, f map[string]string) {
	if podName == "" {
		return
	}
	p := l.pod(podName)
	a := p.attempt()
	if a == nil || a.End != nil {
		// kube-scheduler's success line comes from the binding cycle,
		// after the attempt's end; an attempt the log did not start
		// (before -v=3) gets one here.
		if a == nil || result != "scheduled" || a.Result != "" {
			a = &Attempt{Start: at}
			p.Attempts = append(p.Attempts, a)
		}
	}
	end := at
	a.End, a.Result, a.Message = &end, result, message
	if node != "" {
		a.Node = node
	}
	if n, err := strconv.Atoi(f["evaluatedNodes"]); err == nil {
		a.EvaluatedNodes = n
	}
	if n, err := strconv.Atoi(f["feasibleNodes"]); err == nil {
		a.FeasibleNodes = n
	}
	switch {
	case p.Queue == InFlight && result == "scheduled":
		p.Queue = Scheduled
	case p.Queue == InFlight && !l.Capabilities.Queue:
		// Chapters 02-05 have no queue: the pod waits for its retry.
		p.Queue = Pending
	}
}

// attemptOf returns the pod's latest attempt, or nil for a line with no
// pod or a pod with no attempt yet.
func (l *Lane) attemptOf(pod string) *Attempt {
	if pod == "" {
		return nil
	}
	return l.pod(pod).attempt()
}

// preemption returns the attempt's preemption, made on first use.
func (a *Attempt) preemption() *Preemption {
	if a.Preemption == nil {
		a.Preemption = &Preemption{}
	}
	return a.Preemption
}

func (a *Attempt) score(node, plugin string) *Score {
	if a.Scores == nil {
		a.Scores = map[string]map[string]*Score{}
	}
	if a.Scores[node] == nil {
		a.Scores[node] = map[string]*Score{}
	}
	s := a.Scores[node][plugin]
	if s == nil {
		s = &Score{}
		a.Scores[node][plugin] = s
	}
	return s
}

// isGroup says whether an entity's type is a pod group's: upstream's
// EntityKeyType is "pod", "podgroup" or "compositepodgroup".
func isGroup(typ string) bool { return typ != "" && typ != "pod" }

func integer(v string) int64 {
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

func ptr[T any](v T) *T { return &v }

// objectRefs reads a list of objects as klog writes it: names
// (["ns/a"]) or klog.ObjectRefs as JSON ([{"name":"a","namespace":"ns"}]).
func objectRefs(v string) []string {
	var refs []struct{ Name, Namespace string }
	if json.Unmarshal([]byte(v), &refs) == nil {
		var out []string
		for _, r := range refs {
			if r.Name == "" {
				return klogtext.Strings(v)
			}
			if r.Namespace != "" {
				out = append(out, r.Namespace+"/"+r.Name)
			} else {
				out = append(out, r.Name)
			}
		}
		return out
	}
	return klogtext.Strings(v)
}
