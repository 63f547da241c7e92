package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/bench/wirecount"
	"github.com/termhost/termhost/internal/testserver"
)

// TestCompression: a client offering permessage-deflate as browsers do gets
// it with --compression on, never with off, and with auto only when it is
// not on loopback (behind a trusted proxy, by the forwarded address); the
// frames decode either way, and compressed ones take fewer bytes on the
// wire than they decode to.
func TestCompression(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      handlers.Compression
		forwarded string // X-Forwarded-For
		trusted   bool   // the test client's loopback address is a --trusted-proxy
		want      bool
	}{
		{name: "on", mode: handlers.CompressionOn, want: true},
		{name: "off", mode: handlers.CompressionOff, want: false},
		{name: "off/remote client", mode: handlers.CompressionOff, forwarded: "203.0.113.7", trusted: true, want: false},
		{name: "auto/loopback", mode: handlers.CompressionAuto, want: false},
		{name: "auto/remote client behind a trusted proxy", mode: handlers.CompressionAuto, forwarded: "203.0.113.7", trusted: true, want: true},
		{name: "auto/loopback client behind a trusted proxy", mode: handlers.CompressionAuto, forwarded: "::1", trusted: true, want: false},
		{name: "auto/forwarded address from an untrusted peer", mode: handlers.CompressionAuto, forwarded: "203.0.113.7", want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testserver.New(t, testserver.Handlers(func(c *handlers.Config) {
				c.Compression = tc.mode
				if tc.trusted {
					c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
				}
			}))
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			h := http.Header{"Authorization": {"Bearer " + testserver.OwnerToken}}
			if tc.forwarded != "" {
				h.Set("X-Forwarded-For", tc.forwarded)
			}
			var wire atomic.Int64
			ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/ws", &websocket.DialOptions{
				HTTPHeader: h, HTTPClient: wirecount.Client(&wire),
				// What browsers offer: permessage-deflate, context takeover allowed.
				CompressionMode: websocket.CompressionContextTakeover,
			})
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer ws.CloseNow()
			ext := resp.Header.Get("Sec-WebSocket-Extensions")
			if got := strings.Contains(ext, "permessage-deflate"); got != tc.want {
				t.Fatalf("compression %v, X-Forwarded-For %q: Sec-WebSocket-Extensions = %q, want deflate %v", tc.mode, tc.forwarded, ext, tc.want)
			}
			if tc.want && !strings.Contains(ext, "server_no_context_takeover") {
				t.Errorf("Sec-WebSocket-Extensions = %q, want server_no_context_takeover (no compressor held per idle connection)", ext)
			}
			decoded, output := printZeros(ctx, t, ws, 4000)
			if !strings.Contains(output, strings.Repeat("0", 4000)) {
				t.Fatalf("terminal/data decoded to %q, want 4000 zeros", output)
			}
			if compressed := wire.Load() < decoded; compressed != tc.want {
				t.Errorf("%d bytes on the wire for %d decoded: compressed %v, want %v", wire.Load(), decoded, compressed, tc.want)
			}
		})
	}
}

// printZeros has a new terminal's shell print n zeros, decoding every frame
// as a client must, until they arrive; it returns the bytes of the frames
// as decoded and the terminal's output.
func printZeros(ctx context.Context, t *testing.T, ws *websocket.Conn, n int) (int64, string) {
	t.Helper()
	const uri = "ahp-terminal:/zeros"
	send := func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	send(1, ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": "z"})
	send(2, ahp.MethodCreateTerminal, map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": "z"}})
	send(3, ahp.MethodSubscribe, map[string]any{"channel": uri})
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": ahp.MethodDispatchAction, "params": map[string]any{
		"channel": uri, "clientSeq": 1, "action": map[string]any{"type": ahp.TerminalInput, "data": "printf '%0" + strconv.Itoa(n) + "d\\n' 0\r"}}})
	if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("input: %v", err)
	}
	var decoded int64
	var out strings.Builder
	for !strings.Contains(out.String(), strings.Repeat("0", n)) {
		_, frame, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("read after %d bytes of output %q: %v", out.Len(), out.String(), err)
		}
		decoded += int64(len(frame))
		var m ahp.Message
		if err := json.Unmarshal(frame, &m); err != nil {
			t.Fatalf("frame %q does not decode: %v", frame, err)
		}
		if m.Error != nil {
			t.Fatalf("error response %s", frame)
		}
		if m.Method != ahp.MethodAction {
			continue
		}
		var e ahp.Envelope
		if err := json.Unmarshal(m.Params, &e); err != nil {
			t.Fatalf("envelope %q does not decode: %v", m.Params, err)
		}
		if e.Action.Type == ahp.TerminalData {
			out.WriteString(e.Action.Data)
		}
	}
	return decoded, out.String()
}
