// Package ahptest is the one AHP client of the tests: written from the
// protocol, not from termhost's own client, it records every frame, checks
// each against the official schemas of the version its connection
// negotiated, and lets a test call, dispatch and wait for frames, actions and
// output.
//
// It is one of three Go AHP clients here: package client is the public one
// (the command line's), this one the tests' strict client, and
// internal/bench's a minimal load generator. A protocol change updates
// package ahp first, then client, then this package; bench only if the data
// path changes.
package ahptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/poll"
)

// waitTimeout bounds every wait: a shell's prompt or a command's output
// took over 20 s with two test suites on 2 cores, so poll.Long. Only a
// failing test waits that long.
const waitTimeout = poll.Long

// Versions is what each clientId negotiated on one server, shared by the
// clients of a test so that a reconnecting client knows which schemas its
// frames follow.
type Versions struct{ m sync.Map }

func (v *Versions) store(clientID, version string) { v.m.Store(clientID, version) }

func (v *Versions) load(clientID string) (string, bool) {
	s, ok := v.m.Load(clientID)
	if !ok {
		return "", false
	}
	return s.(string), true
}

// Options configure Dial.
type Options struct {
	Header     http.Header
	HTTPClient *http.Client // nil: http.DefaultClient
	Versions   *Versions    // nil: this connection's own
}

// Client is one recording AHP connection. Its methods fail the test on
// unexpected errors; they are for the test's goroutine.
type Client struct {
	t        testing.TB
	ws       *websocket.Conn
	versions *Versions
	version  string // negotiated by initialize or reconnect; "" before

	mu      sync.Mutex
	cond    *sync.Cond
	frames  [][]byte
	msgs    []*ahp.Message              // frames decoded once, by the reader
	envs    map[int]ahp.Envelope        // action envelopes by frame index
	outputs map[string]*strings.Builder // terminal/data per channel
	methods map[string]string           // request id → method, for schema checks
	callers map[string]string           // initialize/reconnect request id → its clientId
	closed  error
	binary  int       // binary data messages received (ext.CapabilityBinaryData)
	lastAt  time.Time // when the last frame arrived (or the dial), for keepalives
	seqs    seqCheck  // serverSeq strictly increases per channel (seqcheck.go)
	nextID  int
	seq     int64         // clientSeq
	cursor  int           // next frame index for WaitAction and NextFrame
	wait    time.Duration // bound of each wait; 0 means waitTimeout
}

// SetWaitTimeout changes how long each wait may take, for a test that moves
// much more data than usual.
func (c *Client) SetWaitTimeout(d time.Duration) {
	c.mu.Lock()
	c.wait = d
	c.mu.Unlock()
}

func (c *Client) waitBound() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wait > 0 {
		return c.wait
	}
	return waitTimeout
}

// Dial opens a WebSocket to url (ws:// or wss://). The response is that of
// a refused upgrade, for its status. Cleanup closes the connection and
// checks every frame received against the schemas.
func Dial(t testing.TB, url string, opts Options) (*Client, *http.Response, error) {
	ws, resp, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{HTTPHeader: opts.Header, HTTPClient: opts.HTTPClient})
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(64 << 20)
	if opts.Versions == nil {
		opts.Versions = &Versions{}
	}
	c := &Client{t: t, ws: ws, versions: opts.Versions, methods: map[string]string{}, callers: map[string]string{},
		envs: map[int]ahp.Envelope{}, outputs: map[string]*strings.Builder{}, lastAt: time.Now()}
	c.cond = sync.NewCond(&c.mu)
	done := make(chan struct{})
	go c.read(done)
	t.Cleanup(func() {
		_ = ws.CloseNow()
		<-done
		c.checkFrames()
	})
	return c, resp, nil
}

// MustDial is Dial that fails the test on an error.
func MustDial(t testing.TB, url string, opts Options) *Client {
	t.Helper()
	c, _, err := Dial(t, url, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	return c
}

// read records frames until the connection ends.
func (c *Client) read(done chan<- struct{}) {
	defer close(done)
	for {
		typ, data, err := c.ws.Read(context.Background())
		c.mu.Lock()
		if err != nil {
			c.closed = err
			c.cond.Broadcast()
			c.mu.Unlock()
			return
		}
		if typ == websocket.MessageBinary {
			data = c.fromBinary(data)
		}
		c.record(data)
		c.lastAt = time.Now()
		c.cond.Broadcast()
		c.mu.Unlock()
	}
}

// record decodes a frame once; c.mu is held.
func (c *Client) record(data []byte) {
	var m ahp.Message
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Errorf("server sent invalid JSON: %v: %s", err, truncate(data))
	}
	i := len(c.frames)
	c.frames = append(c.frames, data)
	c.msgs = append(c.msgs, &m)
	c.learnVersion(&m)
	if m.Method == "" && m.Error == nil {
		for _, msg := range c.seqs.result(m.Result) {
			c.t.Errorf("%s", msg)
		}
	}
	if m.Method != "action" {
		return
	}
	e, err := DecodeEnvelope(m.Params)
	if err != nil {
		c.t.Errorf("%v", err)
		return
	}
	if msg := c.seqs.action(e, "live"); msg != "" {
		c.t.Errorf("%s", msg)
	}
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

// fromBinary turns a binary data message into the JSON frame it stands for,
// which is recorded and checked like any other; c.mu is held.
func (c *Client) fromBinary(msg []byte) []byte {
	c.binary++
	env, err := ext.DecodeBinaryData(msg)
	if err != nil {
		c.t.Errorf("server sent a bad binary message: %v: %q", err, truncate(msg))
		return nil
	}
	frame, err := ahp.EncodeEnvelope(env, ahp.Current)
	if err != nil {
		c.t.Errorf("re-encode %+v: %v", env, err)
	}
	return frame
}

// BinaryMessages is how many binary data messages the client received.
func (c *Client) BinaryMessages() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.binary
}

