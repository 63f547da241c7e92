package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testenv"
	"github.com/termhost/termhost/internal/testserver"
)

// closedWith checks that c was closed with code and a reason containing want.
func closedWith(t *testing.T, what string, c *client, code websocket.StatusCode, want string) {
	t.Helper()
	err := c.WaitClosed()
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != code || !strings.Contains(ce.Reason, want) {
		t.Errorf("%s: closed with %v, want %d %q", what, err, code, want)
	}
}

// TestPersonConnectionLimit: a person signed in by SSO holds at most
// MaxLinkConns connections, like a share link, and the owner at most
// MaxOwnerConns; one more is closed with 4029 and a reason. Another
// person is not affected.
func TestPersonConnectionLimit(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "", testserver.Handlers(func(c *handlersConfig) {
		c.MaxLinkConns, c.Budgets.MaxOwnerConns = 2, 3
	}))
	bob := rawHeader{{idHeader, "bob@corp.com"}}
	for i := range 2 {
		s.mustDial(t, bob).Initialize("1.0.0", fmt.Sprintf("bob-%d", i))
	}
	third, status := s.dialAs(t, bob)
	if third == nil {
		t.Fatalf("bob's third upgrade: status %d, want an upgrade then a close", status)
	}
	closedWith(t, "bob's third connection", third, 4029, "too many connections of this person (at most 2)")
	s.mustDial(t, rawHeader{{idHeader, "dave@corp.com"}}).Initialize("1.0.0", "dave")

	for i := range 3 {
		s.dial(t).Initialize("1.0.0", fmt.Sprintf("owner-%d", i))
	}
	closedWith(t, "the owner's fourth connection", s.dial(t), 4029, "too many connections of the owner (at most 3)")
}

// fillScrollback makes a terminal whose snapshot is about size bytes of
// output, and returns its URI and the owner's connection.
func fillScrollback(t *testing.T, ts *testServer, id string, size int) (*client, string) {
	t.Helper()
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-"+id)
	uri, _ := owner.CreateTerminal(id, "owner-"+id, nil)
	owner.Subscribe(uri)
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": fmt.Sprintf("head -c %d /dev/urandom | base64 -w 100; echo FILLED-$((6*7))\r", size*3/4)})
	owner.WaitOutput(uri, "FILLED-42")
	return owner, uri
}

