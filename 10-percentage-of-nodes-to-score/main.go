// Command mini-scheduler is chapter 10 of minisched: a scheduler that, in
// a large cluster, stops looking for feasible nodes once it has found
// enough (percentageOfNodesToScore), starts each search where the last
// one stopped, over a node list that interleaves the zones, and runs the
// filters and the scores on several goroutines. It mirrors
// cmd/kube-scheduler/scheduler.go of k8s.io/kubernetes.
//
//	go run ./10-percentage-of-nodes-to-score --kubeconfig ~/.kube/config
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/klog/v2"

	"minisched/10-percentage-of-nodes-to-score/app"
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
