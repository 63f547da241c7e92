package handlers_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/testenv"
	"github.com/termhost/termhost/terminals"
)

// mixedLines is the generator the shell runs (awk) and its Go twin: ASCII,
// ANSI colours and multi-byte UTF-8.
const mixedAwk = `awk 'BEGIN{for(i=0;i<%d;i++) printf "%%07d \033[1;3%%dmcolour\033[0m text ü € 漢字 ok %%s\n", i, i%%8, "abcdefghij"}'`

func mixedLines(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%07d \033[1;3%dmcolour\033[0m text ü € 漢字 ok %s\n", i, i%8, "abcdefghij")
	}
	return b.Bytes()
}

// streamOutput reads a terminal's data envelopes from a raw WebSocket until
// the stream contains end, checking order and returning the bytes.
func streamOutput(t *testing.T, ws *websocket.Conn, uri, end string) []byte {
	var out bytes.Buffer
	var last int64
	for {
		_, frame, err := ws.Read(t.Context())
		if err != nil {
			t.Errorf("read: %v after %d bytes", err, out.Len())
			return out.Bytes()
		}
		if !bytes.Contains(frame, []byte(`"terminal/data"`)) {
			continue
		}
		var m struct {
			Params ahp.Envelope `json:"params"`
		}
		if err := json.Unmarshal(frame, &m); err != nil {
			t.Fatalf("bad frame: %v", err)
		}
		if m.Params.Channel != uri {
			continue
		}
		if m.Params.ServerSeq <= last {
			t.Fatalf("serverSeq %d after %d", m.Params.ServerSeq, last)
		}
		last = m.Params.ServerSeq
		out.WriteString(m.Params.Action.Data)
		if tail := out.Bytes()[max(0, out.Len()-len(end)-64):]; bytes.Contains(tail, []byte(end)) {
			return out.Bytes()
		}
	}
}

// smallBuffers dials with a 16 KiB receive buffer, set before the
// handshake: shrunk after it (SetReadBuffer on the connection), the buffer
// is smaller than the window already offered, the kernel drops what the
// server sends into that window, and the server retransmits it only after
// backed-off timeouts: a client that resumes reading after a stall then
// waited seconds to minutes for the bytes already sent to it.
var smallBuffers = &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
	Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	},
}).DialContext}}

// noPings is a PingInterval long enough that the server never pings during a
// test: under -race on a loaded machine, a client reading megabytes of
// output (or stuck on purpose) can take longer than the ping timeout to read
// the ping behind them, and the server would drop the very connections these
// tests watch (TestSlowSubscriberEvicted, TestSlowViewersSkipAhead,
// TestViewerNeverPacesOwner).
const noPings = time.Hour

func rawSubscriber(t *testing.T, ts *testServer, clientID, uri string, client ...*http.Client) *websocket.Conn {
	opts := &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + ownerToken}}}
	if len(client) > 0 {
		opts.HTTPClient = client[0]
	}
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", opts)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	send := func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err := ws.Write(t.Context(), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	send(1, "initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": clientID})
	send(2, "subscribe", map[string]any{"channel": uri})
	return ws
}