// hostile opens a socket with token that initializes and then subscribes
// to uri n times, never reading anything. Its writes run on a goroutine
// that the test's cleanup ends. The caller keeps the socket reachable (a
// socket nothing refers to is closed by its finalizer).
func hostile(t *testing.T, ts *testServer, hc *http.Client, header http.Header, uri string, n int) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", &websocket.DialOptions{HTTPClient: hc, HTTPHeader: header})
	if err != nil {
		cancel()
		t.Fatalf("dial: %v", err)
		return nil
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		req := func(id int, method string, params any) []byte {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
			return b
		}
		if ws.Write(ctx, websocket.MessageText, req(0, "initialize", map[string]any{
			"channel": "ahp-root://", "protocolVersions": []string{"1.0.0"}, "clientId": fmt.Sprintf("hostile-%p", ws)})) != nil {
			return
		}
		for i := range n {
			if ws.Write(ctx, websocket.MessageText, req(i+1, "subscribe", map[string]any{"channel": uri})) != nil {
				return
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		_ = ws.CloseNow()
		wg.Wait()
	})
	return ws
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestUnreadAnswersBounded: sockets of share links and SSO people that
// subscribe in a loop and never read what they asked for cannot make the
// server hold their answers without bound. Each socket stops being read
// once its unsent answers pass AnswerQueue (it is paused, not refused); a
// participant's sockets share ParticipantQueue, everyone's but the
// owner's TotalQueue, past which a socket over its fair share is closed
// with 4001. The heap stays near twice TotalQueue (it grew by the send
// queue, 8 MiB, per socket).
// A subscriber that reads still gets every answer and all output.
func TestUnreadAnswersBounded(t *testing.T) {
	testenv.Volume(t)
	const (
		snapshot = 256 << 10
		total    = 4 << 20
		// asks is how many subscribes each socket sends: their answers
		// stay under the send queue (8 MiB), which used to hold them all.
		asks = 48
	)
	// 128 sockets. Each costs the server socket buffers' worth of
	// snapshots (megabytes) before it holds anything.
	perLink, links, people := 8, 8, 8
	sockets := perLink * (links + people)
	ss := newSSOServer(t, "127.0.0.1/32", "", testserver.Handlers(func(c *handlersConfig) {
		c.Budgets.AnswerQueue, c.Budgets.ParticipantQueue, c.Budgets.TotalQueue = 64<<10, 1<<20, total
		c.Budgets.RequestRate, c.Budgets.RequestBurst = 1e6, 1e6 // not what this test is about
		// A peer reading just enough to stay connected: pings and stalled
		// writes do not end it while the test measures.
		c.PingInterval, c.WriteTimeout = time.Hour, time.Hour
	}))
	ts := ss.testServer
	owner, uri := fillScrollback(t, ts, "big", snapshot)
	reader := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "viewer", "reader"))
	reader.Initialize("1.0.0", "reader")
	reader.Subscribe(uri)

	before := heapInUse()
	hc := smallBuffers
	var held []*websocket.Conn
	defer func() { runtime.KeepAlive(held) }()
	for l := range links {
		h := http.Header{"Authorization": {"Bearer " + shareLabelled(t, owner, uri, "viewer", fmt.Sprint("link", l))}}
		for range perLink {
			held = append(held, hostile(t, ts, hc, h, uri, asks))
		}
	}
	for p := range people {
		h := http.Header{idHeader: {"carol@partner.org"}} // the one viewer of the roles
		if p > 0 {
			h = http.Header{idHeader: {fmt.Sprintf("p%d@corp.com", p)}} // a driver
		}
		for range perLink {
			held = append(held, hostile(t, ts, hc, h, uri, asks))
		}
	}
	// Every hostile socket ends up paused (its reader waits) or closed.
	// (Without the budgets none pauses: they held up to the send queue,
	// 8 MiB, each.)
	poll.Until(t, 60*time.Second, "every hostile socket paused or closed", func() bool {
		return ts.srv.PausedReaders()+int64(ts.srv.OverBudget("answers")) >= int64(sockets)
	})
	grown := int64(heapInUse()) - int64(before)
	t.Logf("%d sockets never reading: heap grew by %.1f MiB, %d paused, unsent answers %.1f MiB",
		sockets, float64(grown)/(1<<20), ts.srv.PausedReaders(), float64(ts.srv.UnsentAnswers())/(1<<20))
	// Past TotalQueue only a participant over its fair share is refused,
	// so the total stays under twice TotalQueue (fairShare).
	if ts.srv.UnsentAnswers() > 2*total {
		t.Errorf("unsent answers %d bytes, over twice the total %d", ts.srv.UnsentAnswers(), total)
	}
	// Each socket costs its buffers and goroutines (both ends are in this
	// process) besides what the server holds for it.
	if bound := int64(2*total + sockets*96<<10); grown > bound {
		t.Errorf("the heap grew by %.1f MiB with %d sockets never reading; want under %.1f MiB", float64(grown)/(1<<20), sockets, float64(bound)/(1<<20))
	}

	// The reading subscriber is unaffected: output still reaches it.
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo still-$((1+1))\r"})
	reader.WaitOutput(uri, "still-2")
}

// TestRequestRate: costly requests are paced per participant. A viewer
// link's sockets re-subscribing in a loop (or asking for previews) get at
// most burst + rate×elapsed answers, while the owner, on its own bucket,
// types and sees its echo. Pacing, not refusal: every request is answered.
func TestRequestRate(t *testing.T) {
	const (
		rate    = 20
		burst   = 5
		sockets = 4
		each    = 10
	)
	ts := newServer(t, testserver.Handlers(func(c *handlersConfig) {
		c.Budgets.RequestRate, c.Budgets.RequestBurst = rate, burst
	}))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("rate", "owner", nil)
	owner.Subscribe(uri)

	for _, method := range []string{"subscribe", "x-termhost/screen"} {
		t.Run(method, func(t *testing.T) {
			tok := shareLabelled(t, owner, uri, "viewer", method)
			var viewers []*client
			start := time.Now() // the initializes count too
			for i := range sockets {
				v := ts.dial(t, "Authorization", "Bearer "+tok)
				v.Initialize("1.0.0", fmt.Sprintf("%s-%d", method, i)) // initialize is paced too
				viewers = append(viewers, v)
			}
			var wg sync.WaitGroup
			for _, v := range viewers {
				wg.Go(func() {
					for range each {
						id, err := v.Send(method, map[string]any{"channel": uri})
						if err != nil {
							t.Error(err)
							return
						}
						if _, rpcErr := v.Response(json.RawMessage(id)); rpcErr != nil {
							t.Errorf("%s: %d %s", method, rpcErr.Code, rpcErr.Message)
						}
					}
				})
			}
			// The owner types while the link loops: its echo comes back.
			for i := range 5 {
				owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": fmt.Sprintf("echo owner-%d-$((%d*2))\r", i, i)})
				owner.WaitOutput(uri, fmt.Sprintf("owner-%d-%d", i, i*2))
			}
			wg.Wait()
			elapsed := time.Since(start).Seconds()
			n := sockets * (each + 1) // the initializes count too
			if allowed := burst + rate*elapsed + 1; float64(n) > allowed {
				t.Errorf("%d %s requests (and initializes) answered in %.2fs: over burst %d + %d/s (%.0f)", n, method, elapsed, burst, rate, allowed)
			}
		})
	}
}

