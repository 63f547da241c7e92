package hub

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/termhost/termhost/ahp"
)

// listing is a presence hook that lists the subscribers' clientIds, sorted.
func listing(uri string, _ ahp.Claim, subs []Subscriber) []byte {
	ids := []string{}
	for _, s := range subs {
		ids = append(ids, s.ClientID())
	}
	slices.Sort(ids)
	return []byte(uri + ":" + strings.Join(ids, ","))
}

// presences are the presence frames s received, in order.
func (s *fakeSub) presences() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, f := range s.frames {
		if f.raw != nil {
			out = append(out, string(f.raw))
		}
	}
	return out
}

// catalogues are the root/terminalsChanged envelopes s received, in order.
func (s *fakeSub) catalogues() []ahp.Envelope {
	var out []ahp.Envelope
	for _, e := range s.envelopes() {
		if e.Action.Type == ahp.RootTerminalsChanged {
			out = append(out, e)
		}
	}
	return out
}

// atMost is how many coalesced sends fit in d: one at once, then one per
// CoalesceInterval.
func atMost(d time.Duration) int { return int(d/CoalesceInterval) + 1 }

// TestPresenceCoalesced: connections joining and leaving a terminal a
// thousand times in a second, from several sources, reach its steady
// subscriber as at most one presence per CoalesceInterval, the last one
// the final list; each joiner gets the list with itself at once, and
// nothing waits once the churn is over. Without coalescing the steady
// subscriber got one per join and one per leave.
func TestPresenceCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1, term2)
		defer h.Close()
		h.SetPresence(listing)
		watch, other := newSub("watch"), newSub("other")
		h.Subscribe(watch, term1)
		h.Subscribe(other, term2)
		if got, want := watch.presences(), []string{term1 + ":watch"}; !slices.Equal(got, want) {
			t.Fatalf("the first subscriber's presence = %q, want %q", got, want)
		}

		start := time.Now()
		for i := range 1000 {
			s := newSub(fmt.Sprintf("c%03d", i))
			if _, err := h.Subscribe(s, term1); err != nil {
				t.Fatal(err)
			}
			if got := s.presences(); len(got) != 1 || !strings.Contains(got[0], s.clientID) {
				t.Fatalf("joiner %s got presence %q, want one list with itself", s.clientID, got)
			}
			time.Sleep(time.Millisecond)
			if i%3 != 0 { // a third stay until the end
				h.Leave(s)
			}
		}
		churn := time.Since(start)
		for _, s := range h.Audiences()[0].Subs {
			if s != watch {
				h.Leave(s)
			}
		}
		tickPast()

		got := watch.presences()
		if limit := atMost(churn + CoalesceInterval); len(got) > limit {
			t.Errorf("the steady subscriber got %d presences in %v of churn, want at most %d", len(got), churn, limit)
		}
		if last := got[len(got)-1]; last != term1+":watch" {
			t.Errorf("the steady subscriber's last presence = %q, want %q", last, term1+":watch")
		}
		if n := len(other.presences()); n != 1 {
			t.Errorf("the subscriber of %s got %d presences, want its own only", term2, n)
		}
		time.Sleep(10 * CoalesceInterval)
		if n := len(watch.presences()); n != len(got) {
			t.Errorf("%d presences came after the churn had settled, want none", n-len(got))
		}
	})
}

// TestJoinerNotToldTwice: a joiner told the list at once is not sent the
// same list again at the tick; a subscriber that had an older one is.
func TestJoinerNotToldTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1)
		defer h.Close()
		h.SetPresence(listing)
		watch, a := newSub("watch"), newSub("a")
		h.Subscribe(watch, term1)
		h.Subscribe(a, term1) // within the interval: waits for watch, a is told at once
		if got, want := a.presences(), []string{term1 + ":a,watch"}; !slices.Equal(got, want) {
			t.Errorf("the joiner's presence = %q, want %q", got, want)
		}
		tickPast()
		if got, want := a.presences(), []string{term1 + ":a,watch"}; !slices.Equal(got, want) {
			t.Errorf("after the tick the joiner has %q, want %q (once)", got, want)
		}
		if got, want := watch.presences(), []string{term1 + ":watch", term1 + ":a,watch"}; !slices.Equal(got, want) {
			t.Errorf("after the tick the steady subscriber has %q, want %q", got, want)
		}
	})
}

