package hub

import (
	"fmt"
	"sync"
	"testing"
)

// orderSub is a fakeSub that notes, in one list all of them share, who
// was given a frame when.
type orderSub struct {
	*fakeSub
	name  string
	mu    *sync.Mutex
	order *[]string
}

func (s orderSub) Deliver(f *Frame) bool {
	s.mu.Lock()
	*s.order = append(*s.order, s.name)
	s.mu.Unlock()
	return s.fakeSub.Deliver(f)
}

// TestHolderGetsOutputFirst: of a terminal's many subscribers, the claim
// holder's connections are given each output frame first (their writers
// wake first: the holder's echo does not wait behind the audience's
// writes), then everyone else; a viewer of the holder's own clientId is
// not the holder.
func TestHolderGetsOutputFirst(t *testing.T) {
	h := newHub(t, 1<<20, term1)
	var mu sync.Mutex
	var order []string
	sub := func(name, clientID string, viewOnly bool) orderSub {
		s := orderSub{fakeSub: newSub(clientID), name: name, mu: &mu, order: &order}
		s.viewOnly = viewOnly
		h.Initialize(s, []string{term1})
		return s
	}
	for i := range 50 {
		sub(fmt.Sprintf("viewer %d", i), fmt.Sprintf("v%d", i), true)
	}
	sub("the holder's viewer link", "me", true)
	sub("holder tab 1", "me", false)
	sub("holder tab 2", "me", false)
	for i := range 50 {
		sub(fmt.Sprintf("viewer %d", 50+i), fmt.Sprintf("v%d", 50+i), true)
	}
	for range 5 {
		mu.Lock()
		order = nil
		mu.Unlock()
		h.Publish(term1, data("x"))
		mu.Lock()
		got := order
		mu.Unlock()
		if len(got) != 103 {
			t.Fatalf("%d deliveries, want 103", len(got))
		}
		first := map[string]bool{got[0]: true, got[1]: true}
		if !first["holder tab 1"] || !first["holder tab 2"] {
			t.Fatalf("output went first to %q and %q, want the holder's two connections", got[0], got[1])
		}
	}
}
