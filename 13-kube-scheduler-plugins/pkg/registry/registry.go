// Package registry lists the chapter's plugins, each as the app.Option that
// adds it to kube-scheduler's registry beside the in-tree plugins
// (NewInTreeRegistry in pkg/scheduler/framework/plugins/registry.go). main.go
// passes them to app.NewSchedulerCommand; the tests build the same registry,
// so what they run is what the binary runs.
package registry

import (
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/13-kube-scheduler-plugins/pkg/fit"
	"minisched/13-kube-scheduler-plugins/pkg/nodecost"
	"minisched/13-kube-scheduler-plugins/pkg/random"
)

// Options returns one app.WithPlugin per plugin of the chapter. A name
// already in the in-tree registry is an error when kube-scheduler starts
// (Registry.Merge in framework/runtime/registry.go), which is why the
// chapter's NodeResourcesFit is called Fit.
func Options() []app.Option {
	return []app.Option{
		app.WithPlugin(random.Name, random.New),
		app.WithPlugin(nodecost.Name, nodecost.New),
		app.WithPlugin(fit.Name, fit.New),
	}
}

// New returns the chapter's plugins as a framework registry, built from
// Options as app.Setup builds its out-of-tree registry
// (cmd/kube-scheduler/app/server.go); scheduler.New then merges it into the
// in-tree one.
func New() (frameworkruntime.Registry, error) {
	r := frameworkruntime.Registry{}
	for _, o := range Options() {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}
