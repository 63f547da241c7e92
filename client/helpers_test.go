package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/terminals"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testToken = "client-test-token"

// server is the real router and terminal manager behind httptest.
type server struct {
	*httptest.Server
	m *terminals.Manager
}

func newServer(t *testing.T) *server {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := terminals.NewManager(terminals.Config{Shell: "/bin/bash", ShellArgs: []string{"--norc", "--noprofile"},
		Cwd: t.TempDir(), Logger: log, DisposeGrace: 500 * time.Millisecond,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PS1=$ "}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := handlers.New(handlers.Config{Manager: m, Logger: log, OwnerToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
		m.Close()
	})
	return &server{Server: ts, m: m}
}

// dial connects a client that the test closes at cleanup.
func dial(t *testing.T, url string, opts client.Options) *client.Client {
	t.Helper()
	if opts.Token == "" {
		opts.Token = testToken
	}
	c, err := client.Dial(t.Context(), url, opts)
	if err != nil {
		t.Fatalf("Dial(%s): %v", url, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// createShell creates a bash terminal claimed by c and subscribes to it.
func createShell(t *testing.T, c *client.Client, id string) string {
	t.Helper()
	uri := ahp.TerminalURI(id)
	_, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: uri,
		Claim: &ahp.Claim{Kind: ahp.ClaimClient, ClientID: c.ClientID()}})
	if err != nil {
		t.Fatalf("createTerminal: %v", err)
	}
	if _, err := c.Subscribe(t.Context(), uri); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	return uri
}

// text is the whole output of a terminal state.
func text(st ahp.TerminalState) string {
	var b strings.Builder
	for _, p := range st.Content {
		b.WriteString(p.Text())
	}
	return b.String()
}

// waitEvent takes events until match accepts one (or fails the test at the
// deadline), returning every event taken.
func waitEvent(t *testing.T, c *client.Client, what string, match func(client.Event) bool) []client.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var seen []client.Event
	for {
		ev, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v (after %d events)", what, err, len(seen))
		}
		seen = append(seen, ev)
		if match(ev) {
			return seen
		}
	}
}

// outputContains matches an action event whose terminal state holds s.
func outputContains(channel, s string) func(client.Event) bool {
	return func(ev client.Event) bool {
		st, ok := ev.State.(ahp.TerminalState)
		return ev.Channel == channel && ok && strings.Contains(text(st), s)
	}
}

// proxy is a TCP relay whose connections the test can cut (a network drop)
// and whose target it can change (a server restart).
type proxy struct {
	ln     net.Listener
	mu     sync.Mutex
	target string
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		out, err := net.Dial("tcp", target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		relay := func(dst, src net.Conn) {
			defer p.wg.Done()
			_, _ = io.Copy(dst, src)
			_, _ = dst.Close(), src.Close()
		}
		go relay(in, out)
		go relay(out, in)
	}
}

// cut drops every relayed connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func (p *proxy) retarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

func isAHPError(err error, code int) bool {
	var e *ahp.Error
	return errors.As(err, &e) && e.Code == code
}
