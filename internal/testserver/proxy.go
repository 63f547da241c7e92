package testserver

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP relay in front of a server, for the network failures a test
// needs: Cut drops every connection, Refuse also refuses new ones until
// Accept, Freeze stops forwarding while keeping the sockets open (a network
// that silently stalls) until Resume, and Retarget points new connections at
// another server (a restart).
type Proxy struct {
	ln net.Listener
	wg sync.WaitGroup

	mu      sync.Mutex
	target  string
	refuse  bool
	refused int // connections refused so far
	frozen  bool
	changed *sync.Cond // broadcast on Resume, Cut and each refusal
	conns   map[net.Conn]struct{}
	dial    func(network, addr string) (net.Conn, error) // net.Dial; tests hold it to widen a race
}

// NewProxy relays 127.0.0.1:<random> to target (host:port). Cleanup closes it.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, dial: net.Dial}
	p.changed = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is the proxy's http URL.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.refuse {
			p.refused++
			p.changed.Broadcast()
			p.mu.Unlock()
			_ = in.Close()
			continue
		}
		target, dial := p.target, p.dial
		// Registered before dialling, so that a Cut or Refuse while the
		// target is dialled closes this connection too.
		p.conns[in] = struct{}{}
		p.mu.Unlock()
		out, err := dial("tcp", target)
		p.mu.Lock()
		_, open := p.conns[in] // false when cut meanwhile
		ok := err == nil && open
		if ok {
			p.conns[out] = struct{}{}
		} else {
			delete(p.conns, in)
		}
		p.mu.Unlock()
		if !ok {
			_ = in.Close()
			if err == nil {
				_ = out.Close()
			}
			continue
		}
		p.wg.Add(2)
		go p.relay(out, in)
		go p.relay(in, out)
	}
}

// relay copies src to dst until either closes, holding each chunk while the
// proxy is frozen.
func (p *Proxy) relay(dst, src net.Conn) {
	defer p.wg.Done()
	defer func() {
		_, _ = dst.Close(), src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitThawed(src) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// waitThawed blocks while the proxy is frozen; false when the connection was
// cut meanwhile.
func (p *Proxy) waitThawed(src net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if _, open := p.conns[src]; !open {
			return false
		}
		if !p.frozen {
			return true
		}
		p.changed.Wait()
	}
}

// Cut drops every open connection, as a network failure would. A connection
// is open once the proxy has taken it from its listener, which may be after the
// client's connect returned: a test that needs it cut (or kept on its target by
// Retarget) first gets an answer through it.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
	p.changed.Broadcast() // frozen relays of the cut connections return
}

// Refuse cuts every connection and refuses new ones until Accept.
func (p *Proxy) Refuse() {
	p.mu.Lock()
	p.refuse = true
	p.mu.Unlock()
	p.Cut()
}

// WaitRefused waits until the proxy has refused n connections in all (a
// client tried to reconnect while the network was down), or ctx ends.
func (p *Proxy) WaitRefused(ctx context.Context, n int) error {
	stop := context.AfterFunc(ctx, func() { p.mu.Lock(); p.changed.Broadcast(); p.mu.Unlock() })
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.refused < n {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%d of %d connections refused: %w", p.refused, n, err)
		}
		p.changed.Wait()
	}
	return nil
}

// Accept lets new connections through again after Refuse.
func (p *Proxy) Accept() {
	p.mu.Lock()
	p.refuse = false
	p.mu.Unlock()
}

// Freeze stops forwarding in both directions but keeps every socket open:
// bytes wait in the proxy until Resume.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// Resume forwards again what Freeze held, in order.
func (p *Proxy) Resume() {
	p.mu.Lock()
	p.frozen = false
	p.changed.Broadcast()
	p.mu.Unlock()
}

// Retarget sends new connections to addr (host:port); open ones (see Cut)
// stay.
func (p *Proxy) Retarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

func (p *Proxy) close() {
	_ = p.ln.Close()
	p.Resume()
	p.Refuse()
	p.wg.Wait()
}
