package e2e

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMain lets the test binary play a scheduler in TestStartScheduler:
// run as a child process with MINISCHED_FAKE_SCHEDULER set, it runs
// fakeScheduler instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("MINISCHED_FAKE_SCHEDULER"); mode != "" {
		fakeScheduler(mode)
	}
	os.Exit(m.Run())
}

// fakeScheduler binds its --metrics-bind-address after a delay, as
// kube-scheduler binds after generating its certificate, exiting 1 with the
// listen error when the address is taken, and exits 0 on SIGTERM; or, in
// mode "fail", exits 1 at once, as on a bad flag.
func fakeScheduler(mode string) {
	if mode == "fail" {
		fmt.Println("unknown flag")
		os.Exit(1)
	}
	var addr string
	for _, a := range os.Args {
		if v, ok := strings.CutPrefix(a, "--metrics-bind-address="); ok {
			addr = v
		}
	}
	time.Sleep(300 * time.Millisecond)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer l.Close()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
	os.Exit(0)
}

// TestStartScheduler: a scheduler whose address another process took
// before it could bind it is started again on another address, even though
// a connection to the first address succeeds (the other process answers);
// a scheduler that fails for another reason is started once.
func TestStartScheduler(t *testing.T) {
	// taken listens on an address, as another lane's scheduler would.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name string
		mode string
		// takenFirst hands the scheduler the taken address on its first start.
		takenFirst bool
		wantStarts int
		wantServe  bool
	}{
		{"address free", "serve", false, 1, true},
		{"address taken before the bind: started again on another", "serve", true, 2, true},
		{"exits for another reason: started once", "fail", false, 1, false},
	}
	defer func(orig func() (string, error)) { pickAddress = orig }(pickAddress)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var handed []string
			pickAddress = func() (string, error) {
				if tt.takenFirst && len(handed) == 0 {
					handed = append(handed, taken.Addr().String())
					return taken.Addr().String(), nil
				}
				addr, err := freeAddress()
				handed = append(handed, addr)
				return addr, err
			}
			t.Setenv("MINISCHED_FAKE_SCHEDULER", tt.mode)
			s := Scheduler{Label: "fake", Command: []string{os.Args[0]}}
			p, err := StartScheduler(s, "unused", nil, filepath.Join(t.TempDir(), "fake.log"))
			if err != nil {
				t.Fatal(err)
			}
			serveErr := p.WaitServing()
			got := struct {
				Starts int
				Serves bool
				Addr   string
			}{len(handed), serveErr == nil, p.Addr()}
			want := got
			want.Starts, want.Serves, want.Addr = tt.wantStarts, tt.wantServe, handed[len(handed)-1]
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nWaitServing: %v", diff, serveErr)
			}
			if tt.wantServe {
				if err := p.Stop(true); err != nil {
					t.Error(err)
				}
			} else if !p.Exited() {
				t.Error("the failing scheduler is still running")
			}
		})
	}
}
