package handlers_test

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/bench/wirecount"
)

// dataBetween is the terminal output a client received on uri from the
// first frame holding from to the frame where the output since then first
// holds until: the same frames for every client subscribed before from was
// typed that has seen until (what follows, a prompt, may reach one client
// before another).
func dataBetween(t *testing.T, c *client, uri, from, until string) []ahp.Envelope {
	t.Helper()
	var out []ahp.Envelope
	var seen strings.Builder
	for _, e := range c.Envelopes() {
		if e.Channel != uri || e.Action.Type != ahp.TerminalData || e.RejectionReason != "" {
			continue
		}
		if out != nil || strings.Contains(e.Action.Data, from) {
			out = append(out, e)
			seen.WriteString(e.Action.Data)
			if strings.Contains(seen.String(), until) {
				return out
			}
		}
	}
	t.Fatalf("no output from %q to %q", from, until)
	return nil
}

// fromStart is the output of envs from the start marker to the end marker.
func fromStart(envs []ahp.Envelope) string {
	var all strings.Builder
	for _, e := range envs {
		all.WriteString(e.Action.Data)
	}
	s := all.String()
	s = s[strings.Index(s, "sta''rt"):]
	return s[:strings.Index(s, "done\r\n")+len("done\r\n")]
}

// TestBinaryData: a client that asks for
// x-termhost/binaryData in initialize gets terminal output as binary
// messages, the rest as JSON; it holds the same envelopes, byte for byte, as
// a JSON client of the same terminal (colours, invalid UTF-8, 600 KB), for
// fewer bytes on the wire; a reconnect keeps the choice; a client without
// the capability, or with it null, gets JSON only.
func TestBinaryData(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"0.8.0", "1.0.0"} {
		t.Run(version, func(t *testing.T) {
			ts := newServer(t)
			url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
			h := http.Header{}
			h.Set("Authorization", "Bearer "+ownerToken)
			var binWire, textWire atomic.Int64
			dial := func(wire *atomic.Int64) *client {
				return ahptest.MustDial(t, url, ahptest.Options{Header: h, HTTPClient: wirecount.Client(wire), Versions: ts.versions})
			}
			bin := dial(&binWire)
			bin.InitializeWith(version, "binary-tab", map[string]any{ext.CapabilityBinaryData: map[string]any{}})
			text := dial(&textWire)
			text.Initialize(version, "json-tab")
			null := ts.dial(t)
			null.InitializeWith(version, "null-tab", map[string]any{ext.CapabilityBinaryData: nil})
			uri, _ := bin.CreateTerminal("bin", "binary-tab", nil)
			text.Subscribe(uri)
			null.Subscribe(uri)

			w0, t0 := binWire.Load(), textWire.Load()
			// 30000 coloured lines with an invalid UTF-8 byte each.
			bin.Dispatch(uri, map[string]any{"type": "terminal/input",
				"data": `echo sta''rt; for i in $(seq 30000); do printf '\033[3%dm%05d\033[0m \377\n' $((i%8)) $i; done; echo do''ne` + "\r"})
			for _, c := range []*client{bin, text, null} {
				c.SetWaitTimeout(60e9)
				c.WaitOutput(uri, "done\r\n")
			}
			binBytes, textBytes := binWire.Load()-w0, textWire.Load()-t0

			want := dataBetween(t, text, uri, "sta''rt", "done\r\n")
			// A client that falls behind gets binary data messages joined
			// (docs/protocol.md, "Binary output"): the same text at the
			// same serverSeqs, in fewer messages.
			for name, c := range map[string]*client{"binary": bin, "null capability": null} {
				got := dataBetween(t, c, uri, "sta''rt", "done\r\n")
				if name == "null capability" && !slices.EqualFunc(got, want, func(a, b ahp.Envelope) bool {
					return a.ServerSeq == b.ServerSeq && a.Action.Data == b.Action.Data
				}) {
					t.Fatalf("%s client: %d envelopes differ from the JSON client's %d", name, len(got), len(want))
				}
				checkJoined(t, name, holderOutput(c, uri), holderOutput(text, uri))
				if sha256.Sum256([]byte(fromStart(got))) != sha256.Sum256([]byte(fromStart(want))) {
					t.Fatalf("%s client: the output differs from the JSON client's", name)
				}
			}
			if !strings.Contains(text.Output(uri), "00007\x1b[0m \ufffd\r\n") {
				t.Fatalf("the output lacks a coloured line with its invalid byte as U+FFFD")
			}
			if text.BinaryMessages() != 0 || null.BinaryMessages() != 0 {
				t.Fatalf("clients without the capability got binary messages: %d, %d", text.BinaryMessages(), null.BinaryMessages())
			}
			live := 0
			for _, e := range bin.Envelopes() {
				if ext.BinaryData(e) {
					live++
				}
			}
			if n := bin.BinaryMessages(); n != live || n < 2 {
				t.Fatalf("binary client: %d binary messages for %d output envelopes", n, live)
			}
			// The data is about 600 KB with an ESC (6 bytes in JSON) and an
			// invalid byte (\ufffd: 6 bytes) every 13 bytes.
			if binBytes*10 > textBytes*8 {
				t.Fatalf("wire: %d bytes binary vs %d JSON: want at least 20 %% fewer", binBytes, textBytes)
			}
			t.Logf("wire for the same output: %d bytes binary, %d JSON (%.2f)", binBytes, textBytes, float64(binBytes)/float64(textBytes))

			// A reconnect of the clientId keeps binary messages.
			seen := bin.LastSeq()
			_ = bin.Conn().CloseNow()
			bin.WaitClosed()
			again := ts.dial(t)
			again.MustCall(ahp.MethodReconnect, map[string]any{"channel": ahp.RootURI, "clientId": "binary-tab",
				"lastSeenServerSeq": seen, "subscriptions": []string{ahp.RootURI, uri}})
			again.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo af''ter\r"})
			again.WaitOutput(uri, "after\r\n")
			if again.BinaryMessages() == 0 {
				t.Fatalf("after reconnect the output came as JSON")
			}
		})
	}
}
