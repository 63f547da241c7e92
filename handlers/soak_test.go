package handlers_test

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/proctest"
	"github.com/termhost/termhost/terminals"
)

var soakFor = flag.Duration("soak", 0, "run TestSoak this long with 50 connections churning 200 terminals (default: a short run)")

// soakConn is one churning client. Across its transports (reconnects) it
// keeps, per channel, every accepted envelope in arrival order, and the
// subscription periods that slice that list.
type soakConn struct {
	t       *testing.T
	ts      *testServer
	id      string
	ws      *websocket.Conn
	done    chan struct{}
	nextID  int
	mu      sync.Mutex
	pending map[int]pendingCall
	recv    map[string][]ahp.Envelope
	periods []period
	subs    map[string]bool
	lastSeq int64 // highest serverSeq seen on the current transport
}

// pendingCall is a request in flight; apply runs in the reader, under c.mu,
// before any later frame is recorded.
type pendingCall struct {
	ch    chan *ahp.Message
	apply func(*ahp.Message)
}

// period: subscribed to channel from snapshot seq from; its envelopes are
// recv[channel][start:] up to the next period of the channel.
type period struct {
	channel string
	from    int64
	start   int
}

func newSoakConn(t *testing.T, ts *testServer, id string) *soakConn {
	c := &soakConn{t: t, ts: ts, id: id, recv: map[string][]ahp.Envelope{}, subs: map[string]bool{}}
	c.dial()
	return c
}

func (c *soakConn) dial() {
	ws, _, err := websocket.Dial(c.t.Context(), "ws"+strings.TrimPrefix(c.ts.URL, "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + ownerToken}}})
	if err != nil {
		c.t.Fatalf("%s: dial: %v", c.id, err)
	}
	ws.SetReadLimit(64 << 20)
	c.mu.Lock()
	c.ws, c.done, c.pending, c.lastSeq = ws, make(chan struct{}), map[int]pendingCall{}, 0
	c.mu.Unlock()
	go c.read(ws, c.done)
}

func (c *soakConn) read(ws *websocket.Conn, done chan struct{}) {
	defer close(done)
	for {
		_, data, err := ws.Read(c.t.Context())
		if err != nil {
			c.mu.Lock()
			for _, p := range c.pending {
				close(p.ch)
			}
			c.pending = map[int]pendingCall{}
			c.mu.Unlock()
			return
		}
		var m ahp.Message
		if err := json.Unmarshal(data, &m); err != nil {
			c.t.Errorf("%s: invalid JSON: %v", c.id, err)
			return
		}
		c.mu.Lock()
		if m.Method == "action" {
			c.recordLocked(decodeEnvelope(c.t, m.Params))
		} else if m.ID != nil {
			var id int
			_ = json.Unmarshal(m.ID, &id)
			if p, ok := c.pending[id]; ok {
				delete(c.pending, id)
				if p.apply != nil {
					p.apply(&m)
				}
				p.ch <- &m
			}
		}
		c.mu.Unlock()
	}
}

func (c *soakConn) recordLocked(e ahp.Envelope) {
	if e.ServerSeq <= c.lastSeq {
		c.t.Errorf("%s: serverSeq %d after %d", c.id, e.ServerSeq, c.lastSeq)
	}
	c.lastSeq = e.ServerSeq
	// Rejections and input echoes go to their dispatcher only (subscribed
	// or not): they are not part of the channel's shared stream.
	if e.RejectionReason == "" && e.Action.Type != ahp.TerminalInput {
		c.recv[e.Channel] = append(c.recv[e.Channel], e)
	}
}

// resultLocked applies a reconnect result in stream order.
func (c *soakConn) resultLocked(m *ahp.Message) {
	var r struct {
		Type      string            `json:"type"`
		Actions   []json.RawMessage `json:"actions"`
		Snapshots []ahp.Snapshot    `json:"snapshots"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
		return
	}
	switch r.Type {
	case "replay":
		for _, raw := range r.Actions {
			c.recordLocked(decodeEnvelope(c.t, raw))
		}
	case "snapshot":
		for _, s := range r.Snapshots {
			c.periods = append(c.periods, period{channel: s.Resource, from: s.FromSeq, start: len(c.recv[s.Resource])})
			c.lastSeq = max(c.lastSeq, s.FromSeq)
		}
	}
}

func (c *soakConn) call(method string, params any) *ahp.Message {
	return c.callApply(method, params, nil)
}

func (c *soakConn) callApply(method string, params any, apply func(*ahp.Message)) *ahp.Message {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan *ahp.Message, 1)
	c.pending[id] = pendingCall{ch, apply}
	ws := c.ws
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if ws.Write(c.t.Context(), websocket.MessageText, b) != nil {
		return nil
	}
	select {
	case m := <-ch:
		return m
	case <-time.After(60 * time.Second):
		c.t.Errorf("%s: %s timed out", c.id, method)
		return nil
	}
}

func (c *soakConn) notify(method string, params any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	_ = c.ws.Write(c.t.Context(), websocket.MessageText, b)
}

func (c *soakConn) initialize() {
	if m := c.call("initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": c.id}); m == nil || m.Error != nil {
		c.t.Fatalf("%s: initialize failed", c.id)
	}
}

func (c *soakConn) subscribe(uri string) {
	c.callApply("subscribe", map[string]any{"channel": uri}, func(m *ahp.Message) {
		var r struct {
			Snapshot ahp.Snapshot `json:"snapshot"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
			return // disposed meanwhile
		}
		c.periods = append(c.periods, period{channel: uri, from: r.Snapshot.FromSeq, start: len(c.recv[uri])})
		c.subs[uri] = true
		// A snapshot's fromSeq counts as seen: the reconnect watermark must
		// not ask for actions the snapshot already contains.
		c.lastSeq = max(c.lastSeq, r.Snapshot.FromSeq)
	})
}

