package e2e

import (
	"bufio"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// echoServer answers each line with the same line, until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line through conn and returns what comes back.
func roundTrip(conn net.Conn, line string) (string, error) {
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(conn).ReadString('\n')
}

// TestPartition: traffic passes, a cut closes the open connection and
// refuses new ones, and a restore on the same address lets traffic pass
// again.
func TestPartition(t *testing.T) {
	p, err := newPartition(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	open, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	got, err := roundTrip(open, "before")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("before\n", got); diff != "" {
		t.Errorf("echo before the cut (-want, +got):\n%s", diff)
	}

	p.Cut()
	if _, err := roundTrip(open, "during"); err == nil {
		t.Error("the connection opened before the cut still works after it")
	}
	if _, err := net.Dial("tcp", p.addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dialing during the cut: got %v, want connection refused", err)
	}

	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	again, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got, err = roundTrip(again, "after")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("after\n", got); diff != "" {
		t.Errorf("echo after the restore (-want, +got):\n%s", diff)
	}
}
