// Package schedtrace reads a Go execution trace of a scheduler run
// (chapter 12's --trace-file) and turns it into what a reader can look at:
// Chrome Trace Event JSON for Perfetto's UI (chrome.go) and an SVG laid out
// along CPU time (svg.go).
//
// The scheduler marks its work with runtime/trace: one task per scheduling
// attempt, regions for the scheduling cycle, the binding cycle, each
// extension point and each plugin, and logs for the decisions. The
// execution tracer adds when every goroutine ran. Go has no per-goroutine
// CPU clock (golang/go#41554), so this package builds one: a goroutine's
// CPU time is the time it spent in the Running state, on a thread, and a
// region's CPU time is the part of its wall time that its goroutine was
// running. It is an upper bound: the operating system may have taken the
// thread off the CPU meanwhile, which the Go trace does not see (on a
// machine whose cores are all busy, as a laptop running a whole cluster).
package schedtrace

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"golang.org/x/exp/trace"
)

// Trace is what Read keeps of an execution trace. Times are nanoseconds
// since the trace's first event.
type Trace struct {
	// End is the time of the last event.
	End int64
	// Goroutines holds every goroutine that ran a region, by ID.
	Goroutines map[int64]*Goroutine
	// Tasks holds every task, by ID.
	Tasks map[uint64]*Task
	// Regions holds every region, in the order they began.
	Regions []*Region
	// Heap samples the bytes of live and unswept heap objects, and
	// GoroutineCount the goroutines that exist, both over time.
	Heap, GoroutineCount []Sample
}

// Goroutine is one goroutine's running intervals and regions.
type Goroutine struct {
	ID int64
	// Running holds the intervals in which the goroutine was running on a
	// thread, in order, without overlap.
	Running []Interval
	// Regions holds its regions, in the order they began.
	Regions []*Region
	// cpuBefore[i] is the running time before Running[i] began.
	cpuBefore []int64
}

// Interval is a span of time, [Start, End).
type Interval struct{ Start, End int64 }

// Task is one runtime/trace task: a scheduling attempt, a pod group's
// attempt, or an asynchronous preemption.
type Task struct {
	ID, Parent uint64
	// Type is the name given to trace.NewTask ("schedulingAttempt", ...);
	// empty if the task began before the trace did.
	Type       string
	Start, End int64
	// Goroutine began the task.
	Goroutine int64
	Logs      []Log
	Regions   []*Region
	Children  []*Task
}

// Log is one runtime/trace log message.
type Log struct {
	Time              int64
	Goroutine         int64
	Category, Message string
}

// Region is one runtime/trace region, with the CPU time its goroutine
// spent in it.
type Region struct {
	Goroutine int64
	Task      uint64
	Type      string
	// Start and End are wall times; a region that began before the trace
	// starts at 0, one that had not ended ends at Trace.End.
	Start, End int64
	// Depth is 0 for a region no other region of its goroutine encloses.
	Depth  int
	Parent *Region
	// CPUStart is the goroutine's CPU time when the region began (a
	// thread clock), and CPU the running time within the region.
	CPUStart, CPU int64
}

// Sample is a counter's value at a time.
type Sample struct {
	Time  int64
	Value uint64
}

// heapMetric is the runtime/metrics name the tracer samples the heap by.
const heapMetric = "/memory/classes/heap/objects:bytes"

