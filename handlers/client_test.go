package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/schemacheck"
	"github.com/termhost/termhost/terminals"
)

// testServer is the real router and manager behind httptest.
type testServer struct {
	*httptest.Server
	m   *terminals.Manager
	srv *handlers.Server
	// versions is what each clientId negotiated (string → string), so that a
	// reconnecting client knows which schemas its frames follow.
	versions sync.Map
}

type handlersConfig = handlers.Config

type terminalsConfig = terminals.Config

type serverOption func(*terminals.Config, *handlersConfig)

func newServer(t *testing.T, opts ...serverOption) *testServer {
	t.Helper()
	log := testLogger(t)
	tc := terminals.Config{Shell: "/bin/bash", ShellArgs: []string{"--norc", "--noprofile"}, Cwd: t.TempDir(),
		Logger: log, DisposeGrace: 500 * time.Millisecond,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PS1=$ ", "TERMHOST_TOKEN=secret"}}
	hc := handlers.Config{Logger: log, OwnerToken: ownerToken}
	for _, o := range opts {
		o(&tc, &hc)
	}
	m, err := terminals.NewManager(tc)
	if err != nil {
		t.Fatal(err)
	}
	hc.Manager = m
	srv, err := handlers.New(hc)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		ts.CloseClientConnections()
		srv.Close()
		ts.Close()
		m.Close()
	})
	return &testServer{Server: ts, m: m, srv: srv}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// client is a minimal AHP client written from the digest: it records every
// frame, validates every frame against the official schemas of the version
// the connection negotiated (checkFrames), and lets tests wait for responses
// and action envelopes.
type client struct {
	t       *testing.T
	ts      *testServer
	ws      *websocket.Conn
	ctx     context.Context
	version string // negotiated by initialize or reconnect; "" before

	mu      sync.Mutex
	cond    *sync.Cond
	frames  [][]byte
	msgs    []*ahp.Message              // frames decoded once, by the reader
	envs    map[int]ahp.Envelope        // action envelopes by frame index
	outputs map[string]*strings.Builder // terminal/data per channel
	methods map[string]string           // request id → method, for schema checks
	callers map[string]string           // initialize/reconnect request id → its clientId
	closed  error
	nextID  int
	seq     int64 // clientSeq
	cursor  int   // next notification index for waitAction
}

func (ts *testServer) dial(t *testing.T, headers ...string) *client {
	t.Helper()
	c, err := ts.tryDial(t, headers...)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return c
}

// ownerToken is the test servers' owner secret; dial sends it unless the
// headers say otherwise ("Authorization", "" sends none).
const ownerToken = "test-owner-token"

func (ts *testServer) tryDial(t *testing.T, headers ...string) (*client, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+ownerToken)
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
		if headers[i+1] == "" {
			h.Del(headers[i])
		}
	}
	ctx := t.Context()
	path := "/ws"
	if q := h.Get("X-Test-Query"); q != "" {
		path += "?" + q
		h.Del("X-Test-Query")
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+path, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(64 << 20)
	c := &client{t: t, ts: ts, ws: ws, ctx: ctx, methods: map[string]string{}, callers: map[string]string{},
		envs: map[int]ahp.Envelope{}, outputs: map[string]*strings.Builder{}}
	c.cond = sync.NewCond(&c.mu)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := ws.Read(context.Background())
			c.mu.Lock()
			if err != nil {
				c.closed = err
				c.cond.Broadcast()
				c.mu.Unlock()
				return
			}
			c.record(data)
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ws.CloseNow()
		<-done
		c.checkFrames()
	})
	return c, nil
}

// record decodes a frame once; c.mu is held.
func (c *client) record(data []byte) {
	var m ahp.Message
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Errorf("server sent invalid JSON: %v: %s", err, truncate(data))
	}
	i := len(c.frames)
	c.frames = append(c.frames, data)
	c.msgs = append(c.msgs, &m)
	c.learnVersion(&m)
	if m.Method == "action" {
		e := decodeEnvelope(c.t, m.Params)
		c.envs[i] = e
		if e.Action.Type == ahp.TerminalData && e.RejectionReason == "" {
			b := c.outputs[e.Channel]
			if b == nil {
				b = &strings.Builder{}
				c.outputs[e.Channel] = b
			}
			b.WriteString(e.Action.Data)
		}
	}
}

