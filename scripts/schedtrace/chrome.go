package schedtrace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Chrome Trace Event JSON, as Perfetto's UI opens it (its JSON importer,
// src/trace_processor/importers/json): a list of events, times in
// microseconds. This writes:
//   - "M" events that name the process and one thread per goroutine that
//     ran a region ("G123 schedulingCycle", after its first region);
//   - an "X" (complete) event per region: ts and dur are its wall time;
//     tts and tdur its goroutine's CPU clock at the start and its CPU time
//     within, which Perfetto shows as "Thread duration";
//   - flow arrows ("bind_id" with "flow_out" on one slice and "flow_in" on
//     the other): from a pod's scheduling cycle to its binding cycle on
//     another goroutine, and from the PostFilter that started an
//     asynchronous preemption to the goroutine that evicts;
//   - an "i" (instant) event per decision logged;
//   - "C" (counter) events for the heap and the goroutines.
//
// Times are written as integer nanoseconds with a decimal point three
// digits from the right, so the microseconds are exact and the slices of a
// goroutine nest exactly as its regions did.

// pid is the one process of the trace; goroutine IDs are the thread IDs.
const pid = 1

type chromeEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat,omitempty"`
	Ts   micros         `json:"ts"`
	Dur  *micros        `json:"dur,omitempty"`
	Tts  *micros        `json:"tts,omitempty"`
	Tdur *micros        `json:"tdur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int64          `json:"tid"`
	S    string         `json:"s,omitempty"`
	Bind uint64         `json:"bind_id,omitempty"`
	Out  bool           `json:"flow_out,omitempty"`
	In   bool           `json:"flow_in,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// micros is a time in nanoseconds, written in microseconds.
type micros int64

func (m micros) MarshalJSON() ([]byte, error) {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return []byte(fmt.Sprintf("%s%d.%03d", sign, v/1000, v%1000)), nil
}

func ptr(v int64) *micros { m := micros(v); return &m }

// Flow is an arrow from one region to another, on another goroutine.
type Flow struct{ From, To *Region }

// Flows returns the arrows WriteChrome draws: for each task, from the
// region where its pod was scheduled (schedulingCycle, or a pod group
// member's podGroupPodSchedulingAlgorithm) to its bindingCycle; and from
// each asynchronous preemption's parent region that was open when it
// began, on the goroutine that began it, to its first region.
func (tr *Trace) Flows() []Flow {
	var flows []Flow
	ids := make([]uint64, 0, len(tr.Tasks))
	for id := range tr.Tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		tk := tr.Tasks[id]
		var sched, bind *Region
		for _, reg := range tk.Regions {
			switch reg.Type {
			case "schedulingCycle", "podGroupPodSchedulingAlgorithm":
				if sched == nil {
					sched = reg
				}
			case "bindingCycle":
				if bind == nil {
					bind = reg
				}
			}
		}
		if sched != nil && bind != nil && sched.Goroutine != bind.Goroutine {
			flows = append(flows, Flow{sched, bind})
		}
		if tk.Type == "asyncPreemption" && len(tk.Regions) > 0 {
			if parent, ok := tr.Tasks[tk.Parent]; ok {
				if from := innermostOpen(parent, tk.Goroutine, tk.Start); from != nil && from.Goroutine != tk.Regions[0].Goroutine {
					flows = append(flows, Flow{from, tk.Regions[0]})
				}
			}
		}
	}
	return flows
}

// innermostOpen is the deepest region of the task open at t on goroutine g.
func innermostOpen(tk *Task, g, t int64) *Region {
	var best *Region
	for _, reg := range tk.Regions {
		if reg.Goroutine == g && reg.Start <= t && t <= reg.End && (best == nil || reg.Depth > best.Depth) {
			best = reg
		}
	}
	return best
}

// WriteChrome writes the trace as Chrome Trace Event JSON.
func (tr *Trace) WriteChrome(w io.Writer) error {
	var events []chromeEvent
	add := func(e chromeEvent) { events = append(events, e) }
	add(chromeEvent{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": "mini-scheduler"}})
	gids := make([]int64, 0, len(tr.Goroutines))
	for id := range tr.Goroutines {
		gids = append(gids, id)
	}
	// Rows in the order the goroutines first did something marked.
	slices.SortFunc(gids, func(a, b int64) int {
		return compareInt(tr.Goroutines[a].Regions[0].Start, tr.Goroutines[b].Regions[0].Start, a, b)
	})
	for i, id := range gids {
		g := tr.Goroutines[id]
		add(chromeEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: id, Args: map[string]any{"name": "G" + strconv.FormatInt(id, 10) + " " + g.Regions[0].Type}})
		add(chromeEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: id, Args: map[string]any{"sort_index": i}})
	}
	flowOut, flowIn := map[*Region]uint64{}, map[*Region]uint64{}
	for i, f := range tr.Flows() {
		// A slice takes part in one flow, as Perfetto's v2 flow fields
		// (one bind_id per slice) allow.
		_, out1 := flowOut[f.From]
		_, in1 := flowIn[f.From]
		_, out2 := flowOut[f.To]
		_, in2 := flowIn[f.To]
		if out1 || in1 || out2 || in2 {
			continue
		}
		flowOut[f.From], flowIn[f.To] = uint64(i+1), uint64(i+1)
	}
	for _, reg := range tr.Regions {
		args := map[string]any{
			"cpu_us":     float64(reg.CPU) / 1000,
			"off_cpu_us": float64(reg.End-reg.Start-reg.CPU) / 1000,
		}
		if tk, ok := tr.Tasks[reg.Task]; ok && tk.Type != "" {
			args["task"] = fmt.Sprintf("%s %d", tk.Type, tk.ID)
			if pod := tr.Pod(reg.Task); pod != "" {
				args["pod"] = pod
			}
		}
		e := chromeEvent{
			Name: reg.Type, Ph: "X", Cat: "region", Ts: micros(reg.Start), Dur: ptr(reg.End - reg.Start),
			Tts: ptr(reg.CPUStart), Tdur: ptr(reg.CPU), Pid: pid, Tid: reg.Goroutine, Args: args,
		}
		if id, ok := flowOut[reg]; ok {
			e.Bind, e.Out = id, true
		}
		if id, ok := flowIn[reg]; ok {
			e.Bind, e.In = id, true
		}
		add(e)
	}
	tids := make([]uint64, 0, len(tr.Tasks))
	for id := range tr.Tasks {
		tids = append(tids, id)
	}
	slices.Sort(tids)
	for _, id := range tids {
		for _, l := range tr.Tasks[id].Logs {
			if l.Category != "decision" {
				continue
			}
			if _, ok := tr.Goroutines[l.Goroutine]; !ok {
				continue
			}
			add(chromeEvent{Name: l.Message, Ph: "i", Cat: "decision", S: "t", Ts: micros(l.Time), Pid: pid, Tid: l.Goroutine,
				Args: map[string]any{"pod": tr.Pod(id)}})
		}
	}
	for _, s := range tr.Heap {
		add(chromeEvent{Name: "heap", Ph: "C", Ts: micros(s.Time), Pid: pid, Args: map[string]any{"bytes": s.Value}})
	}
	for _, s := range tr.GoroutineCount {
		add(chromeEvent{Name: "goroutines", Ph: "C", Ts: micros(s.Time), Pid: pid, Args: map[string]any{"count": s.Value}})
	}
	bw := bufio.NewWriter(w)
	if _, err := io.WriteString(bw, `{"displayTimeUnit":"ms","traceEvents":[`+"\n"); err != nil {
		return err
	}
	for i, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteString(",\n")
		}
		bw.Write(b)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}
