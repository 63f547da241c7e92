// Package client is a small Agent Host Protocol client for termhost servers,
// used by the termhost command line: it dials <server>/ws, initializes, makes
// requests, dispatches actions, mirrors subscribed channels with the ahp
// reducers, and reconnects (legacy form) when the transport drops.
//
// One goroutine reads the socket; it answers calls, applies envelopes to the
// mirrors and queues events, which the caller takes with Next.
package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
)

// DefaultVersions are the protocol versions offered, most preferred first.
var DefaultVersions = []string{"1.0.0", "0.9.0"}

// Errors callers act on.
var (
	// ErrClosed: Close was called.
	ErrClosed = errors.New("client closed")
	// ErrConnectionLost: the transport dropped while a call was in flight (it
	// may or may not have taken effect), or for good.
	ErrConnectionLost = errors.New("connection lost")
	// ErrUnauthorized: the server refused the WebSocket upgrade with 401 or 403.
	ErrUnauthorized = errors.New("unauthorized")
)

// StatusError is a WebSocket upgrade that the server answered with an HTTP
// status instead of 101. 401 and 403 match ErrUnauthorized.
type StatusError struct {
	URL        string
	StatusCode int
	Status     string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered HTTP %s", e.URL, e.Status)
}

// Is makes 401 and 403 match ErrUnauthorized.
func (e *StatusError) Is(target error) bool {
	return target == ErrUnauthorized && (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden)
}

// Options configure Dial. Zero values get the defaults.
type Options struct {
	// Token is sent as "Authorization: Bearer <token>" when set.
	Token string
	// ClientID is the AHP clientId (default: random "termhost-cli-…").
	ClientID string
	// ClientInfo is sent in initialize (default name "termhost-cli").
	ClientInfo ahp.Implementation
	// Versions are offered in initialize (default DefaultVersions).
	Versions []string
	// InitialSubscriptions are subscribed in the initialize round trip.
	InitialSubscriptions []string
	// HTTPClient makes the upgrade request (default http.DefaultClient).
	HTTPClient *http.Client
	// ReconnectWindow is how long to keep trying to get a lost connection
	// back (default 30 s; negative: do not reconnect).
	ReconnectWindow time.Duration
	// QueueBytes bounds the events waiting for Next; past it the reader stops
	// reading the socket until the caller catches up, so the server paces the
	// terminal (default 8 MiB).
	QueueBytes int
	// MirrorBytes bounds the content kept in each terminal mirror (default
	// 1 MiB, trimmed from the head; negative: keep no content).
	MirrorBytes int
	// ReadLimit is the largest frame accepted (default 64 MiB).
	ReadLimit int64
}

