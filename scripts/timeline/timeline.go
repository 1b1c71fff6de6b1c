// Package timeline follows each pod through a chapter's scheduling queue,
// from the scheduler's structured log, and draws it as an SVG: one row per
// pod, its time in activeQ, backoffQ and the unschedulable pool, each
// scheduling attempt, and the moment it was bound.
//
// It reads the lines every chapter from 06 on logs at -v=3 (the e2e runs
// use that level): "Pod moved to an internal scheduling queue" (pod, event,
// queue), "Attempting to schedule pod" (the Pop) and "Scheduling decision"
// (pod, attempt, result). Chapters 01-05 have no queue moves; their rows
// show the attempts only.
package timeline

import (
	"bufio"
	"io"
	"sort"
	"strings"
	"time"

	"minisched/scripts/klogtext"
)

// State is where a pod is between two log lines.
type State string

// The states a row is drawn in. Queue names are the ones the chapters log.
const (
	Active        State = "Active"
	Backoff       State = "Backoff"
	Unschedulable State = "Unschedulable"
	// InFlight is the time between the Pop and the decision.
	InFlight State = "InFlight"
)

// Segment is a stretch of time a pod spent in one state.
type Segment struct {
	State      State
	Start, End time.Duration // since the first line of the log
	Event      string        // the event that moved the pod there, if any
}

// Attempt is one scheduling decision.
type Attempt struct {
	At     time.Duration
	Result string // scheduled, unschedulable or error
}

// Pod is one row.
type Pod struct {
	Name     string // namespace/name
	Segments []Segment
	Attempts []Attempt
	// Bound is when the pod's attempt succeeded; negative if it never did.
	Bound time.Duration
}

// Marker is a node event the scheduler's handlers logged: a node added,
// updated or deleted (every update, also one that changes nothing the
// plugins look at). Drawn across every row, it shows which moves followed
// which update, and which updates moved nothing.
type Marker struct {
	At    time.Duration
	Label string // "node updated n1"
}

// nodeEvents maps the handlers' log messages (eventhandlers.go: Add and
// Delete at -v=3, Update at -v=4, as upstream logs them) to a marker label.
var nodeEvents = map[string]string{
	"Add event for node":    "node added",
	"Update event for node": "node updated",
	"Delete event for node": "node deleted",
}

// Timeline is every pod of a log, in the order they first appear.
type Timeline struct {
	Pods    []*Pod
	Markers []Marker
	// End is the time of the last line read.
	End time.Duration
}

// Parse reads a scheduler's log. Lines it does not know are skipped.
func Parse(r io.Reader) (*Timeline, error) {
	tl := &Timeline{}
	pods := map[string]*Pod{}
	var t0 time.Time
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		rec, ok := klogtext.Parse(sc.Text(), 0)
		if !ok {
			continue
		}
		if t0.IsZero() {
			t0 = rec.Time
		}
		now := rec.Time.Sub(t0)
		tl.End = now
		msg, fields := rec.Msg, rec.Fields
		if label, isNode := nodeEvents[msg]; isNode {
			tl.Markers = append(tl.Markers, Marker{At: now, Label: label + " " + fields["node"]})
			continue
		}
		if fields["pod"] == "" {
			continue
		}
		pod := pods[fields["pod"]]
		if pod == nil && msg != "Pod moved to an internal scheduling queue" && msg != "Attempting to schedule pod" && msg != "Scheduling decision" {
			continue
		}
		if pod == nil {
			pod = &Pod{Name: fields["pod"], Bound: -1}
			pods[pod.Name] = pod
			tl.Pods = append(tl.Pods, pod)
		}
		switch msg {
		case "Pod moved to an internal scheduling queue":
			pod.enter(State(fields["queue"]), now, fields["event"])
		case "Attempting to schedule pod":
			pod.enter(InFlight, now, "")
		case "Scheduling decision":
			pod.Attempts = append(pod.Attempts, Attempt{At: now, Result: fields["result"]})
			if fields["result"] == "scheduled" {
				pod.close(now)
				pod.Bound = now
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, p := range tl.Pods {
		p.close(tl.End)
	}
	return tl, nil
}

// enter ends the pod's current segment and starts one in state s.
func (p *Pod) enter(s State, at time.Duration, event string) {
	p.close(at)
	p.Segments = append(p.Segments, Segment{State: s, Start: at, End: -1, Event: event})
}

// close ends the pod's open segment, if any, at at.
func (p *Pod) close(at time.Duration) {
	if n := len(p.Segments); n > 0 && p.Segments[n-1].End < 0 {
		p.Segments[n-1].End = at
	}
}

// Totals sums the time each pod spent per state, for tests and captions.
func (p *Pod) Totals() map[State]time.Duration {
	out := map[State]time.Duration{}
	for _, s := range p.Segments {
		out[s.State] += s.End - s.Start
	}
	return out
}

// Filter keeps the pods whose name starts with prefix (a namespace and
// its slash, for one scenario), sorted as they first appeared.
func (tl *Timeline) Filter(prefix string) *Timeline {
	// Markers stay: one scenario's scheduler log has only its own nodes.
	out := &Timeline{End: tl.End, Markers: tl.Markers}
	for _, p := range tl.Pods {
		if strings.HasPrefix(p.Name, prefix) {
			out.Pods = append(out.Pods, p)
		}
	}
	sort.SliceStable(out.Pods, func(i, j int) bool { return first(out.Pods[i]) < first(out.Pods[j]) })
	return out
}

func first(p *Pod) time.Duration {
	if len(p.Segments) > 0 {
		return p.Segments[0].Start
	}
	if len(p.Attempts) > 0 {
		return p.Attempts[0].At
	}
	return 0
}