// TestCatalogueCoalesced: ten thousand renames in a second reach a root
// subscriber as at most one catalogue per CoalesceInterval, serverSeq
// growing, the last with the final title, and its snapshot plus those
// actions is a new subscriber's snapshot. Without coalescing it got ten
// thousand catalogues.
func TestCatalogueCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1, term2)
		defer h.Close()
		root := newSub("me")
		snap, _ := h.Subscribe(root, ahp.RootURI)
		start := time.Now()
		for i := range 10000 {
			h.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: fmt.Sprintf("t%d", i)})
			time.Sleep(100 * time.Microsecond)
		}
		h.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "final"})
		churn := time.Since(start)
		tickPast()

		cats := root.catalogues()
		if limit := atMost(churn + CoalesceInterval); len(cats) > limit || len(cats) == 0 {
			t.Errorf("the root subscriber got %d catalogues in %v of renames, want 1 to %d", len(cats), churn, limit)
		}
		state := snap.State.(ahp.RootState)
		prev := snap.FromSeq
		for _, e := range root.envelopes() {
			if e.ServerSeq <= prev {
				t.Errorf("serverSeq %d after %d, want it to grow", e.ServerSeq, prev)
			}
			prev = e.ServerSeq
			state = ahp.ReduceRoot(state, e.Action)
		}
		if got := state.Terminals[0].Title; got != "final" {
			t.Errorf("the root subscriber's catalogue titles %s %q, want final", term1, got)
		}
		fresh, _ := h.Subscribe(newSub("fresh"), ahp.RootURI)
		if !slices.EqualFunc(state.Terminals, fresh.State.(ahp.RootState).Terminals, func(a, b ahp.TerminalInfo) bool {
			return a.Resource == b.Resource && a.Title == b.Title && a.Claim == b.Claim && a.Lifecycle == b.Lifecycle
		}) {
			t.Errorf("snapshot + actions = %+v, want a new subscriber's %+v", state.Terminals, fresh.State.(ahp.RootState).Terminals)
		}
		time.Sleep(10 * CoalesceInterval)
		if n := len(root.catalogues()); n != len(cats) {
			t.Errorf("%d catalogues came after the renames had settled, want none", n-len(cats))
		}
	})
}

// TestCatalogueAtOnce: a creation, a disposal and an exit publish the
// catalogue at once, with the renames that waited, and after the presence
// that waited (a catalogue never overtakes a presence change made before
// it).
func TestCatalogueAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1)
		defer h.Close()
		h.SetPresence(listing)
		root := newSub("me")
		h.Initialize(root, []string{ahp.RootURI, term1})
		joiner := newSub("j")
		h.Subscribe(joiner, term1) // its presence to root waits
		h.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "renamed"})
		if n := len(root.catalogues()); n != 0 {
			t.Fatalf("a rename right after the creation sent %d catalogues at once, want it to wait", n)
		}
		code := 0
		for _, step := range []struct {
			name string
			do   func()
			want func([]ahp.TerminalInfo) bool
		}{
			{"a creation", func() { _ = h.AddTerminalMeta(term2, ahp.TerminalState{Title: "two"}, map[string]any{"k": "v"}, 0) }, func(l []ahp.TerminalInfo) bool {
				return len(l) == 2 && l[0].Title == "renamed" && string(l[1].Meta) == `{"k":"v"}`
			}},
			{"an exit", func() { h.Publish(term2, ahp.Action{Type: ahp.TerminalExited, ExitCode: &code}) }, func(l []ahp.TerminalInfo) bool {
				return len(l) == 2 && l[1].Lifecycle.Exited()
			}},
			{"a disposal", func() { h.RemoveTerminal(term2) }, func(l []ahp.TerminalInfo) bool { return len(l) == 1 }},
		} {
			before := len(root.catalogues())
			step.do()
			cats := root.catalogues()
			if len(cats) != before+1 || !step.want(cats[len(cats)-1].Action.Terminals) {
				t.Errorf("%s: %d catalogues at once, the last %+v; want one, up to date", step.name, len(cats)-before, cats[len(cats)-1].Action.Terminals)
			}
		}
		var order []string
		root.mu.Lock()
		defer root.mu.Unlock()
		for _, f := range root.frames {
			if f.raw != nil {
				order = append(order, "presence")
			} else if f.env.Action.Type == ahp.RootTerminalsChanged {
				order = append(order, "catalogue")
			}
		}
		if want := []string{"presence", "presence", "catalogue", "catalogue", "catalogue"}; !slices.Equal(order, want) {
			t.Errorf("root's subscriber got %v, want %v (its own presence, the joiner's, then the catalogues)", order, want)
		}
	})
}

// TestCloseSendsWhatWaits: Close sends what waits (the final state is
// never lost) and stops the timer; changes after it go at once.
func TestCloseSendsWhatWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1)
		root := newSub("me")
		h.Subscribe(root, ahp.RootURI)
		h.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "waits"})
		if n := len(root.catalogues()); n != 0 {
			t.Fatalf("a rename right after the creation sent %d catalogues at once, want it to wait", n)
		}
		h.Close()
		if cats := root.catalogues(); len(cats) != 1 || cats[0].Action.Terminals[0].Title != "waits" {
			t.Errorf("Close sent %+v, want the catalogue that waited", cats)
		}
		if h.co.armed {
			t.Errorf("the timer is still armed after Close")
		}
		h.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "after"})
		if cats := root.catalogues(); len(cats) != 2 || cats[1].Action.Terminals[0].Title != "after" {
			t.Errorf("a rename after Close sent %d catalogues, want one at once", len(cats)-1)
		}
		h.Close() // twice is fine
	})
}
