package terminals

import (
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/terminals/screen"
)

// TestScreenTapFollowsResizes: the screen model learns
// every size the terminal takes from the resizes its channel publishes (its
// tap), whoever resized it: the holder, the smallest view, a view leaving.
func TestScreenTapFollowsResizes(t *testing.T) {
	m := testManager(t, Config{SizePolicy: SizeSmallest})
	defer m.Close()
	const uri = "ahp-terminal:/sized"
	claim := ahp.ClientClaim("wide")
	if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Cols: 80, Rows: 24}); err != nil {
		t.Fatal(err)
	}
	wide, narrow := &member{id: "wide", kind: KindCLI}, &member{id: "narrow", kind: KindOwner}
	for _, s := range []*member{wide, narrow} {
		m.Connected(s.id)
		if _, err := m.Subscribe(s, uri); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, cols, rows int) {
		t.Helper()
		st, _ := m.state(uri)
		// Screen gives up after its own bound when the model lags (a
		// race build at load 30 took longer): ask again, within poll.Long.
		var lastErr error
		scr, ok := poll.Last(poll.Long, func() (screen.State, bool) {
			scr, err := m.Screen(t.Context(), wide, uri)
			lastErr = err
			return scr, err == nil
		})
		if !ok {
			t.Fatalf("%s: Screen: %v", what, lastErr)
		}
		if scr.Cols != cols || scr.Rows != rows || st.Cols != cols || st.Rows != rows {
			t.Errorf("%s: model %d×%d, state %d×%d, want %d×%d", what, scr.Cols, scr.Rows, st.Cols, st.Rows, cols, rows)
		}
	}
	check("created", 80, 24)
	resize := func(s *member, cols, rows int) {
		t.Helper()
		if out := m.Dispatch(s, ahp.Origin{ClientID: s.id, ClientSeq: 1}, uri, ahp.Action{Type: ahp.TerminalResized, Cols: cols, Rows: rows}, Policy{}); out != Accepted {
			t.Fatalf("resize by %s: %v, want accepted", s.id, out)
		}
	}
	resize(wide, 200, 50)
	check("the holder's size", 200, 50)
	resize(narrow, 100, 60)
	check("the smallest of 200×50 and 100×60", 100, 50)
	m.UnsubscribeAll(narrow)
	check("after the narrow view left", 200, 50)
}
