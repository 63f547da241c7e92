package testserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// echoServer answers each line it reads with the line and its name.
func echoServer(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if _, err := io.WriteString(c, name+":"+sc.Text()+"\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

// conn is one client connection through the proxy.
type conn struct {
	t  *testing.T
	c  net.Conn
	rd *bufio.Reader
}

func dial(t *testing.T, p *testserver.Proxy) *conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &conn{t: t, c: c, rd: bufio.NewReader(c)}
}

// roundTrip sends line and returns the answer (or the read error).
func (c *conn) roundTrip(line string, timeout time.Duration) (string, error) {
	c.t.Helper()
	_ = c.c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c.c, line+"\n"); err != nil {
		return "", err
	}
	s, err := c.rd.ReadString('\n')
	return strings.TrimSuffix(s, "\n"), err
}

func TestProxy(t *testing.T) {
	const wait = 5 * time.Second
	t.Run("relays", func(t *testing.T) {
		p := testserver.NewProxy(t, echoServer(t, "a"))
		if got, err := dial(t, p).roundTrip("hi", wait); got != "a:hi" || err != nil {
			t.Errorf("round trip = %q, %v; want a:hi", got, err)
		}
	})
	t.Run("cut closes open connections, new ones pass", func(t *testing.T) {
		p := testserver.NewProxy(t, echoServer(t, "a"))
		c := dial(t, p)
		if _, err := c.roundTrip("1", wait); err != nil {
			t.Fatal(err)
		}
		p.Cut()
		if got, err := c.roundTrip("2", wait); err == nil {
			t.Errorf("after Cut: got %q, want the connection closed", got)
		}
		if got, err := dial(t, p).roundTrip("3", wait); got != "a:3" || err != nil {
			t.Errorf("new connection after Cut = %q, %v; want a:3", got, err)
		}
	})
	t.Run("refuse until accept", func(t *testing.T) {
		p := testserver.NewProxy(t, echoServer(t, "a"))
		p.Refuse()
		if got, err := dial(t, p).roundTrip("1", wait); err == nil {
			t.Errorf("while refusing: got %q, want the connection closed", got)
		}
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		defer cancel()
		if err := p.WaitRefused(ctx, 1); err != nil {
			t.Errorf("WaitRefused(1) after one refused connection: %v", err)
		}
		short, cancelShort := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancelShort()
		if err := p.WaitRefused(short, 2); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitRefused(2) after one refused connection = %v, want the deadline", err)
		}
		p.Accept()
		if got, err := dial(t, p).roundTrip("2", wait); got != "a:2" || err != nil {
			t.Errorf("after Accept = %q, %v; want a:2", got, err)
		}
	})
	t.Run("freeze holds bytes on open sockets until resume", func(t *testing.T) {
		p := testserver.NewProxy(t, echoServer(t, "a"))
		c := dial(t, p)
		p.Freeze()
		got, err := c.roundTrip("held", 200*time.Millisecond)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("while frozen: got %q, %v; want a read timeout on an open socket", got, err)
		}
		p.Resume()
		_ = c.c.SetDeadline(time.Now().Add(wait))
		if s, err := c.rd.ReadString('\n'); s != "a:held\n" || err != nil {
			t.Errorf("after Resume = %q, %v; want the held line", s, err)
		}
	})
	t.Run("cut while frozen closes", func(t *testing.T) {
		p := testserver.NewProxy(t, echoServer(t, "a"))
		c := dial(t, p)
		if _, err := c.roundTrip("1", wait); err != nil { // the proxy holds it: Cut has it to close
			t.Fatal(err)
		}
		p.Freeze()
		_, _ = c.roundTrip("held", 100*time.Millisecond)
		p.Cut()
		_ = c.c.SetDeadline(time.Now().Add(wait))
		if s, err := c.rd.ReadString('\n'); err == nil {
			t.Errorf("after Cut while frozen: got %q, want the connection closed", s)
		}
		p.Resume()
	})
	t.Run("retarget", func(t *testing.T) {
		p := testserver.NewProxy(t, echoServer(t, "a"))
		old := dial(t, p)
		// A connection is open for the proxy once it has taken it from
		// its listener and dialled the target, which happens after the
		// client's connect returns: one answer through it says it has.
		if got, err := old.roundTrip("1", wait); got != "a:1" || err != nil {
			t.Fatalf("before Retarget = %q, %v; want a:1", got, err)
		}
		p.Retarget(echoServer(t, "b"))
		if got, err := dial(t, p).roundTrip("1", wait); got != "b:1" || err != nil {
			t.Errorf("new connection after Retarget = %q, %v; want b:1", got, err)
		}
		if got, err := old.roundTrip("2", wait); got != "a:2" || err != nil {
			t.Errorf("open connection after Retarget = %q, %v; want a:2", got, err)
		}
	})
}

func TestServer(t *testing.T) {
	get := func(t *testing.T, url string) int {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	t.Run("defaults", func(t *testing.T) {
		s := testserver.New(t)
		if s.Token != testserver.OwnerToken || s.Manager == nil || s.Handler == nil {
			t.Errorf("server = %+v, want the owner token, a manager and a handler", s)
		}
		if st, err := os.Stat(s.Home); err != nil || !st.IsDir() {
			t.Errorf("home %s: %v", s.Home, err)
		}
		if code := get(t, s.URL+"/healthz"); code != http.StatusOK {
			t.Errorf("GET /healthz = %d, want 200", code)
		}
	})
	t.Run("options", func(t *testing.T) {
		var gotURL string
		s := testserver.NewAt(t, func(url string) []testserver.Option {
			gotURL = url
			return []testserver.Option{testserver.NoAuth(), testserver.BasePath("/term"), testserver.TestHooks(),
				testserver.Env("X=1"), testserver.Handlers(func(c *handlers.Config) { c.Version = "t" })}
		})
		if gotURL != s.URL {
			t.Errorf("options got URL %q, server runs at %q", gotURL, s.URL)
		}
		if s.Token != "" {
			t.Errorf("NoAuth server token = %q, want none", s.Token)
		}
		if code := get(t, s.URL+"/term/healthz"); code != http.StatusOK {
			t.Errorf("GET /term/healthz = %d, want 200", code)
		}
	})
}
