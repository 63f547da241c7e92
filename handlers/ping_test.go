package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestWebSocketPings: the server pings every PingInterval (20 s by default)
// so idle proxies keep quiet terminals open; a client that answers stays.
func TestWebSocketPings(t *testing.T) {
	ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) { hc.PingInterval = 50 * time.Millisecond })
	var pings atomic.Int32
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + ownerToken}},
		OnPingReceived: func(context.Context, []byte) bool {
			pings.Add(1)
			return true
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ctx, cancel := context.WithTimeout(t.Context(), 400*time.Millisecond)
	defer cancel()
	_, _, err = ws.Read(ctx) // reading answers pings; nothing else arrives
	if ctx.Err() == nil {
		t.Fatalf("connection ended: %v", err)
	}
	if n := pings.Load(); n < 3 {
		t.Errorf("%d pings in 400 ms at a 50 ms interval", n)
	}
}
