package ahptest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
)

// VSCodeOptions tune a VSCode client; the zero value is VS Code's own.
type VSCodeOptions struct {
	Versions  []string      // offered in initialize; VS Code offers 0.9.0 … 1.x
	PingAfter time.Duration // silence before a ping; VS Code: 5 s
	DropAfter time.Duration // silence before it drops the socket; VS Code: 25 s
	// TerminalField sends createTerminal's URI as `terminal`, like VS Code
	// versions older than the `channel` field.
	TerminalField bool
}

// VSCode behaves like VS Code's remote agent-host client (its WebSocket
// transport and terminal service) as far as a terminal server sees it:
// a browser WebSocket to ws://host/ws?tkn=<token> (no subprotocol, no
// headers), `initialize` with initialSubscriptions ["ahp-root://"], a few
// `root/configChanged` dispatches, a ping after PingAfter of silence and a
// dropped socket after DropAfter, `reconnect {clientId, lastSeenServerSeq,
// subscriptions}` without `channel`, retried with backoff, and terminals at
// agenthost-terminal:/<uuid>. Every connection is a recording Client, so
// every frame is checked against its version's schemas.
type VSCode struct {
	t        testing.TB
	url      string
	opts     VSCodeOptions
	versions *Versions
	ClientID string

	mu   sync.Mutex
	conn *Client
	subs []string
	stop chan struct{} // ends the keepalive of conn
}

// NewVSCode connects to the server at base (http://host[:port][/prefix])
// with token and initializes, as VS Code does on startup.
func NewVSCode(t testing.TB, base, token string, opts VSCodeOptions) *VSCode {
	t.Helper()
	if opts.Versions == nil {
		opts.Versions = []string{"1.0.0", "0.9.0"}
	}
	if opts.PingAfter == 0 {
		opts.PingAfter = 5 * time.Second
	}
	if opts.DropAfter == 0 {
		opts.DropAfter = 25 * time.Second
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("server URL %q: %v", base, err)
	}
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	u.Path += "/ws"
	u.RawQuery = url.Values{"tkn": {token}}.Encode()
	v := &VSCode{t: t, url: u.String(), opts: opts, versions: &Versions{}, ClientID: "vscode-" + rand.Text()[:8],
		subs: []string{ahp.RootURI}}
	t.Cleanup(v.stopKeepalive)
	c := v.dial()
	c.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": opts.Versions,
		"clientId": v.ClientID, "clientInfo": map[string]any{"name": "vscode"}, "initialSubscriptions": []string{ahp.RootURI}})
	for i := range 3 {
		seq := c.Dispatch(ahp.RootURI, map[string]any{"type": ahp.RootConfigChanged, "config": map[string]any{"n": i}})
		c.WaitAction("root/configChanged rejected", func(e ahp.Envelope) bool {
			return e.Origin != nil && e.Origin.ClientSeq == seq && e.RejectionReason != ""
		})
	}
	return v
}

// dial opens one connection, or fails the test.
func (v *VSCode) dial() *Client {
	v.t.Helper()
	c := MustDial(v.t, v.url, Options{Versions: v.versions})
	v.adopt(c)
	return c
}

// adopt makes c the current connection and starts its keepalive.
func (v *VSCode) adopt(c *Client) {
	v.stopKeepalive()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.conn, v.stop = c, make(chan struct{})
	go keepalive(c, v.stop, v.opts.PingAfter, v.opts.DropAfter)
}

func (v *VSCode) stopKeepalive() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stop != nil {
		close(v.stop)
		v.stop = nil
	}
}

// keepalive pings after pingAfter of silence and drops the socket after
// dropAfter, like VS Code's transport. Ping answers are frames like any
// other, so they reset the silence.
func keepalive(c *Client, stop <-chan struct{}, pingAfter, dropAfter time.Duration) {
	t := time.NewTicker(pingAfter / 4)
	defer t.Stop()
	var pinged time.Time
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		silence := c.Silence()
		switch {
		case silence >= dropAfter:
			_ = c.Conn().CloseNow()
			return
		case silence >= pingAfter && time.Since(pinged) >= pingAfter:
			pinged = time.Now()
			if _, err := c.Send(ahp.MethodPing, map[string]any{"channel": ahp.RootURI}); err != nil {
				return
			}
		}
	}
}

// Conn is the current connection.
func (v *VSCode) Conn() *Client {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.conn
}

// CreateTerminal creates a terminal at agenthost-terminal:/<uuid> claimed by
// this client, subscribes to it and returns its URI.
func (v *VSCode) CreateTerminal(cols, rows int) string {
	v.t.Helper()
	uri := "agenthost-terminal:/" + newUUID()
	field := "channel"
	if v.opts.TerminalField {
		field = "terminal"
	}
	c := v.Conn()
	c.MustCall(ahp.MethodCreateTerminal, map[string]any{field: uri, "cols": cols, "rows": rows,
		"claim": map[string]any{"kind": "client", "clientId": v.ClientID}})
	c.Subscribe(uri)
	v.mu.Lock()
	v.subs = append(v.subs, uri)
	v.mu.Unlock()
	return uri
}

// Input types data into the terminal.
func (v *VSCode) Input(uri, data string) {
	v.t.Helper()
	v.Conn().Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": data})
}

// Resize dispatches terminal/resized and waits for its echo.
func (v *VSCode) Resize(uri string, cols, rows int) {
	v.t.Helper()
	c := v.Conn()
	seq := c.Dispatch(uri, map[string]any{"type": ahp.TerminalResized, "cols": cols, "rows": rows})
	e := c.WaitAction("terminal/resized echo", func(e ahp.Envelope) bool {
		return e.Channel == uri && e.Origin != nil && e.Origin.ClientSeq == seq
	})
	if e.RejectionReason != "" {
		v.t.Fatalf("resize %s rejected: %s", uri, e.RejectionReason)
	}
}

// Dispose disposes the terminal.
func (v *VSCode) Dispose(uri string) {
	v.t.Helper()
	v.Conn().MustCall(ahp.MethodDisposeTerminal, map[string]any{"channel": uri})
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, s := range v.subs {
		if s == uri {
			v.subs = append(v.subs[:i], v.subs[i+1:]...)
			break
		}
	}
}

// Reconnect waits until the current connection has ended (cut by the
// network or dropped by the keepalive), then redials with backoff and sends
// reconnect without `channel`, and returns its result.
func (v *VSCode) Reconnect() json.RawMessage {
	v.t.Helper()
	old := v.Conn()
	old.WaitClosed()
	v.mu.Lock()
	subs := append([]string(nil), v.subs...)
	v.mu.Unlock()
	backoff, deadline := 20*time.Millisecond, time.Now().Add(waitTimeout)
	for {
		c, _, err := Dial(v.t, v.url, Options{Versions: v.versions})
		if err == nil {
			v.adopt(c)
			return c.MustCall(ahp.MethodReconnect, map[string]any{"clientId": v.ClientID,
				"lastSeenServerSeq": old.LastSeq(), "subscriptions": subs})
		}
		if time.Now().After(deadline) {
			v.t.Fatalf("reconnect: %v", err)
		}
		time.Sleep(backoff) // the client's own retry backoff, not a test wait
		backoff = min(2*backoff, time.Second)
	}
}

// newUUID is a random (version 4) UUID, as VS Code's generateUuid makes.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