func (c *soakConn) unsubscribe(uri string) {
	c.notify("unsubscribe", map[string]any{"channel": uri})
	c.mu.Lock()
	delete(c.subs, uri)
	c.mu.Unlock()
}

// reconnect drops the transport and resumes with a legacy reconnect.
func (c *soakConn) reconnect() {
	_ = c.ws.CloseNow()
	<-c.done
	c.mu.Lock()
	last := c.lastSeq
	subs := []string{ahp.RootURI}
	for uri := range c.subs {
		subs = append(subs, uri)
	}
	c.mu.Unlock()
	c.dial()
	c.mu.Lock()
	c.lastSeq = last
	c.mu.Unlock()
	if m := c.callApply("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": c.id, "lastSeenServerSeq": last, "subscriptions": subs}, c.resultLocked); m == nil || m.Error != nil {
		c.t.Errorf("%s: reconnect failed: %+v", c.id, m)
	}
}

func (c *soakConn) close() {
	_ = c.ws.CloseNow()
	<-c.done
}

// soakTruth is the stream TestSoak checks every connection against: a
// subscriber inside the server, on each terminal from its creation, which
// the hub hands every action under its lock as it publishes it. Its
// Deliver only appends, so it never falls behind nor skips ahead, and it
// holds everything published by the time a connection can have received
// it. (A connection as the reference fell behind on a loaded machine: it
// lacked what others had already got.)
type soakTruth struct {
	mu   sync.Mutex
	recv map[string][]ahp.Envelope
}

func (s *soakTruth) Shape() ahp.Shape { return ahp.Current }
func (s *soakTruth) Scope() string    { return "" }
func (s *soakTruth) ClientID() string { return "" } // no client: never in presence, never the claim holder
func (s *soakTruth) ViewOnly() bool   { return true }
func (s *soakTruth) Hold()            {}
func (s *soakTruth) Backlog() int     { return 0 }
func (s *soakTruth) Drained() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func (s *soakTruth) Deliver(f *terminals.Frame) bool {
	e := f.Envelope()
	if e.Channel == "" { // a notification of the server's own (presence)
		return true
	}
	s.mu.Lock()
	s.recv[e.Channel] = append(s.recv[e.Channel], e)
	s.mu.Unlock()
	return true
}

// newest is, by channel, the serverSeq of the newest action published.
func (s *soakTruth) newest() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for ch, envs := range s.recv {
		if len(envs) > 0 {
			out[ch] = envs[len(envs)-1].ServerSeq
		}
	}
	return out
}