// learnVersion notes the version a successful initialize or reconnect
// answer gives the connection; c.mu is held.
func (c *client) learnVersion(m *ahp.Message) {
	if m.Method != "" || m.Error != nil || m.ID == nil {
		return
	}
	clientID := c.callers[string(m.ID)]
	switch c.methods[string(m.ID)] {
	case ahp.MethodInitialize:
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(m.Result, &r) == nil && r.ProtocolVersion != "" {
			c.version = r.ProtocolVersion
			c.ts.versions.Store(clientID, r.ProtocolVersion)
		}
	case ahp.MethodReconnect:
		if v, ok := c.ts.versions.Load(clientID); ok {
			c.version = v.(string)
		} else {
			c.t.Errorf("reconnect of %q answered, but that clientId never initialized on this server", clientID)
		}
	}
}

// checkFrames validates every frame received against the schemas of the
// connection's version; before a version was negotiated (only pings and
// errors), against those of every version.
func (c *client) checkFrames() {
	c.mu.Lock()
	defer c.mu.Unlock()
	versions := []string{c.version}
	if c.version == "" {
		versions = []string{"0.8.0", "1.0.0"}
	}
	for _, v := range versions {
		checker, err := schemacheck.ForVersion(v)
		if err != nil {
			c.t.Errorf("schemas for %s: %v", v, err)
			return
		}
		for _, f := range c.frames {
			var head struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(f, &head)
			if err := checker.Frame(f, c.methods[string(head.ID)]); err != nil {
				c.t.Errorf("frame not valid against the %s schemas: %v\n%s", v, err, truncate(f))
			}
		}
	}
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

func (c *client) sendRaw(frame string) {
	c.t.Helper()
	if err := c.ws.Write(c.ctx, websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// call sends a request and waits for its response.
func (c *client) call(method string, params any) (json.RawMessage, *ahp.Error) {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.methods[fmt.Sprint(id)] = method
	if method == ahp.MethodInitialize || method == ahp.MethodReconnect {
		c.callers[fmt.Sprint(id)] = paramClientID(params)
	}
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	c.sendRaw(string(b))
	return c.response(json.RawMessage(fmt.Sprint(id)))
}

// response waits for the response with the given raw id.
func (c *client) response(id json.RawMessage) (json.RawMessage, *ahp.Error) {
	c.t.Helper()
	var found *ahp.Message
	c.waitFrame(func(m *ahp.Message, _ int) bool {
		if m.Method == "" && string(m.ID) == string(id) {
			found = m
			return true
		}
		return false
	}, "response to id "+string(id))
	if found.Error != nil {
		return nil, found.Error
	}
	return found.Result, nil
}

// mustCall fails the test on an error response.
func (c *client) mustCall(method string, params any) json.RawMessage {
	c.t.Helper()
	res, err := c.call(method, params)
	if err != nil {
		c.t.Fatalf("%s: unexpected error %d %s", method, err.Code, err.Message)
	}
	return res
}

// callErr expects an error response with code.
func (c *client) callErr(method string, params any, code int) *ahp.Error {
	c.t.Helper()
	res, err := c.call(method, params)
	if err == nil {
		c.t.Fatalf("%s(%v): got result %s, want error %d", method, params, res, code)
	}
	if err.Code != code {
		c.t.Fatalf("%s(%v): got error %d %q, want %d", method, params, err.Code, err.Message, code)
	}
	return err
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	c.sendRaw(string(b))
}

func (c *client) dispatch(channel string, action any) int64 {
	c.t.Helper()
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	c.notify("dispatchAction", map[string]any{"channel": channel, "clientSeq": seq, "action": action})
	return seq
}

// waitFrame waits for a frame (from the start) matching pred.
func (c *client) waitFrame(pred func(*ahp.Message, int) bool, what string) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	timer := time.AfterFunc(time.Until(deadline), func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; ; {
		for ; i < len(c.msgs); i++ {
			if pred(c.msgs[i], i) {
				return
			}
		}
		if c.closed != nil || time.Now().After(deadline) {
			c.t.Fatalf("waiting for %s: connection closed=%v, %d frames received", what, c.closed, len(c.frames))
		}
		c.cond.Wait()
	}
}

// waitAction waits for the next action envelope (after the cursor) matching pred.
func (c *client) waitAction(what string, pred func(ahp.Envelope) bool) ahp.Envelope {
	c.t.Helper()
	var env ahp.Envelope
	c.waitFrame(func(m *ahp.Message, i int) bool {
		if i < c.cursor || m.Method != "action" {
			return false
		}
		e := c.envs[i]
		if pred(e) {
			env, c.cursor = e, i+1
			return true
		}
		return false
	}, what)
	return env
}

// envelopes returns every action envelope received so far.
func (c *client) envelopes() []ahp.Envelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ahp.Envelope
	for i := range c.msgs {
		if e, ok := c.envs[i]; ok {
			out = append(out, e)
		}
	}
	return out
}

// paramClientID is the clientId member of request params, if any.
func paramClientID(params any) string {
	b, _ := json.Marshal(params)
	var p struct {
		ClientID string `json:"clientId"`
	}
	_ = json.Unmarshal(b, &p)
	return p.ClientID
}

// initialize performs the handshake at version and returns the result.
func (c *client) initialize(version, clientID string, subs ...string) map[string]any {
	c.t.Helper()
	if subs == nil {
		subs = []string{ahp.RootURI}
	}
	res := c.mustCall("initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{version},
		"clientId": clientID, "initialSubscriptions": subs, "clientInfo": map[string]any{"name": "test"}})
	var out map[string]any
	if err := json.Unmarshal(res, &out); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// output is the terminal/data received on channel so far.
func (c *client) output(channel string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outputLocked(channel)
}

func (c *client) outputLocked(channel string) string {
	if b := c.outputs[channel]; b != nil {
		return b.String()
	}
	return ""
}

// waitOutput waits until the channel's output contains want.
func (c *client) waitOutput(channel, want string) {
	c.t.Helper()
	c.waitFrame(func(*ahp.Message, int) bool {
		b := c.outputs[channel]
		return b != nil && strings.Contains(b.String()[max(0, b.Len()-len(want)-64<<10):], want)
	}, fmt.Sprintf("output %q", want))
}

// createTerminal creates and subscribes a terminal owned by clientID.
func (c *client) createTerminal(id, clientID string, extra map[string]any) (string, ahp.Snapshot) {
	c.t.Helper()
	uri := ahp.TerminalURI(id)
	params := map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": clientID}}
	for k, v := range extra {
		params[k] = v
	}
	c.mustCall("createTerminal", params)
	return uri, c.subscribe(uri)
}

func (c *client) subscribe(uri string) ahp.Snapshot {
	c.t.Helper()
	res := c.mustCall("subscribe", map[string]any{"channel": uri})
	var r struct {
		Snapshot ahp.Snapshot `json:"snapshot"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		c.t.Fatalf("subscribe result: %v", err)
	}
	return r.Snapshot
}

// decodeEnvelope decodes an envelope; a rejection may carry an invalid action,
// which is kept raw with its type.
func decodeEnvelope(t *testing.T, params json.RawMessage) ahp.Envelope {
	var e ahp.Envelope
	if err := json.Unmarshal(params, &e); err == nil {
		return e
	}
	var raw struct {
		Channel   string `json:"channel"`
		ServerSeq int64  `json:"serverSeq"`
		Origin    *ahp.Origin
		Reason    string          `json:"rejectionReason"`
		Action    json.RawMessage `json:"action"`
	}
	if err := json.Unmarshal(params, &raw); err != nil || raw.Reason == "" {
		t.Fatalf("bad envelope %s: %v", params, err)
	}
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw.Action, &head)
	return ahp.Envelope{Channel: raw.Channel, ServerSeq: raw.ServerSeq, Origin: raw.Origin, RejectionReason: raw.Reason,
		Action: ahp.Action{Type: head.Type, Raw: raw.Action}}
}
