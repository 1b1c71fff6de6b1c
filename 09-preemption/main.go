// Command mini-scheduler is chapter 09 of minisched: a scheduler that,
// when a pod fits on no node, preempts pods of lower priority to make room
// for it, nominates the node for it, and deletes the victims in the
// background. It mirrors cmd/kube-scheduler/scheduler.go of
// k8s.io/kubernetes.
//
//	go run ./09-preemption --kubeconfig ~/.kube/config
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/klog/v2"

	"minisched/09-preemption/app"
)

func main() {
	// SIGINT and SIGTERM cancel the context; Run then returns and the
	// process exits 0.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Run(ctx, os.Args[1:], os.Stdout)
	stop()
	klog.Flush()
	if err != nil {
		// One line, whatever the error wraps.
		fmt.Fprintln(os.Stderr, "mini-scheduler: "+strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
}