// TestLargeOutputTwoSubscribers: 64 MiB of mixed output reaches two
// subscribers byte-identical to the source.
func TestLargeOutputTwoSubscribers(t *testing.T) {
	testenv.Volume(t)
	lines := 1 << 20 // 64 bytes a line: 64 MiB
	want := mixedLines(lines)
	// Queues big enough that these (race-instrumented) readers are never
	// evicted nor skip ahead: this test is about delivery,
	// TestSlowViewersSkipAhead about falling behind.
	ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) { hc.SendQueue, hc.PingInterval = 512<<20, noPings })
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("big", "owner", nil)
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "stty -onlcr\r"})
	owner.WaitOutput(uri, "stty -onlcr\r\n")

	subs := []*websocket.Conn{rawSubscriber(t, ts, "s1", uri), rawSubscriber(t, ts, "s2", uri)}
	owner.MustCall("ping", map[string]any{"channel": ahp.RootURI})
	_ = owner.Conn().CloseNow() // the recording client is not one of the two

	results := make([][]byte, len(subs))
	var wg sync.WaitGroup
	for i, ws := range subs {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = streamOutput(t, ws, uri, "END-OF-STREAM\n") }()
	}
	// Typed from a third connection once both are subscribed.
	driver := ts.dial(t)
	driver.Initialize("1.0.0", "owner")
	cmd := "printf 'START-OF-''STREAM\\n'; " + fmt.Sprintf(mixedAwk, lines) + "; printf 'END-OF-''STREAM\\n'\r"
	driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": cmd})
	wg.Wait()
	sum := sha256.Sum256(want)
	for i, got := range results {
		start := bytes.Index(got, []byte("START-OF-STREAM\n"))
		end := bytes.LastIndex(got, []byte("END-OF-STREAM\n"))
		if start < 0 || end < start {
			t.Fatalf("subscriber %d: markers missing in %d bytes", i+1, len(got))
		}
		body := got[start+len("START-OF-STREAM\n") : end]
		if gotSum := sha256.Sum256(body); gotSum != sum {
			t.Errorf("subscriber %d: %d bytes, sha256 %x; want %d bytes, %x", i+1, len(body), gotSum[:8], len(want), sum[:8])
			_ = os.WriteFile(filepath.Join(t.TempDir(), "got"+strconv.Itoa(i)), body, 0o600)
		}
	}
}

// TestSlowSubscriberEvicted: without a screen to skip ahead to (no screen
// model: TestSlowViewersSkipAhead has one), a subscriber that stops reading
// is cut off with close code 4001 (reconnect to resume) while the shell and
// a live subscriber carry on unharmed.
func TestSlowSubscriberEvicted(t *testing.T) {
	t.Parallel()
	// The stuck client's writer waits in a frame write from the moment its
	// socket is full until the eviction, which takes as long as the live
	// subscriber needs to read the queue bound: under load it may be longer
	// than the default WriteTimeout, which would close it without 4001.
	ts := newServer(t, func(tc *terminals.Config, hc *handlersConfig) {
		tc.NoScreenModel = true
		hc.SendQueue, hc.PingInterval, hc.WriteTimeout = 4<<20, noPings, time.Hour
	})
	driver := ts.dial(t)
	driver.Initialize("1.0.0", "driver")
	uri, _ := driver.CreateTerminal("slow", "driver", nil)
	driver.Notify("unsubscribe", map[string]any{"channel": uri})
	live := rawSubscriber(t, ts, "driver", uri) // the claim holder: it paces the shell

	// A subscriber that stops reading, with a small socket buffer: its socket
	// fills, then its send queue.
	stuck := rawSubscriber(t, ts, "stuck", uri, smallBuffers)
	driver.MustCall("ping", map[string]any{"channel": ahp.RootURI})
	const size = 16000000
	driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x; echo; echo DO''NE\r", size)})
	liveDone := make(chan []byte)
	go func() { liveDone <- streamOutput(t, live, uri, "DONE") }()

	// Once the server has evicted it, the stuck client drains its socket and
	// finds our close code at the end.
	for ts.metric(t, "termhost_slow_client_evictions_total") < 1 {
		select {
		case got := <-liveDone:
			t.Fatalf("stream ended (%d bytes) without evicting the stuck subscriber", len(got))
		case <-time.After(20 * time.Millisecond):
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var err error
	for {
		if _, _, err = stuck.Read(ctx); err != nil {
			break
		}
	}
	if got := <-liveDone; len(got) < size {
		t.Errorf("live subscriber got %d bytes, want all %d", len(got), size)
	}
	if websocket.CloseStatus(err) != 4001 {
		t.Errorf("stuck subscriber closed with %v (%v), want 4001", websocket.CloseStatus(err), err)
	}
}
