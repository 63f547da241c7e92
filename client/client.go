// Package client is a small Agent Host Protocol client for termhost servers,
// used by the termhost command line: it dials <server>/ws, initializes, makes
// requests, dispatches actions, mirrors subscribed channels with the ahp
// reducers, and reconnects (legacy form) when the transport drops.
//
// One goroutine reads the socket; it answers calls, applies envelopes to the
// mirrors and queues events, which the caller takes with Next.
//
// Files: client.go (connection and handshake), calls.go (requests,
// notifications, dispatch), reader.go (the reader goroutine), liveness.go
// (the ping watchdog that notices a silent link), reconnect.go,
// mirror.go (subscribed channels and events), options.go, errors.go.
//
// It is the public one of the three Go AHP clients in this repository (the
// others: internal/ahptest, the tests' strict client, and internal/bench's
// load generator). A protocol change updates package ahp first, then this
// client, then ahptest; bench only if the data path changes.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// Client is one AHP connection (re-established on transport loss).
type Client struct {
	opts  Options
	base  *url.URL
	wsURL string

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	done   chan struct{} // closed when the reader goroutine has returned

	writeMu sync.Mutex // orders clientSeq with the wire

	// Seen by the liveness watchdog (liveness.go): frames read and holds
	// begun, and whether the reader is holding for queue space now.
	progress atomic.Int64
	holding  atomic.Bool

	mu         sync.Mutex
	sock       *websocket.Conn // current socket, handshaken or not
	live       *websocket.Conn // sock once initialize/reconnect succeeded
	ready      chan struct{}   // closed while live != nil
	handshaken bool            // the first initialize succeeded
	nextID     int64
	calls      map[int64]*pendingCall
	clientSeq  int64
	lastSeq    int64 // highest serverSeq seen: the legacy reconnect watermark
	version    string
	publicURL  *url.URL // the initialize result's ext.MetaPublicURL, if any
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

// Dial connects to the server base URL (see ParseServer), initializes and
// starts the reader. ctx bounds the dial and the initialize round trip only.
func Dial(ctx context.Context, server string, opts Options) (*Client, error) {
	base, err := ParseServer(server)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	opts.setDefaults()
	c := &Client{opts: opts, base: base, wsURL: WebSocketURL(base), done: make(chan struct{}),
		ready: make(chan struct{}), calls: map[int64]*pendingCall{}, mirrors: map[string]*mirror{}, wake: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	ws, err := c.dial(ctx)
	if err != nil {
		c.cancel()
		close(c.done)
		return nil, err
	}
	c.sock = ws
	cl := c.initialize(ws, opts.InitialSubscriptions)
	go c.readLoop(ws)
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

// LinkBase is the base URL of the links people open (terminal pages,
// recordings, output as text): the public URL the server stated in its
// initialize result (ext.MetaPublicURL: termhost serve --public-url), else
// the URL the client dialled. A client reaching the server over loopback
// or behind the proxy thus prints the URL a teammate can open.
func (c *Client) LinkBase() *url.URL {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.publicURL != nil {
		u := *c.publicURL
		return &u
	}
	u := *c.base
	return &u
}

// PublicURL is the public base URL the server stated in its initialize
// result (ext.MetaPublicURL), or nil when it stated none.
func (c *Client) PublicURL() *url.URL {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.publicURL == nil {
		return nil
	}
	u := *c.publicURL
	return &u
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

// binaryDataCapability asks termhost for output as binary messages
// (ext.CapabilityBinaryData); other AHP servers ignore it.
var binaryDataCapability = json.RawMessage(`{"` + ext.CapabilityBinaryData + `":{}}`)

// initialize sends initialize on ws, subscribing subs in the same round trip;
// its hook makes ws the live connection. After the first connection it is the
// fallback of a refused reconnect: the mirrors are then reset from the new
// snapshots, and a failure ends the client.
func (c *Client) initialize(ws *websocket.Conn, subs []string) *pendingCall {
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
		ClientInfo: &c.opts.ClientInfo, InitialSubscriptions: subs, Capabilities: binaryDataCapability}
	return c.start(ws, ahp.MethodInitialize, params, func(raw json.RawMessage, err error) (any, error) {
		var r struct {
			ProtocolVersion string         `json:"protocolVersion"`
			ServerSeq       int64          `json:"serverSeq"`
			Snapshots       []ahp.Snapshot `json:"snapshots"`
			Meta            struct {
				PublicURL string `json:"termhost/publicUrl"`
			} `json:"_meta"`
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
		// A public URL that is not a server URL is ignored: links then
		// keep the dialled one.
		c.publicURL = nil
		if u, perr := ParseServer(r.Meta.PublicURL); r.Meta.PublicURL != "" && perr == nil {
			c.publicURL = u
		}
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
