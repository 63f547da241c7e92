package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/internal/schemacheck"
)

// wsClient is a bare AHP client over coder/websocket, as a CLI would be:
// requests wait for their answer; notifications are kept for waitNote. Every
// frame it reads is checked against the schemas of the negotiated version
// (checkFrame).
type wsClient struct {
	t       *testing.T
	ws      *websocket.Conn
	ctx     context.Context
	nextID  int
	notes   []rpcMsg
	seen    int            // notes already returned by waitNote
	methods map[int]string // request id → method, for the schema check
	version string         // negotiated by initialize; "" before
}

type rpcMsg struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// envelope is an action notification's params.
type envelope struct {
	Channel string `json:"channel"`
	Action  struct {
		Type        string `json:"type"`
		Data        string `json:"data"`
		CommandLine string `json:"commandLine"`
	} `json:"action"`
	ServerSeq int `json:"serverSeq"`
	Origin    *struct {
		ClientID  string `json:"clientId"`
		ClientSeq int    `json:"clientSeq"`
	} `json:"origin"`
	RejectionReason string `json:"rejectionReason"`
}

// dialWS opens url with the given Authorization header value ("" sends
// none). It returns the HTTP status of a refused upgrade.
func dialWS(t *testing.T, url, authorization string) (*wsClient, int, error) {
	t.Helper()
	// The whole life of the connection: a test with several browser pages
	// keeps its CLI connection for a while.
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	t.Cleanup(cancel)
	h := http.Header{}
	if authorization != "" {
		h.Set("Authorization", authorization)
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		return nil, status, err
	}
	ws.SetReadLimit(16 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &wsClient{t: t, ws: ws, ctx: ctx, methods: map[int]string{}}, http.StatusSwitchingProtocols, nil
}

func (c *wsClient) read() (rpcMsg, error) {
	_, data, err := c.ws.Read(c.ctx)
	if err != nil {
		return rpcMsg{}, err
	}
	var m rpcMsg
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("undecodable frame %s: %v", data, err)
	}
	c.checkFrame(data, m)
	return m, nil
}

// checkFrame validates a frame against the schemas of the connection's
// version (issue 12 point 7); before initialize answered (pings, errors),
// against those of every version.
func (c *wsClient) checkFrame(data []byte, m rpcMsg) {
	c.t.Helper()
	method := ""
	if m.ID != nil && m.Method == "" {
		method = c.methods[*m.ID]
	}
	if method == "initialize" && m.Error == nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Result, &r)
		c.version = r.ProtocolVersion
	}
	versions := []string{c.version}
	if c.version == "" {
		versions = []string{"0.8.0", "1.0.0"}
	}
	for _, v := range versions {
		checker, err := schemacheck.ForVersion(v)
		if err != nil {
			c.t.Fatalf("schemas for %s: %v", v, err)
		}
		if err := checker.Frame(data, method); err != nil {
			c.t.Errorf("frame not valid against the %s schemas: %v", v, err)
		}
	}
}

func (c *wsClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.ws.Write(c.ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// call sends a request and returns its result, failing the test on an error
// answer.
func (c *wsClient) call(method string, params any) json.RawMessage {
	c.t.Helper()
	res, code, msg := c.tryCall(method, params)
	if code != 0 {
		c.t.Fatalf("%s: error %d %s", method, code, msg)
	}
	return res
}

func (c *wsClient) tryCall(method string, params any) (json.RawMessage, int, string) {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	c.methods[id] = method
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for {
		m, err := c.read()
		if err != nil {
			c.t.Fatalf("%s: read: %v", method, err)
		}
		if m.ID == nil {
			c.notes = append(c.notes, m)
			continue
		}
		if *m.ID != id {
			continue
		}
		if m.Error != nil {
			return nil, m.Error.Code, m.Error.Message
		}
		return m.Result, 0, ""
	}
}

// waitEnvelope returns the next action envelope (kept or read) matching ok.
func (c *wsClient) waitEnvelope(what string, ok func(envelope) bool) envelope {
	c.t.Helper()
	for {
		for c.seen < len(c.notes) {
			m := c.notes[c.seen]
			c.seen++
			if m.Method != "action" {
				continue
			}
			var env envelope
			if err := json.Unmarshal(m.Params, &env); err != nil {
				c.t.Fatalf("bad envelope %s: %v", m.Params, err)
			}
			if ok(env) {
				return env
			}
		}
		m, err := c.read()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", what, err)
		}
		if m.ID == nil {
			c.notes = append(c.notes, m)
		}
	}
}

// output is everything terminal/data said on a channel so far.
func (c *wsClient) output(channel string) string {
	var b strings.Builder
	for _, m := range c.notes {
		if m.Method != "action" {
			continue
		}
		var env envelope
		if json.Unmarshal(m.Params, &env) == nil && env.Channel == channel && env.Action.Type == "terminal/data" {
			b.WriteString(env.Action.Data)
		}
	}
	return b.String()
}

// waitClose reads until the server closes the socket and returns the code.
func (c *wsClient) waitClose() websocket.StatusCode {
	c.t.Helper()
	for {
		_, err := c.read()
		if err != nil {
			code := websocket.CloseStatus(err)
			if code == -1 && !errors.Is(err, context.DeadlineExceeded) {
				c.t.Logf("socket ended without a close frame: %v", err)
			}
			return code
		}
	}
}

func (c *wsClient) initialize(clientID string) {
	c.t.Helper()
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	res := c.call("initialize", map[string]any{"channel": "ahp-root://", "protocolVersions": []string{"1.0.0"},
		"clientId": clientID, "initialSubscriptions": []string{"ahp-root://"}})
	if err := json.Unmarshal(res, &r); err != nil || r.ProtocolVersion != "1.0.0" {
		c.t.Fatalf("initialize: protocolVersion %q (%v) in %s", r.ProtocolVersion, err, res)
	}
}
