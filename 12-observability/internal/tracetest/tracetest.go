// Package tracetest reads back the execution traces the chapter's tests
// record: what each runtime/trace task holds, so that a test can check the
// tasks, regions and logs the scheduler marked. It is for tests only.
package tracetest

import (
	"bytes"
	"errors"
	"io"

	"golang.org/x/exp/trace"
)

// Task is what a trace says of one task.
type Task struct {
	ID, Parent uint64
	// Type is the name given to trace.NewTask; "" if it began before the
	// trace did.
	Type string
	// Logs are its log messages, "category: message", in order.
	Logs []string
	// Regions are the types of its regions, in the order they began, and
	// Goroutines the goroutines that ran them.
	Regions    []string
	Goroutines map[int64]bool
}

// Read returns the tasks of an execution trace, by ID.
func Read(data []byte) (map[uint64]*Task, error) {
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tasks := map[uint64]*Task{}
	get := func(id trace.TaskID) *Task {
		t := tasks[uint64(id)]
		if t == nil {
			t = &Task{ID: uint64(id), Goroutines: map[int64]bool{}}
			tasks[uint64(id)] = t
		}
		return t
	}
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			return tasks, nil
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind() {
		case trace.EventTaskBegin:
			t := get(ev.Task().ID)
			t.Type, t.Parent = ev.Task().Type, uint64(ev.Task().Parent)
		case trace.EventLog:
			l := ev.Log()
			t := get(l.Task)
			t.Logs = append(t.Logs, l.Category+": "+l.Message)
		case trace.EventRegionBegin:
			t := get(ev.Region().Task)
			t.Regions = append(t.Regions, ev.Region().Type)
			t.Goroutines[int64(ev.Goroutine())] = true
		}
	}
}

// OfType returns the tasks of a type.
func OfType(tasks map[uint64]*Task, taskType string) []*Task {
	var out []*Task
	for _, t := range tasks {
		if t.Type == taskType {
			out = append(out, t)
		}
	}
	return out
}
