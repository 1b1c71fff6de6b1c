package e2e

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// partition is a TCP proxy between one scheduler and kube-apiserver, so a
// test can cut the network between them. Cut closes every connection and
// stops listening: from then on each request the scheduler sends fails at
// once with "connection refused", as when the apiserver's host is gone.
// Restore listens again on the same address.
//
// Stopping kube-apiserver itself is a gentler loss: it shuts down
// gracefully, answering the requests still arriving on open connections
// with 503 and Retry-After for as long as that takes, and client-go keeps
// retrying those. What the scheduler then sees depends on how long the
// shutdown lasts on a busy machine. A cut is the same every time, and
// kube-apiserver keeps writing its audit log, so every Binding that
// reached it is counted.
type partition struct {
	target, addr string

	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// newPartition listens on a free port of 127.0.0.1 and forwards to target
// (host:port).
func newPartition(target string) (*partition, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &partition{target: target, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	p.serve(ln)
	return p, nil
}

func (p *partition) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return // closed by Cut
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.forward(client)
			}()
		}
	}()
}

// forward copies both ways until either side closes, or Cut closes both.
func (p *partition) forward(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(true, client, server) {
		client.Close()
		server.Close()
		return
	}
	defer p.track(false, client, server)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(server, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, server); done <- struct{}{} }()
	<-done
	client.Close()
	server.Close()
	<-done
}

// track adds or removes a pair of connections. It refuses to add one while
// the partition is cut: the pair was accepted just before the cut.
func (p *partition) track(add bool, conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add && p.ln == nil {
		return false
	}
	for _, c := range conns {
		if add {
			p.conns[c] = true
		} else {
			delete(p.conns, c)
		}
	}
	return true
}

// Cut drops every connection and stops listening.
func (p *partition) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return
	}
	p.ln.Close()
	p.ln = nil
	for c := range p.conns {
		c.Close()
	}
}

// Restore listens on the same address again.
func (p *partition) Restore() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("listening on %s again: %w", p.addr, err)
	}
	p.serve(ln)
	return nil
}

// Close cuts and waits for every goroutine of the partition to end.
func (p *partition) Close() {
	p.Cut()
	p.wg.Wait()
}

// partitionKubeconfig starts a partition in front of the apiserver that
// the kubeconfig at src names, and writes to dst a copy of it that goes
// through the partition. The apiserver's certificate names 127.0.0.1, not
// a port, so TLS works through the proxy.
func partitionKubeconfig(src, dst string) (*partition, error) {
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return nil, err
	}
	if len(cfg.Clusters) != 1 {
		return nil, fmt.Errorf("%s names %d clusters, want 1", src, len(cfg.Clusters))
	}
	var cluster *clientcmdapi.Cluster
	for _, c := range cfg.Clusters {
		cluster = c
	}
	u, err := url.Parse(cluster.Server)
	if err != nil {
		return nil, fmt.Errorf("the server of %s: %w", src, err)
	}
	p, err := newPartition(u.Host)
	if err != nil {
		return nil, err
	}
	u.Host = p.addr
	cluster.Server = u.String()
	if err := clientcmd.WriteToFile(*cfg, dst); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}