func (o *Options) setDefaults() {
	if o.ClientID == "" {
		o.ClientID = "termhost-cli-" + RandomID(6)
	}
	if o.ClientInfo.Name == "" {
		o.ClientInfo.Name = "termhost-cli"
	}
	if len(o.Versions) == 0 {
		o.Versions = DefaultVersions
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.ReconnectWindow == 0 {
		o.ReconnectWindow = 30 * time.Second
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 8 << 20
	}
	if o.MirrorBytes == 0 {
		o.MirrorBytes = 1 << 20
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 64 << 20
	}
}

// RandomID returns n random bytes in hex.
func RandomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Client is one AHP connection (re-established on transport loss).
type Client struct {
	opts  Options
	base  *url.URL
	wsURL string

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	done   chan struct{} // closed when the reader goroutine has returned

	writeMu sync.Mutex // orders clientSeq with the wire

	mu         sync.Mutex
	sock       *websocket.Conn // current socket, handshaken or not
	live       *websocket.Conn // sock once initialize/reconnect succeeded
	ready      chan struct{}   // closed while live != nil
	handshaken bool            // the first initialize succeeded
	nextID     int64
	calls      map[int64]*call
	clientSeq  int64
	lastSeq    int64 // highest serverSeq seen: the legacy reconnect watermark
	version    string
	shape      ahp.Shape
	mirrors    map[string]*mirror
	closed     bool
	fatal      error // set by a handshake that cannot succeed
	finished   bool
	err        error // why the client finished
	queue      []queued
	queuedSize int
	wake       chan struct{} // closed and replaced when the queue or finished changes
}

// call is a request waiting for its response. hook, when set, runs in the
// reader goroutine before the caller wakes, so that state changes it makes are
// ordered with the envelopes around the response.
type call struct {
	method string
	hook   func(result json.RawMessage, err error) (any, error)
	done   chan struct{}
	result json.RawMessage
	value  any
	err    error
}

// Dial connects to the server base URL (see ParseServer), initializes and
// starts the reader. ctx bounds the dial and the initialize round trip only.
func Dial(ctx context.Context, server string, opts Options) (*Client, error) {
	base, err := ParseServer(server)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	opts.setDefaults()
	c := &Client{opts: opts, base: base, wsURL: WebSocketURL(base), done: make(chan struct{}),
		ready: make(chan struct{}), calls: map[int64]*call{}, mirrors: map[string]*mirror{}, wake: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	ws, err := c.dial(ctx)
	if err != nil {
		c.cancel()
		close(c.done)
		return nil, err
	}
	c.sock = ws
	cl := c.initialize(ws, opts.InitialSubscriptions)
	go c.loop(ws)
	select {
	case <-cl.done:
	case <-ctx.Done():
		_ = c.Close()
		return nil, fmt.Errorf("initialize: %w", ctx.Err())
	}
	if cl.err != nil {
		_ = c.Close()
		return nil, cl.err
	}
	return c, nil
}

// ClientID is the AHP clientId of this client.
func (c *Client) ClientID() string { return c.opts.ClientID }

// Server is the server's base URL.
func (c *Client) Server() *url.URL { u := *c.base; return &u }

// Version is the negotiated protocol version.
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Done is closed once the client has finished (Close, or a connection lost
// for good); Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the client finished, or nil while it runs.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Client) dial(ctx context.Context) (*websocket.Conn, error) {
	h := http.Header{}
	if c.opts.Token != "" {
		h.Set("Authorization", "Bearer "+c.opts.Token)
	}
	ws, resp, err := websocket.Dial(ctx, c.wsURL, &websocket.DialOptions{HTTPHeader: h, HTTPClient: c.opts.HTTPClient})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("dial: %w", &StatusError{URL: c.wsURL, StatusCode: resp.StatusCode, Status: resp.Status})
		}
		return nil, fmt.Errorf("dial %s: %w", c.wsURL, err)
	}
	ws.SetReadLimit(c.opts.ReadLimit)
	return ws, nil
}

