package terminals

import (
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/hub"
)

// TestSizePolicySmallest: under SizeSmallest every
// connection that may type reports its view's size and the pty gets the
// smallest columns and rows; when the smallest leaves, the terminal grows
// back at once; viewers do not count. Under SizeHolder (the default) only
// the claim holder resizes.
func TestSizePolicySmallest(t *testing.T) {
	for _, policy := range []string{SizeSmallest, SizeHolder} {
		t.Run(policy, func(t *testing.T) {
			m := testManager(t, Config{SizePolicy: policy})
			defer m.Close()
			const uri = "ahp-terminal:/sized"
			claim := ahp.ClientClaim("wide")
			if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Cols: 80, Rows: 24}); err != nil {
				t.Fatal(err)
			}
			wide, narrow, viewer := &member{id: "wide", kind: KindCLI}, &member{id: "narrow", kind: KindOwner}, &member{id: "v", kind: KindViewer, viewOnly: true}
			for _, s := range []*member{wide, narrow, viewer} {
				m.Connected(s.id)
				if _, err := m.Subscribe(s, uri); err != nil {
					t.Fatal(err)
				}
			}
			resize := func(s *member, cols, rows int) Outcome {
				return m.Dispatch(s, ahp.Origin{ClientID: s.id, ClientSeq: 1}, uri, ahp.Action{Type: ahp.TerminalResized, Cols: cols, Rows: rows}, Policy{})
			}
			size := func() (sz [2]int) {
				m.hub.Do(func(tx hub.Tx) {
					st, _ := tx.Terminal(uri)
					sz = [2]int{st.Cols, st.Rows}
				})
				return sz
			}
			check := func(what string, want [2]int) {
				t.Helper()
				if got := size(); got != want {
					t.Errorf("%s: size %v, want %v", what, got, want)
				}
			}
			resize(wide, 200, 50)
			check("the holder's size", [2]int{200, 50})
			out := resize(narrow, 100, 60)
			if policy == SizeHolder {
				if out != Rejected {
					t.Errorf("a non-holder's resize under %s: %v, want rejected", policy, out)
				}
				check("after a non-holder's resize", [2]int{200, 50})
				return
			}
			check("the smallest of 200×50 and 100×60", [2]int{100, 50})
			if out := resize(viewer, 40, 10); out != Rejected {
				t.Errorf("a viewer's resize: %v, want rejected", out)
			}
			check("after a viewer's resize", [2]int{100, 50})
			m.UnsubscribeAll(narrow)
			check("after the narrow client left", [2]int{200, 50})
			m.Unsubscribe(wide, uri)
			check("with nobody left to size it", [2]int{200, 50})
			if _, err := m.Subscribe(wide, uri); err != nil {
				t.Fatal(err)
			}
			resize(wide, 150, 40)
			check("the one view left", [2]int{150, 40})
			if err := m.Dispose(uri); err != nil {
				t.Fatal(err)
			}
			m.sizes.mu.Lock()
			left := len(m.sizes.by)
			m.sizes.mu.Unlock()
			if left != 0 {
				t.Errorf("%d terminals' size wishes kept after the dispose", left)
			}
		})
	}
}
