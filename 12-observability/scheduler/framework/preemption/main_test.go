package preemption

import (
	"os"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// TestMain registers upstream's metrics before the tests run, as the
// scheduler's New does: preemption records into them, the dry runs'
// Parallelizer counts its goroutines in one, and they do not exist
// before. The GenericWorkload feature gate goes on first, as the
// scheduler package's init turns it on: upstream's Register registers the
// preemption's duration and PDB metrics only with it.
func TestMain(m *testing.M) {
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(features.GenericWorkload): true}); err != nil {
		panic(err)
	}
	metrics.Register()
	os.Exit(m.Run())
}
