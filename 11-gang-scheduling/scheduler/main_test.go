package scheduler

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine they started is still
// running at the end: a scheduler that leaks a goroutine per informer, per
// binding cycle or per Permit wait would grow for as long as it runs.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
