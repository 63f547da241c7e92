package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/bench/wirecount"
)

// client is a minimal AHP client for measuring: one goroutine uses it, frames
// are read into one reused buffer, and only viewers (readDecoded) decode
// JSON on the hot path.
type client struct {
	ws     *websocket.Conn
	id     string // clientId
	buf    bytes.Buffer
	nextID int
	seq    int64
	out    []byte        // scratch for hand-built frames
	wire   *atomic.Int64 // bytes read from the TCP connection: frames as sent, with their headers
	// deflate: the server agreed to permessage-deflate.
	deflate bool
	// binary: the last frame read was a binary data message.
	binary bool
}

// wireMode is how a bench client asks for output.
type wireMode struct {
	compress bool // offer permessage-deflate, as browsers do
	json     bool // JSON text frames, as any AHP client gets; else binary data messages, as termhost's clients ask
	browser  bool // send the headers a browser sends with its upgrade (browserHeaders)
	// person, when set, is sent as HostileIdentityHeader: the identity of
	// someone a proxy signed in (the hostile row's server trusts loopback).
	person string
	// forwardedFor, when set, is sent as X-Forwarded-For: the client's
	// address as a proxy the server trusts tells it (the broadcast row's
	// audience, which all dials from loopback).
	forwardedFor string
}