// TestSoak: connections churn terminals with random input, resizes,
// subscriptions, disconnects and reconnects. Afterwards every subscription
// period of every connection holds exactly what the server published on
// its channel (same serverSeqs, same data checksum), up to the last action
// it received or, for the subscriptions it still has, up to its final
// ping; and nothing leaked (goleak in TestMain, processes and fds here).
func TestSoak(t *testing.T) {
	conns, terms, dur := 8, 16, 4*time.Second
	if *soakFor > 0 {
		conns, terms, dur = 50, 200, *soakFor
	}
	ts := newServer(t, func(tc *terminalsConfig, hc *handlersConfig) {
		tc.MaxTerminals = terms + conns
		tc.Shell, tc.ShellArgs = "/bin/sh", nil
		hc.SendQueue = 512 << 20 // this test is about exactness, not eviction
	})
	baseFDs := fdBaseline(t, ts)
	truth := &soakTruth{recv: map[string][]ahp.Envelope{}}
	defer ts.m.UnsubscribeAll(truth)
	// The terminals are created for a client that never connects: the
	// first connection to type into one takes its claim (and paces its
	// shell) while it is present, the others' input is refused.
	ref := newSoakConn(t, ts, "reference")
	ref.initialize()
	var uris []string
	for i := range terms {
		uri := ahp.TerminalURI(fmt.Sprint("soak-", i))
		if m := ref.call("createTerminal", map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": "nobody"}}); m == nil || m.Error != nil {
			t.Fatalf("create %s: %+v", uri, m)
		}
		if _, err := ts.m.Subscribe(truth, uri); err != nil {
			t.Fatal(err)
		}
		ref.subscribe(uri)
		uris = append(uris, uri)
	}

	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	clients := make([]*soakConn, conns)
	for i := range conns {
		clients[i] = newSoakConn(t, ts, fmt.Sprint("client-", i))
		clients[i].initialize()
		wg.Add(1)
		go func(c *soakConn, seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for n := 0; time.Now().Before(deadline); n++ {
				uri := uris[rng.IntN(len(uris))]
				switch op := rng.IntN(20); {
				case op < 6:
					c.subscribe(uri)
				case op < 12:
					c.notify("dispatchAction", map[string]any{"channel": uri, "clientSeq": n + 1,
						"action": map[string]any{"type": "terminal/input", "data": fmt.Sprintf("echo %s-%d-%x\r", c.id, n, rng.Uint32())}})
				case op < 14:
					c.notify("dispatchAction", map[string]any{"channel": uri, "clientSeq": n + 1,
						"action": map[string]any{"type": "terminal/resized", "cols": 40 + rng.IntN(100), "rows": 10 + rng.IntN(40)}})
				case op < 16:
					c.unsubscribe(uri)
				case op < 18:
					c.reconnect()
				default:
					time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
				}
			}
		}(clients[i], uint64(i))
	}
	wg.Wait()
	// A last marker through every terminal, by the owner's right to take
	// control.
	for i, uri := range uris {
		ref.notify("dispatchAction", map[string]any{"channel": uri, "clientSeq": 2 * i, "action": map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "reference"}}})
		ref.notify("dispatchAction", map[string]any{"channel": uri, "clientSeq": 2*i + 1, "action": map[string]any{"type": "terminal/input", "data": "echo soak-''end\r"}})
	}
	poll.Until(t, 60*time.Second, "end markers", func() bool {
		truth.mu.Lock()
		defer truth.mu.Unlock()
		for _, uri := range uris {
			if !strings.Contains(dataOf(truth.recv[uri]), "soak-end") {
				return false
			}
		}
		return true
	})
	checked := 0
	for _, c := range append(clients, ref) {
		// Everything published before the ping is queued before its answer.
		published := truth.newest()
		c.call("ping", map[string]any{"channel": ahp.RootURI})
		c.mu.Lock()
		checked += verifyPeriods(t, c, truth, published)
		c.mu.Unlock()
	}
	truth.mu.Lock()
	actions, output := 0, 0
	for _, envs := range truth.recv {
		actions += len(envs)
		output += len(dataOf(envs))
	}
	truth.mu.Unlock()
	t.Logf("soak: %d connections, %d terminals, %v: %d actions published (%d bytes of output), %d subscription periods verified",
		conns, terms, dur, actions, output, checked)
	for _, c := range clients {
		c.close()
	}
	ref.close()
	for _, uri := range uris {
		if err := ts.m.Dispose(uri); err != nil {
			t.Errorf("dispose: %v", err)
		}
	}
	if kids := proctest.Children(t); len(kids) != 0 {
		t.Errorf("children left: %v", kids)
	}
	poll.Until(t, 10*time.Second, "fds back to baseline", func() bool { return openFDs(t) <= baseFDs })
}

// verifyPeriods checks every subscription period of c against the truth:
// it holds exactly what was published on its channel after its snapshot,
// up to the last action it received; the periods c is still in, up to
// published (what was published on each channel before c's final ping).
func verifyPeriods(t *testing.T, c *soakConn, truth *soakTruth, published map[string]int64) int {
	truth.mu.Lock()
	defer truth.mu.Unlock()
	n := 0
	for i, p := range c.periods {
		if p.channel == ahp.RootURI {
			continue
		}
		end, current := len(c.recv[p.channel]), c.subs[p.channel]
		for _, q := range c.periods[i+1:] {
			if q.channel == p.channel {
				end, current = q.start, false
				break
			}
		}
		got := c.recv[p.channel][p.start:end]
		upTo := int64(0)
		if len(got) > 0 {
			upTo = got[len(got)-1].ServerSeq
		}
		if current {
			upTo = max(upTo, published[p.channel])
		}
		var want []ahp.Envelope
		for _, e := range truth.recv[p.channel] {
			if e.ServerSeq > p.from && e.ServerSeq <= upTo {
				want = append(want, e)
			}
		}
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if seqs(got) != seqs(want) || sha256.Sum256([]byte(dataOf(got))) != sha256.Sum256([]byte(dataOf(want))) {
			t.Errorf("%s %s from %d: stream differs from what the server published:\n got  %s\n want %s", c.id, p.channel, p.from, seqs(got), seqs(want))
		}
		n++
	}
	return n
}

func seqs(envs []ahp.Envelope) string {
	var b strings.Builder
	for _, e := range envs {
		fmt.Fprint(&b, e.ServerSeq, " ")
	}
	return b.String()
}

func dataOf(envs []ahp.Envelope) string {
	var b strings.Builder
	for _, e := range envs {
		if e.Action.Type == ahp.TerminalData {
			b.WriteString(e.Action.Data)
		}
	}
	return b.String()
}
