// Command mini-scheduler is chapter 08 of minisched: a scheduler whose
// queue asks each plugin's queueing hint whether a cluster event could help
// a pod it rejected, and replays the events that arrive while a pod is being
// scheduled. It mirrors cmd/kube-scheduler/scheduler.go of
// k8s.io/kubernetes.
//
//	go run ./08-queueinghint --kubeconfig ~/.kube/config
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/klog/v2"

	"minisched/08-queueinghint/app"
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