// learnVersion notes the version a successful initialize or reconnect
// answer gives the connection; c.mu is held.
func (c *Client) learnVersion(m *ahp.Message) {
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
			c.versions.store(clientID, r.ProtocolVersion)
		}
	case ahp.MethodReconnect:
		if v, ok := c.versions.load(clientID); ok {
			c.version = v
		} else {
			c.t.Errorf("reconnect of %q answered, but that clientId never initialized on this server", clientID)
		}
	}
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// Conn is the WebSocket, for tests that write odd frames or drop it.
func (c *Client) Conn() *websocket.Conn { return c.ws }

// Version is the protocol version the connection negotiated ("" before).
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// SetNextID makes the next request's id n+1 (above ids a test sent raw).
func (c *Client) SetNextID(n int) {
	c.mu.Lock()
	c.nextID = n
	c.mu.Unlock()
}

// SendRaw writes a text frame as is.
func (c *Client) SendRaw(frame string) {
	c.t.Helper()
	if err := c.ws.Write(c.t.Context(), websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// Call sends a request and waits for its response.
func (c *Client) Call(method string, params any) (json.RawMessage, *ahp.Error) {
	c.t.Helper()
	id, err := c.Send(method, params)
	if err != nil {
		c.t.Fatalf("%v", err)
	}
	return c.Response(json.RawMessage(id))
}

// Send writes a request without waiting for its answer and returns its id.
// Unlike the other methods it may be called from any goroutine (a
// keepalive): it reports errors instead of failing the test.
func (c *Client) Send(method string, params any) (string, error) {
	c.mu.Lock()
	c.nextID++
	id := fmt.Sprint(c.nextID)
	c.methods[id] = method
	if method == ahp.MethodInitialize || method == ahp.MethodReconnect {
		c.callers[id] = paramClientID(params)
	}
	c.mu.Unlock()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	if err != nil {
		return "", fmt.Errorf("%s params: %w", method, err)
	}
	if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		return "", fmt.Errorf("write %s: %w", method, err)
	}
	return id, nil
}

// Silence is how long ago the last frame arrived (or the connection opened).
func (c *Client) Silence() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Since(c.lastAt)
}

// Response waits for the response with the given raw id.
func (c *Client) Response(id json.RawMessage) (json.RawMessage, *ahp.Error) {
	c.t.Helper()
	var found *ahp.Message
	c.WaitFrame("response to id "+string(id), func(m *ahp.Message, _ int) bool {
		if m.Method == "" && string(m.ID) == string(id) {
			found = m
			return true
		}
		return false
	})
	if found.Error != nil {
		return nil, found.Error
	}
	return found.Result, nil
}

// MustCall fails the test on an error response.
func (c *Client) MustCall(method string, params any) json.RawMessage {
	c.t.Helper()
	res, err := c.Call(method, params)
	if err != nil {
		c.t.Fatalf("%s: unexpected error %d %s", method, err.Code, err.Message)
	}
	return res
}

// CallErr expects an error response with code.
func (c *Client) CallErr(method string, params any, code int) *ahp.Error {
	c.t.Helper()
	res, err := c.Call(method, params)
	if err == nil {
		c.t.Fatalf("%s(%v): got result %s, want error %d", method, params, res, code)
	}
	if err.Code != code {
		c.t.Fatalf("%s(%v): got error %d %q, want %d", method, params, err.Code, err.Message, code)
	}
	return err
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		c.t.Fatalf("%s params: %v", method, err)
	}
	c.SendRaw(string(b))
}

// Dispatch sends dispatchAction with the next clientSeq and returns it.
func (c *Client) Dispatch(channel string, action any) int64 {
	c.t.Helper()
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	c.Notify("dispatchAction", map[string]any{"channel": channel, "clientSeq": seq, "action": action})
	return seq
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
