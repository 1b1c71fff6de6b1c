package schedtrace

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Validate checks Chrome Trace Event JSON against the rules of Perfetto's
// JSON importer (src/trace_processor/importers/json, and its docs'
// "other formats" page) that a converter can break:
//   - the file is an object with a "traceEvents" list;
//   - every event has a name, a known phase and a pid; a thread's events a
//     tid other than 0 (Perfetto turns tid 0 into the pid);
//   - every "X" event has a dur; its tdur, if any, is at most its dur;
//   - the "X" events of one thread nest: one that starts inside another
//     ends inside it (Perfetto moves the others to an overflow track);
//   - a bind_id is on exactly one flow_out and one flow_in slice, and the
//     flow goes forward in time;
//   - "M" events name with args.name or sort with args.sort_index; "C"
//     events have numeric args.
//
// Perfetto's UI and trace processor cannot be installed on this machine
// (neither npm nor Debian packages them); this is the check make trace and
// the tests run instead.
func Validate(data []byte) error {
	var doc struct {
		TraceEvents []map[string]json.RawMessage `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not a JSON trace: %w", err)
	}
	if doc.TraceEvents == nil {
		return fmt.Errorf("no traceEvents list")
	}
	type slice struct{ start, end int64 }
	threads := map[string][]slice{}
	type flowEnd struct {
		out, in  int
		outStart int64
		inStart  int64
	}
	flows := map[uint64]*flowEnd{}
	for i, e := range doc.TraceEvents {
		var name, ph string
		if err := json.Unmarshal(e["name"], &name); err != nil || name == "" {
			return fmt.Errorf("event %d has no name", i)
		}
		if err := json.Unmarshal(e["ph"], &ph); err != nil {
			return fmt.Errorf("event %d (%s) has no phase", i, name)
		}
		if _, ok := e["pid"]; !ok {
			return fmt.Errorf("event %d (%s) has no pid", i, name)
		}
		tid := string(e["tid"])
		var args map[string]json.RawMessage
		if raw, ok := e["args"]; ok {
			if err := json.Unmarshal(raw, &args); err != nil {
				return fmt.Errorf("event %d (%s): args: %w", i, name, err)
			}
		}
		switch ph {
		case "M":
			_, named := args["name"]
			_, sorted := args["sort_index"]
			if !named && !sorted {
				return fmt.Errorf("metadata event %d (%s) has neither args.name nor args.sort_index", i, name)
			}
		case "C":
			if len(args) == 0 {
				return fmt.Errorf("counter event %d (%s) has no args", i, name)
			}
			for k, v := range args {
				if _, err := strconv.ParseFloat(string(v), 64); err != nil {
					return fmt.Errorf("counter event %d (%s): args.%s is not a number", i, name, k)
				}
			}
		case "i":
			if tid == "" || tid == "0" {
				return fmt.Errorf("instant event %d (%s) has no tid", i, name)
			}
		case "X":
			if tid == "" || tid == "0" {
				return fmt.Errorf("slice %d (%s) has no tid", i, name)
			}
			ts, err := nanos(e["ts"])
			if err != nil {
				return fmt.Errorf("slice %d (%s): ts: %w", i, name, err)
			}
			dur, err := nanos(e["dur"])
			if err != nil {
				return fmt.Errorf("slice %d (%s) has no dur", i, name)
			}
			if raw, ok := e["tdur"]; ok {
				tdur, err := nanos(raw)
				if err != nil || tdur > dur || tdur < 0 {
					return fmt.Errorf("slice %d (%s): tdur %s is not within dur %s", i, name, raw, e["dur"])
				}
			}
			threads[tid] = append(threads[tid], slice{ts, ts + dur})
			if raw, ok := e["bind_id"]; ok {
				id, err := strconv.ParseUint(string(raw), 10, 64)
				if err != nil {
					return fmt.Errorf("slice %d (%s): bind_id %s", i, name, raw)
				}
				f := flows[id]
				if f == nil {
					f = &flowEnd{}
					flows[id] = f
				}
				switch {
				case string(e["flow_out"]) == "true":
					f.out++
					f.outStart = ts
				case string(e["flow_in"]) == "true":
					f.in++
					f.inStart = ts
				default:
					return fmt.Errorf("slice %d (%s): bind_id without flow_out or flow_in", i, name)
				}
			}
		default:
			return fmt.Errorf("event %d (%s): phase %q is not one this converter writes", i, name, ph)
		}
	}
	for tid, slices_ := range threads {
		// Longer first at equal start, as Perfetto sorts them.
		slices.SortFunc(slices_, func(a, b slice) int {
			if a.start != b.start {
				return int(clampSign(a.start - b.start))
			}
			return int(clampSign(b.end - a.end))
		})
		var open []slice
		for _, s := range slices_ {
			for len(open) > 0 && open[len(open)-1].end <= s.start {
				open = open[:len(open)-1]
			}
			if len(open) > 0 && s.end > open[len(open)-1].end {
				return fmt.Errorf("thread %s: slice [%d, %d] ns overlaps [%d, %d] ns without nesting", tid, s.start, s.end, open[len(open)-1].start, open[len(open)-1].end)
			}
			open = append(open, s)
		}
	}
	for id, f := range flows {
		if f.out != 1 || f.in != 1 {
			return fmt.Errorf("flow %d has %d flow_out and %d flow_in slices, want one each", id, f.out, f.in)
		}
		if f.inStart < f.outStart {
			return fmt.Errorf("flow %d goes back in time", id)
		}
	}
	return nil
}

// nanos reads a time in microseconds, as written, in nanoseconds.
func nanos(raw json.RawMessage) (int64, error) {
	if raw == nil {
		return 0, fmt.Errorf("missing")
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, err
	}
	return int64(math.Round(v * 1000)), nil
}
