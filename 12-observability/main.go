// Command mini-scheduler is chapter 12 of minisched: chapter 11's
// scheduler, which schedules the pods of a PodGroup
// (scheduling.k8s.io/v1beta1, the Workload API of KEP-4671) together,
// observed: /metrics serves upstream's scheduler metrics, recorded where
// upstream records them, and --trace-file writes a Go execution trace of
// every attempt (make trace turns it into pictures). The apiserver must
// serve the PodGroup API (--feature-gates=GenericWorkload=true
// --runtime-config=scheduling.k8s.io/v1beta1=true). It mirrors
// cmd/kube-scheduler/scheduler.go of k8s.io/kubernetes.
//
//	go run ./12-observability --kubeconfig ~/.kube/config
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/klog/v2"

	"minisched/12-observability/app"
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