// browserHeaders are the headers Chromium sends with a WebSocket upgrade
// besides the handshake's own, for the idle step's tabs: the server holds
// what a browser's tab makes it hold.
func browserHeaders(endpoint string) http.Header {
	origin := "http://"
	if strings.HasPrefix(endpoint, "wss:") {
		origin = "https://"
	}
	if u, err := url.Parse(endpoint); err == nil {
		origin += u.Host
	}
	return http.Header{
		"Origin":          {origin},
		"User-Agent":      {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"},
		"Accept-Language": {"en-GB,en-US;q=0.9,en;q=0.8"},
		"Accept-Encoding": {"gzip, deflate, br, zstd"},
		"Cache-Control":   {"no-cache"},
		"Pragma":          {"no-cache"},
	}
}

// dial connects to a server's AHP endpoint (client.WebSocketURL) and
// initializes with no subscriptions. With mode.compress it offers
// permessage-deflate as browsers do (context takeover allowed; the server
// decides).
func dial(ctx context.Context, endpoint, token, clientID string, mode wireMode) (*client, error) {
	wire := new(atomic.Int64)
	opts := &websocket.DialOptions{HTTPClient: wirecount.Client(wire)}
	if mode.compress {
		opts.CompressionMode = websocket.CompressionContextTakeover
	}
	opts.HTTPHeader = http.Header{}
	if mode.browser {
		opts.HTTPHeader = browserHeaders(endpoint)
	}
	if token != "" {
		opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	}
	if mode.person != "" {
		opts.HTTPHeader.Set(HostileIdentityHeader, mode.person)
	}
	if mode.forwardedFor != "" {
		opts.HTTPHeader.Set("X-Forwarded-For", mode.forwardedFor)
	}
	ws, resp, err := websocket.Dial(ctx, endpoint, opts)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", endpoint, err)
	}
	ws.SetReadLimit(64 << 20)
	c := &client{ws: ws, id: clientID, wire: wire,
		deflate: strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")}
	params := map[string]any{
		"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": clientID,
		"clientInfo": map[string]string{"name": "termhost-bench"},
	}
	if !mode.json {
		params["capabilities"] = map[string]any{ext.CapabilityBinaryData: map[string]any{}}
	}
	_, err = c.call(ctx, ahp.MethodInitialize, params, nil)
	if err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

func (c *client) close() { _ = c.ws.Close(websocket.StatusNormalClosure, "") }

// read returns the next frame; it is valid until the next read.
func (c *client) read(ctx context.Context) ([]byte, error) {
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	c.binary = typ == websocket.MessageBinary
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return c.buf.Bytes(), nil
}

// send writes a request (id > 0) or a notification (id 0).
func (c *client) send(ctx context.Context, id int, method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id > 0 {
		m["id"] = id
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// request sends a request and returns its id without waiting.
func (c *client) request(ctx context.Context, method string, params any) (int, error) {
	c.nextID++
	return c.nextID, c.send(ctx, c.nextID, method, params)
}

// call sends a request and reads frames until its response; other frames go
// to onFrame (which may be nil).
func (c *client) call(ctx context.Context, method string, params any, onFrame func([]byte)) (json.RawMessage, error) {
	id, err := c.request(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return c.await(ctx, id, onFrame)
}

// await reads frames until the response to id.
func (c *client) await(ctx context.Context, id int, onFrame func([]byte)) (json.RawMessage, error) {
	for {
		frame, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		if res, ok, err := response(frame, id); ok {
			return res, err
		}
		if onFrame != nil {
			onFrame(frame)
		}
	}
}

// response reports whether frame is the response to id, with its result.
func response(frame []byte, id int) (json.RawMessage, bool, error) {
	// Responses are small and start with their id; notifications never have one.
	head := frame[:min(len(frame), 64)]
	if !bytes.Contains(head, []byte(`"id":`+strconv.Itoa(id)+`,`)) {
		return nil, false, nil
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *ahp.Error      `json:"error"`
	}
	if err := json.Unmarshal(frame, &m); err != nil || string(m.ID) != strconv.Itoa(id) {
		return nil, false, nil
	}
	if m.Error != nil {
		return nil, true, fmt.Errorf("error %d: %s", m.Error.Code, m.Error.Message)
	}
	return m.Result, true, nil
}

// createTerminal creates a terminal claimed by this client and subscribes.
func (c *client) createTerminal(ctx context.Context, id string) (string, error) {
	uri := ahp.TerminalURI(id)
	if _, err := c.call(ctx, ahp.MethodCreateTerminal, map[string]any{
		"channel": uri, "claim": map[string]any{"kind": "client", "clientId": c.id}, "cols": 120, "rows": 40,
	}, nil); err != nil {
		return "", fmt.Errorf("createTerminal: %w", err)
	}
	if err := c.subscribe(ctx, uri); err != nil {
		return "", err
	}
	return uri, nil
}

func (c *client) subscribe(ctx context.Context, uri string) error {
	if _, err := c.call(ctx, ahp.MethodSubscribe, map[string]any{"channel": uri}, nil); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	return nil
}

func (c *client) dispose(ctx context.Context, uri string) error {
	_, err := c.call(ctx, ahp.MethodDisposeTerminal, map[string]any{"channel": uri}, nil)
	return err
}

// input dispatches terminal/input with a hand-built frame.
func (c *client) input(ctx context.Context, uri, data string) error {
	c.seq++
	b := append(c.out[:0], `{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":`...)
	b = strconv.AppendQuote(b, uri) // URIs and our inputs are plain ASCII
	b = append(b, `,"clientSeq":`...)
	b = strconv.AppendInt(b, c.seq, 10)
	b = append(b, `,"action":{"type":"terminal/input","data":`...)
	q, _ := json.Marshal(data)
	b = append(b, q...)
	b = append(b, `}}}`...)
	c.out = b
	return c.ws.Write(ctx, websocket.MessageText, b)
}

var (
	dataType  = []byte(`"type":"terminal/data","data":"`)
	dataClose = []byte(`"},"serverSeq":`)
)

// dataOf returns the data of a terminal/data envelope frame, JSON-escaped
// in a text frame, as it is in a binary data message; or nil. It relies on
// the server's field order (channel, action with type then data,
// serverSeq), which termhost's encoder fixes.
func (c *client) dataOf(frame []byte) []byte {
	if c.binary {
		if len(frame) < 4 {
			return nil
		}
		return frame[min(len(frame), 4+int(binary.BigEndian.Uint32(frame))):]
	}
	return dataOf(frame)
}

// dataOf is the JSON-escaped data string of a text frame (client.dataOf).
func dataOf(frame []byte) []byte {
	i := bytes.Index(frame[:min(len(frame), 256)], dataType)
	if i < 0 {
		return nil
	}
	start := i + len(dataType)
	tail := frame[max(start, len(frame)-96):]
	j := bytes.LastIndex(tail, dataClose)
	if j < 0 {
		return nil
	}
	return frame[start : len(frame)-len(tail)+j]
}

// scanner finds a marker in a stream of data strings that may split it.
type scanner struct {
	marker []byte
	tail   []byte
	joined []byte
}

func newScanner(marker string) *scanner { return &scanner{marker: []byte(marker)} }

// feed reports whether the marker has been seen, including across the
// previous chunk.
func (s *scanner) feed(b []byte) bool {
	k := len(s.marker) - 1
	if len(s.tail) > 0 {
		s.joined = append(append(s.joined[:0], s.tail...), b[:min(len(b), k)]...)
		if bytes.Contains(s.joined, s.marker) {
			return true
		}
	}
	if bytes.Contains(b, s.marker) {
		return true
	}
	if len(b) >= k {
		s.tail = append(s.tail[:0], b[len(b)-k:]...)
	} else {
		s.tail = append(s.tail, b...)
		s.tail = s.tail[max(0, len(s.tail)-k):]
	}
	return false
}

// streamStats counts what a subscriber received.
type streamStats struct {
	frames    int
	wireBytes int64 // whole frames
	dataBytes int64 // JSON-escaped data strings
}

// readUntil reads frames until the marker appears in terminal/data.
func (c *client) readUntil(ctx context.Context, sc *scanner, st *streamStats) error {
	for {
		frame, err := c.readViewer(ctx)
		if err != nil {
			return err
		}
		if st != nil {
			st.frames++
			st.wireBytes += int64(len(frame))
		}
		d := c.dataOf(frame)
		if d == nil {
			continue
		}
		if st != nil {
			st.dataBytes += int64(len(d))
		}
		if sc.feed(d) {
			return nil
		}
	}
}

var errEvicted = errors.New("evicted as a slow subscriber (4001)")

// readViewer is read with an eviction (close code 4001) as errEvicted.
func (c *client) readViewer(ctx context.Context) ([]byte, error) {
	frame, err := c.read(ctx)
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Code == 4001 {
		return nil, errEvicted
	}
	return frame, err
}

// readDecoded is readUntil for a viewer: it decodes every frame as a client
// must, as termhost's Go client does (output frames on ahp.DecodeDataFrame's
// one pass, anything else as the JSON-RPC message, then the action envelope),
// and scans the decoded data for the marker.
//
// A viewer that falls too far behind skips ahead (an x-termhost/skipped
// notice, then the screen's redraw as output): skips counts them and the
// output skipped. The marker, the last line printed, is then in the redraw.
func (c *client) readDecoded(ctx context.Context, sc *scanner, skips *skipCount) error {
	for {
		frame, err := c.readViewer(ctx)
		if err != nil {
			return err
		}
		if c.binary {
			e, err := ext.DecodeBinaryData(frame)
			if err != nil {
				return err
			}
			if sc.feed([]byte(e.Action.Data)) {
				return nil
			}
			continue
		}
		if e, ok := ahp.DecodeDataFrame(frame); ok {
			if e.Action.Type == ahp.TerminalData && sc.feed([]byte(e.Action.Data)) {
				return nil
			}
			continue
		}
		var m ahp.Message
		if err := json.Unmarshal(frame, &m); err != nil {
			return fmt.Errorf("frame does not decode: %w", err)
		}
		if m.Method == ext.NotifySkipped {
			var n ext.SkipNotice
			if err := json.Unmarshal(m.Params, &n); err != nil {
				return fmt.Errorf("skip notice does not decode: %w", err)
			}
			skips.times++
			skips.bytes += n.Bytes
			continue
		}
		if m.Method != ahp.MethodAction {
			continue
		}
		var e ahp.Envelope
		if err := json.Unmarshal(m.Params, &e); err != nil {
			return fmt.Errorf("envelope does not decode: %w", err)
		}
		if e.Action.Type == ahp.TerminalData && sc.feed([]byte(e.Action.Data)) {
			return nil
		}
	}
}

// skipCount counts a viewer's skips ahead and the output they skipped.
type skipCount struct {
	times int
	bytes int64
}
