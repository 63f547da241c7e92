package testserver

import (
	"io"
	"net"
	"testing"
	"time"
)

// A Cut while the proxy dials the target for a connection it has just taken
// closes that connection too: it does not survive the network failure.
func TestProxyCutWhileDialling(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	served := make(chan struct{})
	go func() { // the target: answers one byte on the first connection
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Write([]byte("x"))
		_, _ = io.Copy(io.Discard, c)
	}()

	p := NewProxy(t, ln.Addr().String())
	dialling, release := make(chan struct{}), make(chan struct{})
	p.mu.Lock()
	p.dial = func(network, addr string) (net.Conn, error) {
		close(dialling)
		<-release
		return net.Dial(network, addr)
	}
	p.mu.Unlock()

	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-dialling
	p.Cut()
	close(release)

	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read after Cut while dialling = %d bytes, %v; want EOF", n, err)
	}
	_ = ln.Close()
	p.close()
	<-served
}
