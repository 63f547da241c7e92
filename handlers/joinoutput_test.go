package handlers_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/terminals"
)

// binaryViewer dials a client that asks for binary data messages and
// subscribes to uri, reading nothing yet: with a small receive buffer, what
// the terminal prints meanwhile waits in the server's queue for it.
func binaryViewer(t *testing.T, ts *testServer, clientID, uri string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + ownerToken}}, HTTPClient: smallBuffers})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	for id, m := range []struct {
		method string
		params any
	}{
		{ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": clientID,
			"capabilities": map[string]any{ext.CapabilityBinaryData: map[string]any{}}}},
		{ahp.MethodSubscribe, map[string]any{"channel": uri}},
	} {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id + 1, "method": m.method, "params": m.params})
		if err := ws.Write(t.Context(), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	// Read up to the subscribe's answer: the output after it is what it watches.
	for {
		typ, frame, err := ws.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if typ == websocket.MessageText && bytes.HasPrefix(frame, []byte(`{"jsonrpc":"2.0","id":2,`)) {
			return ws
		}
	}
}

// outputMessage is one message of terminal output as a client got it.
type outputMessage struct {
	seq  int64
	data string
}

// readOutput reads uri's output from ws until it holds end.
func readOutput(t *testing.T, ws *websocket.Conn, uri, end string) (msgs []outputMessage, binaries int) {
	t.Helper()
	var all strings.Builder
	for !strings.Contains(all.String()[max(0, all.Len()-len(end)-64):], end) {
		typ, frame, err := ws.Read(t.Context())
		if err != nil {
			t.Fatalf("read: %v after %d bytes", err, all.Len())
		}
		var env ahp.Envelope
		if typ == websocket.MessageBinary {
			binaries++
			if env, err = ext.DecodeBinaryData(frame); err != nil {
				t.Fatal(err)
			}
		} else {
			var m struct {
				Method string       `json:"method"`
				Params ahp.Envelope `json:"params"`
			}
			if json.Unmarshal(frame, &m) != nil || m.Method != ahp.MethodAction || m.Params.Action.Type != ahp.TerminalData {
				continue
			}
			env = m.Params
		}
		if env.Channel == uri {
			msgs = append(msgs, outputMessage{env.ServerSeq, env.Action.Data})
			all.WriteString(env.Action.Data)
		}
	}
	return msgs, binaries
}

// TestQueuedOutputJoined: a binary viewer that falls behind gets the output
// queued for it joined into fewer binary data messages, byte for byte what
// a JSON viewer and a binary viewer that keep up get (checksums), in order,
// each message ending at a serverSeq those got, its data all the output up
// to it.
func TestQueuedOutputJoined(t *testing.T) {
	t.Parallel()
	// A queue that holds the whole output: this test is about joining, not
	// skipping ahead.
	ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) { hc.SendQueue, hc.PingInterval = 64<<20, noPings })
	holder := ts.dial(t)
	holder.InitializeWith("1.0.0", "holder", map[string]any{ext.CapabilityBinaryData: map[string]any{}})
	uri, _ := holder.CreateTerminal("joined", "holder", nil)
	holder.SetWaitTimeout(120e9)
	jsonViewer := ts.dial(t)
	jsonViewer.Initialize("1.0.0", "json-viewer")
	jsonViewer.Subscribe(uri)
	jsonViewer.SetWaitTimeout(120e9)
	behind := binaryViewer(t, ts, "behind", uri)

	// About 4.7 MB in many chunks, far more than the socket buffers hold.
	holder.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo sta''rt; seq 1 600000; echo do''ne\r"})
	holder.WaitOutput(uri, "done\r\n")
	jsonViewer.WaitOutput(uri, "done\r\n")

	got, binaries := readOutput(t, behind, uri, "done\r\n")
	var want []outputMessage
	for _, e := range jsonViewer.Envelopes() {
		if e.Channel == uri && e.Action.Type == ahp.TerminalData && e.RejectionReason == "" {
			want = append(want, outputMessage{e.ServerSeq, e.Action.Data})
		}
	}
	// The output from the command's echo on: what both got after subscribing.
	between := func(msgs []outputMessage) string {
		var all strings.Builder
		for _, m := range msgs {
			all.WriteString(m.data)
		}
		s := all.String()
		i := strings.Index(s, "echo sta''rt")
		j := strings.Index(s, "done\r\n")
		if i < 0 || j < i {
			t.Fatalf("no output from the command to its end")
		}
		return s[i : j+len("done\r\n")]
	}
	if a, b := sha256.Sum256([]byte(between(got))), sha256.Sum256([]byte(between(want))); a != b {
		t.Fatalf("the viewer behind got other output than the JSON viewer (%d vs %d bytes)", len(between(got)), len(between(want)))
	}
	if h := between(holderOutput(holder, uri)); sha256.Sum256([]byte(h)) != sha256.Sum256([]byte(between(want))) {
		t.Fatalf("the holder got other output than the JSON viewer")
	}
	start, first := checkJoined(t, "the viewer behind", got, want)
	// The JSON viewer's envelopes over the same output: up to got's last.
	same := 0
	for _, m := range want[start:] {
		if m.seq <= got[len(got)-1].seq {
			same++
		}
	}
	if len(got)-first >= same || binaries != len(got) {
		t.Fatalf("the viewer behind got %d messages (%d binary) for the JSON viewer's %d envelopes: nothing was joined", len(got)-first, binaries, same)
	}
	t.Logf("the viewer behind got %d messages for %d envelopes", len(got)-first, same)
}

// holderOutput is c's output messages on uri.
func holderOutput(c *client, uri string) []outputMessage {
	var out []outputMessage
	for _, e := range c.Envelopes() {
		if e.Channel == uri && e.Action.Type == ahp.TerminalData && e.RejectionReason == "" {
			out = append(out, outputMessage{e.ServerSeq, e.Action.Data})
		}
	}
	return out
}

// checkJoined checks that got is want with runs of envelopes joined: from
// the first serverSeq both have on, every message of got ends at a
// serverSeq of want and holds exactly the data of want's envelopes since
// got's previous message. It returns where in want and in got that first
// common serverSeq is.
func checkJoined(t *testing.T, name string, got, want []outputMessage) (start, first int) {
	t.Helper()
	at := map[int64]int{} // serverSeq → output length up to it, past the first common message
	start, first = -1, -1
	for i := 0; i < len(got) && start < 0; i++ {
		for j, m := range want {
			if m.seq == got[i].seq {
				start, first = j, i
				break
			}
		}
	}
	if start < 0 {
		t.Fatalf("%s: no serverSeq in common with the reference client", name)
	}
	n := 0
	for _, m := range want[start+1:] {
		n += len(m.data)
		at[m.seq] = n
	}
	n = 0
	for _, m := range got[first+1:] {
		n += len(m.data)
		if l, ok := at[m.seq]; !ok || l != n {
			t.Fatalf("%s: a message at serverSeq %d ends at %d bytes, the reference client's envelopes at %d (%v)", name, m.seq, n, l, ok)
		}
	}
	return start, first
}
