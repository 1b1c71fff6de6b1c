package preemption

import (
	"os"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// TestMain registers upstream's metrics before the tests run, as the
// scheduler's New does: preemption records into them, and the dry runs'
// Parallelizer counts its goroutines in one, and they do not exist before.
func TestMain(m *testing.M) {
	metrics.Register()
	os.Exit(m.Run())
}
