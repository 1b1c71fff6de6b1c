package scheduler

import (
	"testing"

	"go.uber.org/goleak"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// TestMain fails the package's tests if any goroutine they started is still
// running at the end: a scheduler that leaks a goroutine per informer, per
// binding cycle or per Permit wait would grow for as long as it runs.
//
// It registers upstream's metrics first, as the scheduler's New does: the
// code under test records into them, and they do not exist before.
func TestMain(m *testing.M) {
	metrics.Register()
	goleak.VerifyTestMain(m)
}
