package watch

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"

	"minisched/scripts/klogtext"
)

// Input is one thing a lane learned, in the order it learned it: a line
// of the scheduler's log, or an object from the apiserver. A recording is
// a header and the inputs, one JSON object per line; a replay applies them
// again, so what it shows at a time is what the live page showed then.
type Input struct {
	At      time.Time       `json:"at"`
	Lane    int             `json:"lane"`
	Log     string          `json:"log,omitempty"`
	Pod     *v1.Pod         `json:"pod,omitempty"`
	Node    *v1.Node        `json:"node,omitempty"`
	Event   *eventsv1.Event `json:"event,omitempty"`
	Deleted bool            `json:"deleted,omitempty"`
	// PendingPods is the scheduler's scheduler_pending_pods gauge by queue,
	// read from its /metrics.
	PendingPods map[string]float64 `json:"pendingPods,omitempty"`
}

// Header is a recording's first line.
type Header struct {
	Lanes []string `json:"lanes"`
	// Upstream marks kube-scheduler's lanes, by index; Chapters gives
	// the chapters' numbers.
	Upstream []bool    `json:"upstream,omitempty"`
	Chapters []int     `json:"chapters,omitempty"`
	Started  time.Time `json:"started"`
	// Caption says what was recorded, when and where; the replay shows
	// it.
	Caption string `json:"caption,omitempty"`
}

// Apply applies an input to lanes.
func Apply(lanes []*Lane, in Input) error {
	if in.Lane < 0 || in.Lane >= len(lanes) {
		return fmt.Errorf("input for lane %d of %d", in.Lane, len(lanes))
	}
	l := lanes[in.Lane]
	switch {
	case in.Log != "":
		if r, ok := klogtext.Parse(in.Log, in.At.Year()); ok {
			l.ApplyLog(r)
		}
	case in.Pod != nil:
		l.ApplyPod(in.At, in.Pod, in.Deleted)
	case in.Node != nil:
		l.ApplyNode(in.At, in.Node, in.Deleted)
	case in.Event != nil:
		l.ApplyEvent(in.At, in.Event, in.Deleted)
	case in.PendingPods != nil:
		l.PendingPods = in.PendingPods
	}
	return nil
}

// Recording is a recording read back.
type Recording struct {
	Header Header
	Inputs []Input
}

// ReadRecording reads a recording. A line that is not JSON is an error
// with its number.
func ReadRecording(r io.Reader) (*Recording, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	rec := &Recording{}
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			if err := json.Unmarshal(sc.Bytes(), &rec.Header); err != nil || len(rec.Header.Lanes) == 0 {
				return nil, fmt.Errorf("line 1: not a make watch recording (want a header with its lanes)")
			}
			continue
		}
		var in Input
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if in.Lane < 0 || in.Lane >= len(rec.Header.Lanes) {
			return nil, fmt.Errorf("line %d: lane %d, but the recording has %d", n, in.Lane, len(rec.Header.Lanes))
		}
		rec.Inputs = append(rec.Inputs, in)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if rec.Header.Lanes == nil {
		return nil, fmt.Errorf("empty file: not a make watch recording")
	}
	// In file order, the order the live session applied them in (it
	// stamps each input under its lock).
	return rec, nil
}

// At returns the lanes as they were at time t: every input up to t
// applied.
func (rec *Recording) At(t time.Time) []*Lane {
	lanes := make([]*Lane, len(rec.Header.Lanes))
	for i, name := range rec.Header.Lanes {
		lanes[i] = NewLane(name)
		lanes[i].Upstream = i < len(rec.Header.Upstream) && rec.Header.Upstream[i]
		if i < len(rec.Header.Chapters) {
			lanes[i].Chapter = rec.Header.Chapters[i]
		}
	}
	for _, in := range rec.Inputs {
		if in.At.After(t) {
			break
		}
		_ = Apply(lanes, in)
	}
	return lanes
}

// Span is the time of the first and the last input.
func (rec *Recording) Span() (time.Time, time.Time) {
	if len(rec.Inputs) == 0 {
		return rec.Header.Started, rec.Header.Started
	}
	return rec.Inputs[0].At, rec.Inputs[len(rec.Inputs)-1].At
}

// Recorder writes a recording as the inputs come.
type Recorder struct {
	w   *bufio.Writer
	enc *json.Encoder
}

// NewRecorder writes the header.
func NewRecorder(w io.Writer, h Header) (*Recorder, error) {
	bw := bufio.NewWriter(w)
	r := &Recorder{w: bw, enc: json.NewEncoder(bw)}
	if err := r.enc.Encode(h); err != nil {
		return nil, err
	}
	return r, bw.Flush()
}

// Write appends an input; Flush makes what was written readable.
func (r *Recorder) Write(in Input) error { return r.enc.Encode(in) }

// Flush writes out what the recorder buffered.
func (r *Recorder) Flush() error { return r.w.Flush() }

// View is what the page draws of a lane: the lane with its maps as
// sorted lists.
type View struct {
	Name         string       `json:"name"`
	Upstream     bool         `json:"upstream,omitempty"`
	Chapter      int          `json:"chapter,omitempty"`
	Start        time.Time    `json:"start"`
	Capabilities Capabilities `json:"capabilities"`
	Nodes        []*Node      `json:"nodes"`
	Pods         []*Pod       `json:"pods"`
	Groups       []*Group     `json:"groups"`
	Events       []Event      `json:"events"`
	// PendingPods is scheduler_pending_pods by queue, from /metrics.
	PendingPods map[string]float64 `json:"pendingPods,omitempty"`
}

// View returns the lane as the page draws it.
func (l *Lane) View() View {
	v := View{Name: l.Name, Upstream: l.Upstream, Chapter: l.Chapter, Start: l.Start, Capabilities: l.Capabilities, Events: slices.Clone(l.Events), PendingPods: l.PendingPods}
	for _, n := range l.Nodes {
		v.Nodes = append(v.Nodes, n)
	}
	for _, p := range l.Pods {
		v.Pods = append(v.Pods, p)
	}
	for _, g := range l.Groups {
		v.Groups = append(v.Groups, g)
	}
	slices.SortFunc(v.Nodes, func(a, b *Node) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(v.Pods, func(a, b *Pod) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(v.Groups, func(a, b *Group) int { return cmp.Compare(a.Name, b.Name) })
	if v.Nodes == nil {
		v.Nodes = []*Node{}
	}
	if v.Pods == nil {
		v.Pods = []*Pod{}
	}
	if v.Groups == nil {
		v.Groups = []*Group{}
	}
	if v.Events == nil {
		v.Events = []Event{}
	}
	return v
}
