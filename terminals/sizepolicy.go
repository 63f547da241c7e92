package terminals

import (
	"fmt"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/lockrank"
	"github.com/termhost/termhost/terminals/hub"
)

// Size policies (Config.SizePolicy, `termhost serve --size-policy`): who
// decides a terminal's size when several clients are connected.
const (
	// SizeHolder: the claim holder sizes the pty; everyone else mirrors it.
	SizeHolder = ext.SizeHolder
	// SizeSmallest: every connected client that may type reports the size
	// of its view, and the pty gets the smallest columns and rows among
	// them, as tmux's window-size smallest: nobody has to pan.
	SizeSmallest = ext.SizeSmallest
)

// sizeWants are, per terminal, the sizes its connections asked for under
// SizeSmallest. Keyed by connection (Subscriber): a connection's wish goes
// with it. Its lock is a leaf: it may be taken under the hub lock.
type sizeWants struct {
	mu lockrank.Mutex[lockrank.Leaf]
	by map[string]map[Subscriber][2]int // uri → connection → cols, rows
}

func checkSizePolicy(p string) error {
	if p != SizeHolder && p != SizeSmallest {
		return fmt.Errorf("size policy must be %s or %s, got %q", SizeHolder, SizeSmallest, p)
	}
	return nil
}

// SizePolicy is the manager's size policy.
func (m *Manager) SizePolicy() string { return m.cfg.SizePolicy }

// want records s's size for uri and returns the smallest of all wishes.
func (w *sizeWants) want(uri string, s Subscriber, cols, rows int) (int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = map[string]map[Subscriber][2]int{}
	}
	if w.by[uri] == nil {
		w.by[uri] = map[Subscriber][2]int{}
	}
	w.by[uri][s] = [2]int{cols, rows}
	c, r, _ := smallestOf(w.by[uri])
	return c, r
}

// drop forgets s's wishes (for uri, or every terminal when uri is "") and
// returns the terminals whose smallest size changed, with the new size.
func (w *sizeWants) drop(s Subscriber, uri string) map[string][2]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := map[string][2]int{}
	for u, wishes := range w.by {
		if uri != "" && u != uri {
			continue
		}
		if _, ok := wishes[s]; !ok {
			continue
		}
		bc, br, _ := smallestOf(wishes)
		delete(wishes, s)
		if len(wishes) == 0 {
			delete(w.by, u)
			continue // nobody left to size it: it keeps its size
		}
		if c, r, _ := smallestOf(wishes); c != bc || r != br {
			changed[u] = [2]int{c, r}
		}
	}
	return changed
}

// forget drops a disposed terminal's wishes.
func (w *sizeWants) forget(uri string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.by, uri)
}

func smallestOf(wishes map[Subscriber][2]int) (cols, rows int, ok bool) {
	for _, sz := range wishes {
		if !ok || sz[0] < cols {
			cols = sz[0]
		}
		if !ok || sz[1] < rows {
			rows = sz[1]
		}
		ok = true
	}
	return cols, rows, ok
}

// resizeForLeaver applies the sizes that grew back when s left (or
// unsubscribed): as the server, so every client sees the usual resize.
func (m *Manager) resizeForLeaver(s Subscriber, uri string) {
	if m.cfg.SizePolicy != SizeSmallest {
		return
	}
	for u, sz := range m.sizes.drop(s, uri) {
		t := m.live(u)
		if t == nil {
			continue
		}
		a := ahp.Action{Type: ahp.TerminalResized, Cols: sz[0], Rows: sz[1]}
		m.hub.Do(func(tx hub.Tx) {
			if st, ok := tx.Terminal(u); !ok || st.Lifecycle.Exited() || st.Cols == a.Cols && st.Rows == a.Rows {
				return
			}
			if reason, _ := m.effect(t, a); reason == "" {
				tx.Publish(u, a, nil)
			}
		})
	}
}
