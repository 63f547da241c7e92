package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/terminals"
)

// fakeClock moves only when told; its timers fire inside Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) auth.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for _, t := range c.timers {
		if !t.stopped && !t.at.After(c.now) {
			t.stopped = true
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// A share link's connections are cut at its expiry, timed from
// the earliest expiry (re-planned on create and revoke), and the link is
// refused from that instant.
func TestShareExpiryCutsConnectionsOnTime(t *testing.T) {
	clk := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	var hooks Hooks
	m, err := terminals.NewManager(terminals.Config{Shell: "/bin/cat", Env: []string{"PATH=" + os.Getenv("PATH")}, Hooks: hooks.Manager()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Manager: m, Hooks: &hooks, OwnerToken: "test-owner-token", clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		s.Close()
		ts.Close()
		m.Close()
	})
	st := s.auth.Shares
	newLink := func(ttl time.Duration) (*auth.Share, string) {
		sh, tok, err := st.Create("ahp-terminal:/x", auth.RoleViewer, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return sh, tok
	}
	dial := func(tok string) (*websocket.Conn, error) {
		ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws",
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
		if err == nil {
			t.Cleanup(func() { _ = ws.CloseNow() })
		}
		return ws, err
	}
	// closed waits (bounded well below the old 5 s poll) for the server to close ws.
	closed := func(ws *websocket.Conn) error {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return err
			}
		}
	}

	_, longTok := newLink(time.Hour)
	revoked, revokedTok := newLink(5 * time.Second) // earliest, then revoked: the timer must move on
	_, shortTok := newLink(10 * time.Second)        // created after the hour-long one
	long, err := dial(longTok)
	if err != nil {
		t.Fatal(err)
	}
	short, err := dial(shortTok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dial(revokedTok); err != nil {
		t.Fatal(err)
	}
	st.Revoke(revoked.ID)

	clk.Advance(10 * time.Second)
	if err := closed(short); websocket.CloseStatus(err) != closeRevoked {
		t.Errorf("10 s link at its expiry: %v, want close %d within 2 s", err, closeRevoked)
	}
	if _, err := dial(shortTok); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("dial with the expired link: %v, want 401", err)
	}
	// The hour-long link is still fine.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := long.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hour-long link after 10 s: %v, want still open", err)
	}
	long2, err := dial(longTok) // a fresh dial: the read above closed long
	if err != nil {
		t.Fatalf("hour-long link after 10 s: %v", err)
	}
	clk.Advance(time.Hour)
	if err := closed(long2); websocket.CloseStatus(err) != closeRevoked {
		t.Errorf("hour-long link at its expiry: %v, want close %d", err, closeRevoked)
	}
}
