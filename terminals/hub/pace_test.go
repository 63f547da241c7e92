package hub

import (
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestPace: the claim holder's backlog paces the shell; viewers and other
// clients never do; the reader is woken by the holder draining, by a claim
// change and by a subscriber leaving, without polling.
func TestPace(t *testing.T) {
	h := newHub(t, 1<<20, term1)
	holder, viewer, other := newSub("me"), newSub("me"), newSub("other")
	viewer.viewOnly = true
	for _, s := range []*fakeSub{holder, viewer, other} {
		h.Initialize(s, []string{term1})
	}
	viewer.setBacklog(HighWater * 2)
	other.setBacklog(HighWater * 2)
	if b, drained, changed := h.Pace(term1); b != 0 || drained != nil || changed != nil {
		t.Fatalf("Pace with an idle holder = %d, %v, %v; want 0 and no channels", b, drained, changed)
	}
	holder.setBacklog(HighWater + 1)
	if b, _ := h.Publish(term1, data("x")); b != HighWater+1 {
		t.Errorf("Publish returned backlog %d, want the holder's %d", b, HighWater+1)
	}

	t.Run("holder drains", func(t *testing.T) {
		b, drained, _ := h.Pace(term1)
		if b != HighWater+1 {
			t.Fatalf("Pace = %d, want %d", b, HighWater+1)
		}
		select {
		case <-drained:
			t.Fatal("drained closed before the holder drained")
		default:
		}
		holder.setBacklog(LowWater - 1)
		<-drained // closed by the writer's signal
		if b, _, _ := h.Pace(term1); b >= LowWater {
			t.Errorf("Pace after draining = %d, want < %d", b, LowWater)
		}
	})
	t.Run("claim changes", func(t *testing.T) {
		holder.setBacklog(HighWater + 1)
		_, _, changed := h.Pace(term1)
		h.Do(func(tx Tx) {
			tx.Publish(term1, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("other")}, nil)
		})
		<-changed
		if b, _, _ := h.Pace(term1); b != HighWater*2 {
			t.Errorf("Pace after the claim moved = %d, want the new holder's %d", b, HighWater*2)
		}
	})
	t.Run("holder leaves", func(t *testing.T) {
		_, _, changed := h.Pace(term1)
		h.Leave(other)
		<-changed
		if b, _, _ := h.Pace(term1); b != 0 {
			t.Errorf("Pace after the holder left = %d, want 0", b)
		}
	})
	t.Run("channel removed", func(t *testing.T) {
		h.Initialize(other, []string{term1})
		_, _, changed := h.Pace(term1)
		h.RemoveTerminal(term1)
		<-changed
		if b, _, _ := h.Pace(term1); b != 0 {
			t.Errorf("Pace on a removed channel = %d, want 0", b)
		}
	})
}