// Read parses an execution trace.
func Read(r io.Reader) (*Trace, error) {
	rd, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading the trace: %w", err)
	}
	tr := &Trace{Goroutines: map[int64]*Goroutine{}, Tasks: map[uint64]*Task{}}
	running := map[int64]int64{} // goroutine -> when it started running
	all := map[int64]*Goroutine{}
	stacks := map[int64][]*Region{}
	alive := map[int64]bool{}
	var t0 trace.Time
	first := true
	goroutine := func(id int64) *Goroutine {
		g := all[id]
		if g == nil {
			g = &Goroutine{ID: id}
			all[id] = g
		}
		return g
	}
	task := func(id uint64) *Task {
		t := tr.Tasks[id]
		if t == nil {
			t = &Task{ID: id, Parent: uint64(trace.NoTask)}
			tr.Tasks[id] = t
		}
		return t
	}
	for {
		ev, err := rd.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the trace: %w", err)
		}
		if first {
			t0, first = ev.Time(), false
		}
		now := int64(ev.Time().Sub(t0))
		tr.End = max(tr.End, now)
		switch ev.Kind() {
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			id := int64(st.Resource.Goroutine())
			from, to := st.Goroutine()
			if to == trace.GoRunning && from != trace.GoRunning {
				running[id] = now
			}
			if from == trace.GoRunning && to != trace.GoRunning {
				if start, ok := running[id]; ok {
					g := goroutine(id)
					g.Running = append(g.Running, Interval{start, now})
					delete(running, id)
				}
			}
			// A goroutine exists from its creation, or from the trace's
			// start if it existed before, until it exits.
			switch {
			case to == trace.GoNotExist && alive[id]:
				delete(alive, id)
				tr.GoroutineCount = append(tr.GoroutineCount, Sample{now, uint64(len(alive))})
			case to != trace.GoNotExist && !alive[id] && (from == trace.GoNotExist || from == trace.GoUndetermined):
				alive[id] = true
				tr.GoroutineCount = append(tr.GoroutineCount, Sample{now, uint64(len(alive))})
			}
		case trace.EventRegionBegin:
			id := int64(ev.Goroutine())
			r := ev.Region()
			reg := &Region{Goroutine: id, Task: uint64(r.Task), Type: r.Type, Start: now, Depth: len(stacks[id])}
			if n := len(stacks[id]); n > 0 {
				reg.Parent = stacks[id][n-1]
			}
			stacks[id] = append(stacks[id], reg)
			tr.Regions = append(tr.Regions, reg)
		case trace.EventRegionEnd:
			id := int64(ev.Goroutine())
			r := ev.Region()
			if n := len(stacks[id]); n > 0 && stacks[id][n-1].Type == r.Type {
				stacks[id][n-1].End = now
				stacks[id] = stacks[id][:n-1]
				continue
			}
			// It began before the trace did: it encloses everything its
			// goroutine has done since the start.
			reg := &Region{Goroutine: id, Task: uint64(r.Task), Type: r.Type, Start: 0, End: now}
			for _, inner := range tr.Regions {
				if inner.Goroutine == id && inner.Start >= 0 && inner.End <= now && inner.End != 0 {
					inner.Depth++
					if inner.Parent == nil {
						inner.Parent = reg
					}
				}
			}
			tr.Regions = append([]*Region{reg}, tr.Regions...)
		case trace.EventTaskBegin:
			t := ev.Task()
			tk := task(uint64(t.ID))
			tk.Type, tk.Parent, tk.Start, tk.Goroutine = t.Type, uint64(t.Parent), now, int64(ev.Goroutine())
		case trace.EventTaskEnd:
			tk := task(uint64(ev.Task().ID))
			tk.End = now
		case trace.EventLog:
			l := ev.Log()
			tk := task(uint64(l.Task))
			tk.Logs = append(tk.Logs, Log{Time: now, Goroutine: int64(ev.Goroutine()), Category: l.Category, Message: l.Message})
		case trace.EventMetric:
			if m := ev.Metric(); m.Name == heapMetric {
				tr.Heap = append(tr.Heap, Sample{now, m.Value.Uint64()})
			}
		}
	}
	// What was still going on when the trace stopped ends with it.
	for id, start := range running {
		g := goroutine(id)
		g.Running = append(g.Running, Interval{start, tr.End})
	}
	for _, stack := range stacks {
		for _, reg := range stack {
			reg.End = tr.End
		}
	}
	for _, tk := range tr.Tasks {
		if tk.End == 0 {
			tk.End = tr.End
		}
		if p, ok := tr.Tasks[tk.Parent]; ok && tk.Parent != tk.ID {
			p.Children = append(p.Children, tk)
		}
	}
	for _, tk := range tr.Tasks {
		slices.SortFunc(tk.Children, func(a, b *Task) int { return compareInt(a.Start, b.Start, int64(a.ID), int64(b.ID)) })
	}
	for _, g := range all {
		sort.Slice(g.Running, func(i, j int) bool { return g.Running[i].Start < g.Running[j].Start })
		g.cpuBefore = make([]int64, len(g.Running))
		var sum int64
		for i, iv := range g.Running {
			g.cpuBefore[i] = sum
			sum += iv.End - iv.Start
		}
	}
	slices.SortStableFunc(tr.Regions, func(a, b *Region) int { return compareInt(a.Start, b.Start, int64(a.Depth), int64(b.Depth)) })
	for _, reg := range tr.Regions {
		g := goroutine(reg.Goroutine)
		tr.Goroutines[g.ID] = g
		g.Regions = append(g.Regions, reg)
		reg.CPUStart = g.CPUAt(reg.Start)
		reg.CPU = g.CPUAt(reg.End) - reg.CPUStart
		if tk, ok := tr.Tasks[reg.Task]; ok {
			tk.Regions = append(tk.Regions, reg)
		}
	}
	return tr, nil
}

