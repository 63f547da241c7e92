package handlers_test

import (
	"testing"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestSizePolicyOverAHP: initialize tells a client the
// size policy; under "smallest" a client that does not hold the claim
// resizes too, the pty gets the smallest size (the echo carries it), and
// it grows back when that client detaches.
func TestSizePolicyOverAHP(t *testing.T) {
	ts := newServer(t, testserver.Terminals(func(c *terminalsConfig) { c.SizePolicy = terminals.SizeSmallest }))
	wide := ts.dial(t)
	init := wide.Initialize("1.0.0", "wide")
	if got, _ := init["_meta"].(map[string]any)["termhost/sizePolicy"].(string); got != terminals.SizeSmallest {
		t.Errorf("initialize _meta sizePolicy = %q, want %q", got, terminals.SizeSmallest)
	}
	uri, _ := wide.CreateTerminal("small", "wide", nil)
	wide.Dispatch(uri, map[string]any{"type": ahp.TerminalResized, "cols": 200, "rows": 50})
	// The wide size is applied before the narrow client sends its own:
	// otherwise the first echo with 90 columns could be 90x60.
	wide.WaitAction("the wide size", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalResized && e.Action.Cols == 200 && e.Action.Rows == 50
	})
	narrow := ts.dial(t)
	narrow.Initialize("1.0.0", "narrow")
	narrow.Subscribe(uri)
	narrow.Dispatch(uri, map[string]any{"type": ahp.TerminalResized, "cols": 90, "rows": 60})
	e := wide.WaitAction("the smallest size", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalResized && e.Action.Cols == 90 })
	if e.Action.Rows != 50 {
		t.Errorf("resize echo %dx%d, want 90x50 (the smallest columns and rows)", e.Action.Cols, e.Action.Rows)
	}
	_ = narrow.Conn().Close(websocket.StatusNormalClosure, "detached")
	wide.WaitAction("the size back", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalResized && e.Action.Cols == 200 && e.Action.Rows == 50 && e.Origin == nil
	})
}
