package e2e

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPlay: results are reported in the order of the jobs whatever order
// they finish in, no runner plays two jobs at once, and jobs not started
// when the context ends are not reported.
func TestPlay(t *testing.T) {
	tests := []struct {
		name     string
		lanes, n int
		// cancelAfter cancels the context when that job ends (-1: never).
		cancelAfter int
		wantReport  []int
		wantErr     error
	}{
		{"one lane", 1, 5, -1, []int{0, 1, 2, 3, 4}, nil},
		{"three lanes, later jobs finish first", 3, 7, -1, []int{0, 1, 2, 3, 4, 5, 6}, nil},
		{"more lanes than jobs", 4, 2, -1, []int{0, 1}, nil},
		{"no jobs", 2, 0, -1, nil, nil},
		{"cancelled: the jobs started are reported, no later one", 1, 5, 1, []int{0, 1}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			runners := make([]*Runner, tt.lanes)
			for i := range runners {
				runners[i] = &Runner{}
			}
			var mu sync.Mutex
			busy := map[*Runner]bool{}
			var overlaps int
			var reported []int
			err := Play(ctx, runners, tt.n, func(ctx context.Context, r *Runner, i int) int {
				mu.Lock()
				if busy[r] {
					overlaps++
				}
				busy[r] = true
				mu.Unlock()
				// Earlier jobs take longer, so they finish last.
				time.Sleep(time.Duration(tt.n-i) * 5 * time.Millisecond)
				mu.Lock()
				busy[r] = false
				mu.Unlock()
				if i == tt.cancelAfter {
					cancel()
				}
				return i * 10
			}, func(i, res int) {
				if res != i*10 {
					t.Errorf("job %d reported result %d, want %d", i, res, i*10)
				}
				reported = append(reported, i)
			})
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Play() = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantReport, reported); diff != "" {
				t.Errorf("reported jobs (-want, +got):\n%s", diff)
			}
			if overlaps > 0 {
				t.Errorf("a runner played %d job(s) while busy with another", overlaps)
			}
		})
	}
	t.Run("no runner: an error, not a wait for ever", func(t *testing.T) {
		if err := Play(context.Background(), nil, 2, func(context.Context, *Runner, int) int { return 0 }, func(int, int) {}); err == nil {
			t.Error("Play with no runner and 2 jobs = nil, want an error")
		}
	})
}