// TestDownloadShares: a share link runs at most two downloads at once (a
// third gets 429 with Retry-After), links together never take the last
// slot, so the owner's download succeeds while links hold theirs without
// reading; a download whose client takes nothing for DownloadStall is cut
// off and frees its slot.
func TestDownloadShares(t *testing.T) {
	t.Parallel()
	// The stall bound must outlast the set-up below (the downloads held
	// open must all be in flight when the next is refused): 300 ms did
	// not at load 36. The end waits for it once.
	ts, uri := bigRecording(t, 32<<20, testserver.Handlers(func(c *handlersConfig) { c.Budgets.DownloadStall = poll.Short }))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-2")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	get := func(tok string) *http.Response {
		t.Helper()
		resp, err := hc.Do(authorized(t, ts.URL+"/t/big/recording.cast", tok))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	refused := func(what string, resp *http.Response, status int, want string) {
		t.Helper()
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), want) {
			t.Fatalf("%s: %d, Retry-After %q, %q; want %d with Retry-After, %q", what, resp.StatusCode, resp.Header.Get("Retry-After"), b, status, want)
		}
	}
	var held []*http.Response // bodies left unread: the tricklers
	defer func() {
		for _, r := range held {
			r.Body.Close()
		}
	}()
	var toks []string
	for l := range handlers.MaxDownloads / 2 {
		tok := shareLabelled(t, owner, uri, "viewer", fmt.Sprint("dl", l))
		toks = append(toks, tok)
		for range 2 {
			if l == handlers.MaxDownloads/2-1 && len(held) == handlers.MaxDownloads-1 {
				refused("a link's download into the owner's slot", get(tok), http.StatusServiceUnavailable, "too many downloads at once")
				continue
			}
			resp := get(tok)
			if resp.StatusCode != 200 {
				t.Fatalf("link %d's download: %d", l, resp.StatusCode)
			}
			held = append(held, resp)
		}
	}
	refused("a link's third download", get(toks[0]), http.StatusTooManyRequests, "too many downloads of this share link at once (at most 2)")

	// The owner's download runs in the slot kept for it, to the end.
	resp := get(ownerToken)
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil || n < 16<<20 {
		t.Fatalf("the owner's download: %d, %d bytes, %v", resp.StatusCode, n, err)
	}

	// The tricklers are cut off, every one (reading held[0] before its cut
	// would un-stall it): the first link gets its slots back.
	poll.Until(t, 30*time.Second, "every stalled download cut off", func() bool {
		return ts.srv.OverBudget("download_stalled") >= float64(len(held))
	})
	resp = get(toks[0])
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the first link's download once its stalled ones were cut: %d", resp.StatusCode)
	}
	n, err = io.Copy(io.Discard, held[0].Body)
	if err == nil || n > 16<<20 {
		t.Errorf("a stalled download read %d bytes then %v; want it cut short", n, err)
	}
}

// TestAgentHasItsOwnBudget: an agent (termhost mcp) signs in with the
// owner's credential but is a participant of its own, paced like a share
// link: its loops do not draw on the owner's bucket, which would pace the
// owner's own tabs.
func TestAgentHasItsOwnBudget(t *testing.T) {
	const (
		rate  = 20
		burst = 5
		asks  = 30
	)
	ts := newServer(t, testserver.Handlers(func(c *handlersConfig) {
		c.Budgets.RequestRate, c.Budgets.RequestBurst = rate, burst
		c.Budgets.OwnerRequestRate, c.Budgets.OwnerRequestBurst = 1e6, 1e6
	}))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("agent-budget", "owner", nil)

	agent := ts.dial(t)
	agent.MustCall("initialize", map[string]any{"channel": "ahp-root://", "protocolVersions": []string{"1.0.0"},
		"clientId": "agent", "clientInfo": map[string]any{"name": "termhost-mcp", "title": "a looping agent"}})
	start := time.Now()
	for range asks {
		agent.MustCall("x-termhost/screen", map[string]any{"channel": uri})
	}
	elapsed := time.Since(start).Seconds()
	if allowed := burst + rate*elapsed + 1; asks > allowed {
		t.Errorf("an agent's %d previews answered in %.2fs: over its own burst %d + %d/s (%.0f); it drew on the owner's bucket", asks, elapsed, burst, rate, allowed)
	}
}
