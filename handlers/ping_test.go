package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
)

// TestWebSocketPings: the server pings every PingInterval (20 s by default)
// so idle proxies keep quiet terminals open; a client that answers stays.
func TestWebSocketPings(t *testing.T) {
	ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) { hc.PingInterval = 100 * time.Millisecond })
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
	ended := make(chan error, 1)
	go func() {
		_, _, err := ws.Read(context.Background()) // reading answers pings; nothing else arrives
		ended <- err
	}()
	defer func() { _ = ws.CloseNow(); <-ended }()
	poll.Until(t, poll.Short, "three pings", func() bool { return pings.Load() >= 3 })
	select {
	case err := <-ended:
		ended <- err // for the deferred wait
		t.Fatalf("connection ended: %v", err)
	default:
	}
}

// TestUnansweredPingCloses: a ping without a pong within PingInterval closes
// the socket. The client initializes while the ping waits, so the ping's
// failure (which logs the clientId) and initialize (which sets it) meet: a
// data race until the clientId was guarded for the pinger.
func TestUnansweredPingCloses(t *testing.T) {
	ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) { hc.PingInterval = 500 * time.Millisecond })
	pinged := make(chan struct{}, 1)
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + ownerToken}},
		OnPingReceived: func(context.Context, []byte) bool {
			select {
			case pinged <- struct{}{}:
			default:
			}
			return false // no pong
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	closed := make(chan error, 1)
	go func() {
		for {
			if _, _, err := ws.Read(context.Background()); err != nil {
				closed <- err
				return
			}
		}
	}()
	select {
	case <-pinged:
	case err := <-closed:
		t.Fatalf("connection ended before the first ping: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no ping")
	}
	b, _ := json.Marshal(rpcRequest(1, "initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": "quiet"}))
	if err := ws.Write(t.Context(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-closed:
		if websocket.CloseStatus(err) != -1 {
			t.Errorf("closed with %v (%v), want the socket dropped without a close frame", websocket.CloseStatus(err), err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the connection outlived an unanswered ping")
	}
}