func compareInt(a, b, tieA, tieB int64) int {
	switch {
	case a != b:
		return int(clampSign(a - b))
	default:
		return int(clampSign(tieA - tieB))
	}
}

func clampSign(d int64) int64 {
	switch {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}

// CPUAt is the goroutine's running time before t: its CPU clock.
func (g *Goroutine) CPUAt(t int64) int64 {
	// The first interval that ends after t.
	i := sort.Search(len(g.Running), func(i int) bool { return g.Running[i].End > t })
	if i == len(g.Running) {
		if i == 0 {
			return 0
		}
		last := g.Running[i-1]
		return g.cpuBefore[i-1] + last.End - last.Start
	}
	iv := g.Running[i]
	if t <= iv.Start {
		return g.cpuBefore[i]
	}
	return g.cpuBefore[i] + t - iv.Start
}

// Pod is the pod or pod group a task is about, from its first "pod" or
// "podGroup" log, or its parent's; empty if none says.
func (tr *Trace) Pod(id uint64) string {
	for seen := 0; seen < 64; seen++ {
		tk, ok := tr.Tasks[id]
		if !ok {
			return ""
		}
		for _, l := range tk.Logs {
			if l.Category == "pod" || l.Category == "podGroup" {
				return l.Message
			}
		}
		id = tk.Parent
	}
	return ""
}

// Decision is a task's last "decision" log message, or "".
func (tr *Trace) Decision(id uint64) string {
	tk, ok := tr.Tasks[id]
	if !ok {
		return ""
	}
	for i := len(tk.Logs) - 1; i >= 0; i-- {
		if tk.Logs[i].Category == "decision" {
			return tk.Logs[i].Message
		}
	}
	return ""
}

// Descendants returns the task and every task under it, the task first.
func (tr *Trace) Descendants(id uint64) []*Task {
	tk, ok := tr.Tasks[id]
	if !ok {
		return nil
	}
	out := []*Task{tk}
	for _, c := range tk.Children {
		out = append(out, tr.Descendants(c.ID)...)
	}
	return out
}

// CPU is the running time of the task's own regions, counting each
// goroutine's outermost region of the task once, so nested regions are
// not counted twice. The regions of tasks under it count only where they
// run inside one of its regions (a pod group's members, inside its
// podGroupCycle), not on goroutines of their own.
func (tr *Trace) CPU(id uint64) int64 {
	tk, ok := tr.Tasks[id]
	if !ok {
		return 0
	}
	var sum int64
	for _, reg := range tk.Regions {
		if reg.Parent == nil || reg.Parent.Task != id {
			sum += reg.CPU
		}
	}
	return sum
}
