// Command kube-scheduler is chapter 13 of minisched: not a mini scheduler
// but kube-scheduler v1.37.1 itself, built with the plugins this chapter
// writes. Chapters 01-12 wrote the loops (the queue, the scheduling and
// binding cycles, preemption, pod groups); here pkg/scheduler runs them, and
// the chapter only adds plugins to its registry. It mirrors
// cmd/kube-scheduler/scheduler.go of k8s.io/kubernetes, with one
// app.WithPlugin per plugin, as kubernetes-sigs/scheduler-plugins'
// cmd/scheduler/main.go does.
//
// The command line is kube-scheduler's, not the chapters' contract: a
// KubeSchedulerConfiguration (--config) says which plugins run, and where
// the apiserver is (clientConnection.kubeconfig; kube-scheduler ignores
// --kubeconfig when --config is given, options.go ApplyTo). The chapter
// ships one configuration per use under config/. Run from the repository's
// root, on a copy that names the cluster's kubeconfig
// (docs/reference/13-kube-scheduler-plugins.md, Run it, has the steps):
//
//	go run ./13-kube-scheduler-plugins --config /tmp/random.yaml --secure-port=0
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json, as kube-scheduler has it
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go's metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info on /metrics
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"minisched/13-kube-scheduler-plugins/pkg/registry"
)

func main() {
	// The in-tree plugins are in kube-scheduler's registry already;
	// registry.Options adds ours beside them, one app.WithPlugin each.
	command := app.NewSchedulerCommand(registry.Options()...)
	os.Exit(cli.Run(command))
}
