package handlers_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// keystroke is a dispatchAction of terminal/input in the form the browser's
// client, the Go client and the bench send (the server reads it in one
// pass: fastinput.go).
func keystroke(uri string, seq int64, data string) string {
	return `{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":` + strconv.Quote(uri) +
		`,"clientSeq":` + strconv.FormatInt(seq, 10) + `,"action":{"type":"terminal/input","data":` + strconv.Quote(data) + `}}}`
}

// TestKeystrokesWhileOutputFlows: keystrokes sent back to back while the
// terminal prints without pause (its output delivered to the typist from
// the terminal's reader while the typist's connection writes the
// confirmations of its keystrokes from its own reader) reach the program
// once each and in order, and the typist receives every envelope once, in
// serverSeq order (the recording client fails the test otherwise), with
// the confirmation of each keystroke once, in the order typed; JSON and
// binary data clients alike.
func TestKeystrokesWhileOutputFlows(t *testing.T) {
	t.Parallel()
	for _, binary := range []bool{false, true} {
		t.Run(fmt.Sprintf("binary=%v", binary), func(t *testing.T) {
			ts := newServer(t)
			c := ts.dial(t)
			var caps map[string]any
			if binary {
				caps = map[string]any{ext.CapabilityBinaryData: map[string]any{}}
			}
			c.InitializeWith("1.0.0", "typist", caps)
			uri, _ := c.CreateTerminal("typed", "typist", nil)
			c.Subscribe(uri)
			seq := int64(0)
			send := func(data string) {
				seq++
				c.SendRaw(keystroke(uri, seq, data))
			}
			// Dots from a loop in the background, the keystrokes echoed by cat.
			send("stty raw -echo; echo RE''ADY; (while :; do printf .; done) & cat\r")
			c.WaitOutput(uri, "READY")
			const n = 400
			var typed strings.Builder
			for i := range n {
				k := string(rune('a' + i%26))
				typed.WriteString(k)
				send(k)
			}
			want := typed.String()
			echoed := func(out string) string {
				_, after, _ := strings.Cut(out, "READY")
				return strings.Map(func(r rune) rune {
					if r >= 'a' && r <= 'z' {
						return r
					}
					return -1
				}, after)
			}
			c.WaitOutputFunc("every keystroke echoed", uri, func(out string) bool { return len(echoed(out)) >= n })
			if got := echoed(c.Output(uri)); got != want {
				t.Errorf("the program echoed %q, want %q", got, want)
			}
			var confirmed []int64
			for _, e := range c.Envelopes() {
				if e.Action.Type == ahp.TerminalInput && e.Origin != nil {
					if e.RejectionReason != "" {
						t.Errorf("keystroke %d rejected: %s", e.Origin.ClientSeq, e.RejectionReason)
					}
					confirmed = append(confirmed, e.Origin.ClientSeq)
				}
			}
			for i := range confirmed {
				if i >= int(seq) || confirmed[i] != int64(i+1) {
					t.Fatalf("confirmations of the keystrokes: %v, want 1 to %d once each in order", confirmed, seq)
				}
			}
			if len(confirmed) != int(seq) {
				t.Errorf("%d confirmations for %d keystrokes", len(confirmed), seq)
			}
			send("\x03") // the loop ends with the shell's group
		})
	}
}
