package handlers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestScreenPreview: x-termhost/screen returns a
// terminal's current screen as text to its owner and to a share link of
// that terminal, and nothing of any other terminal.
func TestScreenPreview(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("shown", "owner", map[string]any{"name": "build", "cols": 40, "rows": 6})
	other, _ := owner.CreateTerminal("private", "owner", map[string]any{"name": "secret"})
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "clear; echo pre''view-$((40+2))\r"})
	owner.WaitOutput(uri, "preview-42")
	_, tok := share(t, owner, uri, "viewer", 3600)
	v := ts.dial(t, "Authorization", "Bearer "+tok)
	v.Initialize("1.0.0", "viewer")

	for _, tc := range []struct {
		name string
		c    *client
	}{{"owner", owner}, {"share link", v}} {
		t.Run(tc.name, func(t *testing.T) {
			var r ext.ScreenResult
			if err := json.Unmarshal(tc.c.MustCall(ext.MethodScreen, map[string]any{"channel": uri}), &r); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(r.Lines, "\n")
			if r.Cols != 40 || r.Rows != 6 || len(r.Lines) != 6 || !strings.Contains(text, "preview-42") {
				t.Fatalf("screen = %dx%d %q, want 40x6 showing preview-42", r.Cols, r.Rows, text)
			}
		})
	}
	t.Run("share link, other terminal", func(t *testing.T) {
		v.CallErr(ext.MethodScreen, map[string]any{"channel": other}, ahp.CodeNotFound)
	})
	t.Run("unknown terminal", func(t *testing.T) {
		owner.CallErr(ext.MethodScreen, map[string]any{"channel": "ahp-terminal:/nope"}, ahp.CodeNotFound)
	})
	t.Run("server started with --screen-model=false", func(t *testing.T) {
		ts := newServer(t, testserver.Terminals(func(c *terminals.Config) { c.NoScreenModel = true }))
		owner := ts.dial(t)
		owner.Initialize("1.0.0", "owner")
		uri, _ := owner.CreateTerminal("shown", "owner", nil)
		err := owner.CallErr(ext.MethodScreen, map[string]any{"channel": uri}, ahp.CodeNotFound)
		if want := "no screen model: the server keeps no screen models (it was started with --screen-model=false)"; err.Message != want {
			t.Fatalf("error message %q, want the reason %q", err.Message, want)
		}
	})
}