// initialize sends initialize on ws, subscribing subs in the same round trip;
// its hook makes ws the live connection. After the first connection it is the
// fallback of a refused reconnect: the mirrors are then reset from the new
// snapshots, and a failure ends the client.
func (c *Client) initialize(ws *websocket.Conn, subs []string) *call {
	c.mu.Lock()
	for _, ch := range subs {
		if m := c.mirrors[ch]; m == nil {
			c.mirrors[ch] = &mirror{channel: ch, pending: true}
		} else {
			m.pending = true
		}
	}
	c.mu.Unlock()
	params := ahp.InitializeParams{Channel: ahp.RootURI, ProtocolVersions: c.opts.Versions, ClientID: c.opts.ClientID,
		ClientInfo: &c.opts.ClientInfo, InitialSubscriptions: subs}
	return c.start(ws, ahp.MethodInitialize, params, func(raw json.RawMessage, err error) (any, error) {
		var r struct {
			ProtocolVersion string         `json:"protocolVersion"`
			ServerSeq       int64          `json:"serverSeq"`
			Snapshots       []ahp.Snapshot `json:"snapshots"`
		}
		if err == nil {
			if derr := json.Unmarshal(raw, &r); derr != nil {
				err = fmt.Errorf("initialize: decode result: %w", derr)
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil {
			if c.handshaken && !errors.Is(err, ErrConnectionLost) {
				// A refused fallback cannot be retried: end the client.
				c.fatal = err
				_ = ws.CloseNow() // the reader sees it and finishes with fatal
			}
			return nil, err
		}
		c.version, c.shape = r.ProtocolVersion, ahp.ShapeFor(r.ProtocolVersion)
		// A fallback initialize may meet a restarted server whose counter
		// began again: its serverSeq is the new watermark.
		c.lastSeq = r.ServerSeq
		c.resyncLocked(r.Snapshots, subs, c.handshaken)
		if c.handshaken {
			c.pushLocked(Event{Kind: EventReconnected}, 0)
		}
		c.handshaken = true
		c.goLiveLocked(ws)
		return nil, nil
	})
}

// goLiveLocked makes ws the connection that calls and dispatches use.
func (c *Client) goLiveLocked(ws *websocket.Conn) {
	if c.sock != ws || c.closed {
		return
	}
	c.live = ws
	close(c.ready)
}

// start registers a call on ws and writes its request. A write failure fails
// the call (the reader notices the broken socket on its own).
func (c *Client) start(ws *websocket.Conn, method string, params any, hook func(json.RawMessage, error) (any, error)) *call {
	cl := &call{method: method, hook: hook, done: make(chan struct{})}
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		cl.err = fmt.Errorf("%s: %w", method, c.err)
		close(cl.done)
		return cl
	}
	c.nextID++
	id := c.nextID
	c.calls[id] = cl
	shape := c.shape
	c.mu.Unlock()
	frame, err := encodeRequest(id, method, params, shape)
	if err == nil {
		err = c.write(ws, frame)
	}
	if err != nil {
		c.complete(id, nil, fmt.Errorf("%s: %w", method, err))
	}
	return cl
}

func encodeRequest(id int64, method string, params any, shape ahp.Shape) ([]byte, error) {
	m := ahp.Message{JSONRPC: ahp.JSONRPCVersion, ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method}
	if params != nil {
		raw, err := ahp.Marshal(params, shape)
		if err != nil {
			return nil, fmt.Errorf("encode params: %w", err)
		}
		m.Params = raw
	}
	return ahp.Marshal(m, shape)
}

// write sends one frame. It is bounded by the client's life and a timeout,
// never by a caller's context: cancelling a write would close the socket.
func (c *Client) write(ws *websocket.Conn, frame []byte) error {
	ctx, cancel := context.WithTimeout(c.ctx, writeTimeout)
	defer cancel()
	return ws.Write(ctx, websocket.MessageText, frame)
}

const writeTimeout = 30 * time.Second

// complete finishes call id with a result or an error, running its hook.
func (c *Client) complete(id int64, result json.RawMessage, err error) {
	c.mu.Lock()
	cl := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	if cl == nil {
		return
	}
	cl.result, cl.err = result, err
	if cl.hook != nil {
		cl.value, cl.err = cl.hook(result, err)
	}
	close(cl.done)
}

// connected waits until a live connection exists.
func (c *Client) connected(ctx context.Context) (*websocket.Conn, error) {
	for {
		c.mu.Lock()
		live, ready, finished, err := c.live, c.ready, c.finished, c.err
		c.mu.Unlock()
		switch {
		case finished:
			return nil, err
		case live != nil:
			return live, nil
		}
		select {
		case <-ready:
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Call sends a request and waits for its result. A JSON-RPC error comes back
// as an *ahp.Error (use errors.As); every error is wrapped with the method.
// While the client reconnects, Call waits for the connection to return.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	cl, err := c.call(ctx, method, params, nil)
	if err != nil {
		return nil, err
	}
	return cl.result, nil
}

func (c *Client) call(ctx context.Context, method string, params any, hook func(json.RawMessage, error) (any, error)) (*call, error) {
	ws, err := c.connected(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	cl := c.start(ws, method, params, hook)
	select {
	case <-cl.done:
	case <-ctx.Done():
		c.mu.Lock()
		for id, pending := range c.calls {
			if pending == cl {
				delete(c.calls, id)
			}
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
	return cl, cl.err
}

// Notify sends a notification (no answer comes back).
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	ws, err := c.connected(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	c.mu.Lock()
	shape := c.shape
	c.mu.Unlock()
	raw, err := ahp.Marshal(params, shape)
	if err != nil {
		return fmt.Errorf("%s: encode params: %w", method, err)
	}
	frame, err := ahp.Marshal(ahp.Message{JSONRPC: ahp.JSONRPCVersion, Method: method, Params: raw}, shape)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.write(ws, frame); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// Dispatch sends a dispatchAction and returns its clientSeq. The outcome
// arrives as an EventAction on the channel: the echo with Origin set to this
// client and clientSeq, carrying a RejectionReason when the server refused it.
func (c *Client) Dispatch(ctx context.Context, channel string, a ahp.Action) (int64, error) {
	ws, err := c.connected(ctx)
	if err != nil {
		return 0, fmt.Errorf("dispatch %s: %w", a.Type, err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	c.clientSeq++
	seq, shape := c.clientSeq, c.shape
	c.mu.Unlock()
	action, err := ahp.Marshal(a, shape)
	if err != nil {
		return 0, fmt.Errorf("dispatch %s: %w", a.Type, err)
	}
	params, err := ahp.Marshal(struct {
		Channel   string          `json:"channel"`
		ClientSeq int64           `json:"clientSeq"`
		Action    json.RawMessage `json:"action"`
	}{channel, seq, action}, shape)
	if err != nil {
		return 0, fmt.Errorf("dispatch %s: %w", a.Type, err)
	}
	frame, err := ahp.Marshal(ahp.Message{JSONRPC: ahp.JSONRPCVersion, Method: ahp.MethodDispatchAction, Params: params}, shape)
	if err == nil {
		err = c.write(ws, frame)
	}
	if err != nil {
		return 0, fmt.Errorf("dispatch %s: %w", a.Type, err)
	}
	return seq, nil
}

// Close ends the connection (normal closure) and waits for the reader. It is
// safe to call more than once.
func (c *Client) Close() error {
	c.mu.Lock()
	already := c.closed
	c.closed = true
	ws := c.sock
	c.mu.Unlock()
	if !already {
		c.cancel() // stops a redial and a reader waiting for queue space
		if ws != nil {
			// The close handshake is bounded by the library (5 s); the
			// reader sees the socket end and finishes.
			_ = ws.Close(websocket.StatusNormalClosure, "")
		}
	}
	<-c.done
	return nil
}

// loop is the reader goroutine: it reads the current socket until it fails,
// then reconnects within the window or finishes the client.
func (c *Client) loop(ws *websocket.Conn) {
	defer close(c.done)
	for {
		err := c.read(ws)
		c.mu.Lock()
		closed, fatal, handshaken := c.closed, c.fatal, c.handshaken
		c.mu.Unlock()
		c.lost(ws)
		switch {
		case closed:
			c.finish(ErrClosed)
			return
		case fatal != nil:
			c.finish(fatal)
			return
		case !handshaken || c.opts.ReconnectWindow < 0 || policyClose(err):
			c.finish(fmt.Errorf("%w: %v", ErrConnectionLost, err))
			return
		}
		c.mu.Lock()
		c.pushLocked(Event{Kind: EventDisconnected, Err: err}, 0)
		c.mu.Unlock()
		next, rerr := c.redial(err)
		if rerr != nil {
			c.finish(rerr)
			return
		}
		ws = next
	}
}

// policyClose reports a close the server means to be final.
func policyClose(err error) bool {
	code := websocket.CloseStatus(err)
	return code == websocket.StatusPolicyViolation
}

func (c *Client) read(ws *websocket.Conn) error {
	for {
		// Not c.ctx: cancelling a Read closes the socket without a close frame.
		_, data, err := ws.Read(context.Background())
		if err != nil {
			return err
		}
		c.handle(ws, data)
		if err := c.waitSpace(); err != nil {
			return err
		}
	}
}

// handle routes one frame: responses to their calls, action envelopes to the
// mirrors; anything else is ignored.
func (c *Client) handle(ws *websocket.Conn, data []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *ahp.Error      `json:"error"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return
	}
	switch {
	case m.Method == "" && m.ID != nil:
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		cl := c.calls[id]
		c.mu.Unlock()
		if cl == nil {
			return
		}
		if m.Error != nil {
			c.complete(id, nil, fmt.Errorf("%s: %w", cl.method, m.Error))
			return
		}
		result := m.Result
		if result == nil {
			result = json.RawMessage("null")
		}
		c.complete(id, result, nil)
	case m.Method == ahp.MethodAction && m.ID == nil:
		var env ahp.Envelope
		if err := json.Unmarshal(m.Params, &env); err != nil {
			return // an action we cannot decode cannot be mirrored either
		}
		c.mu.Lock()
		c.envelopeLocked(env)
		c.mu.Unlock()
	}
}

// lost retires a socket: no more calls on it, pending calls fail, mirrors wait
// for the resync.
func (c *Client) lost(ws *websocket.Conn) {
	_ = ws.CloseNow()
	c.mu.Lock()
	if c.live == ws {
		c.live = nil
		c.ready = make(chan struct{})
	}
	type pending struct {
		id     int64
		method string
	}
	var fail []pending
	for id, cl := range c.calls {
		fail = append(fail, pending{id, cl.method})
	}
	c.mu.Unlock()
	for _, p := range fail {
		c.complete(p.id, nil, fmt.Errorf("%s: %w", p.method, ErrConnectionLost))
	}
}

// finish ends the client with err: queued events stay readable, then Next
// returns err.
func (c *Client) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	c.finished, c.err = true, err
	c.live = nil
	c.wakeLocked()
}
