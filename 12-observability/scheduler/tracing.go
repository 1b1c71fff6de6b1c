package scheduler

// This file has no counterpart in k8s.io/kubernetes v1.37.1, whose only
// tracing is utiltrace's "Scheduling" log line for a schedulePod call
// of 100 ms or more. KEP-5927 (kubernetes/enhancements#5927) proposes
// OpenTelemetry spans for schedulingCycle, bindingCycle and each plugin;
// this chapter marks the same steps with Go's runtime/trace instead, which
// the execution tracer records with when each goroutine ran: so a trace
// shows where each attempt's CPU time went, which spans alone cannot.

import (
	"context"
	"runtime/trace"
)

// startTask begins a trace task named taskType under ctx's task, and
// returns the context that carries it and the function that ends it. With
// no trace being recorded, it returns ctx and a function that does
// nothing: trace.NewTask would allocate a task and a context on every
// attempt, traced or not.
//
//workshop:part 12/4
func startTask(ctx context.Context, taskType string) (context.Context, func()) {
	if !trace.IsEnabled() {
		return ctx, func() {}
	}
	ctx, task := trace.NewTask(ctx, taskType)
	return ctx, task.End
}

// traceLog writes a log message under ctx's task, if a trace is being
// recorded; the caller builds message only then, as its arguments would
// allocate otherwise:
//
//	if trace.IsEnabled() { traceLog(ctx, "decision", ...) }
func traceLog(ctx context.Context, category, message string) {
	trace.Log(ctx, category, message)
}
