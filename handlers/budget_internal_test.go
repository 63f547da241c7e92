package handlers

import (
	"strings"
	"testing"

	"github.com/termhost/termhost/handlers/auth"
)

// TestTotalAnswersShared: once the unsent answers of everyone but the
// owner pass TotalQueue, only a participant holding more than an equal
// share of it is refused. Two share links that never read cannot fill the
// total and get a third, which holds little, closed.
func TestTotalAnswersShared(t *testing.T) {
	s := &Server{participants: map[string]*participant{}}
	s.cfg.Budgets = Budgets{TotalQueue: 1000, ParticipantQueue: 800}
	s.cfg.Budgets.setDefaults()
	link := func(id string) *conn {
		c := &conn{s: s, shareID: id}
		if why := s.admit(c, auth.Principal{Role: auth.RoleViewer, Share: &auth.Share{ID: id}}); why != "" {
			t.Fatalf("admit %s: %s", id, why)
		}
		return c
	}
	a, b, honest := link("a"), link("b"), link("c")
	for _, hold := range []struct {
		c *conn
		n int
	}{{a, 500}, {b, 450}} {
		if why := hold.c.holdAnswer(hold.n); why != "" {
			t.Fatalf("holding %d under the total: %s", hold.n, why)
		}
	}
	if why := honest.holdAnswer(200); why != "" {
		t.Errorf("a link holding 200 of a total of 1000 shared by 3, with 950 held by the others: refused (%s)", why)
	}
	if why := a.holdAnswer(100); !strings.Contains(why, "unsent answers") {
		t.Errorf("a link over its share (600 of 1000 among 3) asks for more: %q, want a refusal", why)
	}
	if got, want := s.heldTotal.Load(), int64(1150); got != want {
		t.Errorf("held in all %d, want %d", got, want)
	}
}
