package terminals

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/hub"
)

// member is a subscriber that shows in presence.
type member struct {
	id, kind string
	viewOnly bool
}

func (s *member) Shape() ahp.Shape         { return ahp.Current }
func (s *member) Scope() string            { return "" }
func (s *member) ClientID() string         { return s.id }
func (s *member) ViewOnly() bool           { return s.viewOnly }
func (s *member) Backlog() int             { return 0 }
func (s *member) Hold()                    {}
func (s *member) Drained() <-chan struct{} { return closed }
func (s *member) Deliver(*hub.Frame) bool  { return true }
func (s *member) PresenceMember() Member {
	return Member{ID: PresenceID(s.id), Name: s.id, Kind: s.kind}
}

// TestClaimReleasedAfterGrace: a claim whose client has no connection for
// ClaimGrace goes to a client still there that may act, the owner's first;
// a viewer never gets it; a client back within the grace keeps it.
func TestClaimReleasedAfterGrace(t *testing.T) {
	cases := []struct {
		name   string
		stay   []*member
		back   bool // the holder reconnects before the grace ends
		wantTo string
	}{
		{"owner before driver", []*member{{id: "drv", kind: KindDriver}, {id: "tab", kind: KindOwner}}, false, "tab"},
		{"a driver", []*member{{id: "drv", kind: KindDriver}}, false, "drv"},
		{"never a viewer", []*member{{id: "v", kind: KindViewer, viewOnly: true}}, false, "gone"},
		{"the holder came back", []*member{{id: "tab", kind: KindOwner}}, true, "gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := testManager(t, Config{ClaimGrace: 10 * time.Second})
				defer m.Close()
				const uri = "ahp-terminal:/grace"
				if err := m.hub.AddTerminal(uri, ahp.TerminalState{Claim: ahp.ClientClaim("gone")}, 1024); err != nil {
					t.Fatal(err)
				}
				for _, s := range tc.stay {
					m.Connected(s.id)
					if _, err := m.Subscribe(s, uri); err != nil {
						t.Fatal(err)
					}
				}
				m.Connected("gone")
				m.ConnectionLost("gone")
				if tc.back {
					time.Sleep(5 * time.Second)
					m.Connected("gone")
				}
				time.Sleep(9 * time.Second) // within the grace: nothing moves yet
				if c, _ := m.Claim(uri); c != ahp.ClientClaim("gone") {
					t.Fatalf("claim moved to %+v before the grace ended", c)
				}
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if c, _ := m.Claim(uri); c != ahp.ClientClaim(tc.wantTo) {
					t.Errorf("claim after the grace = %+v, want %s's", c, tc.wantTo)
				}
				if list := presenceList(m.hub.Audiences()[0]).Members; tc.wantTo != "gone" && (len(list) == 0 || !list[0].Control) {
					t.Errorf("presence %+v: want the new holder first and in control", list)
				}
			})
		})
	}
}

// TestClaimHandedOnWhenLeft: a client that left (ConnectionClosedByClient, a normal close)
// hands its claim on at once, without waiting out the grace.
func TestClaimHandedOnWhenLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := testManager(t, Config{ClaimGrace: time.Hour})
		defer m.Close()
		const uri = "ahp-terminal:/left"
		if err := m.hub.AddTerminal(uri, ahp.TerminalState{Claim: ahp.ClientClaim("gone")}, 1024); err != nil {
			t.Fatal(err)
		}
		m.Connected("tab")
		if _, err := m.Subscribe(&member{id: "tab", kind: KindOwner}, uri); err != nil {
			t.Fatal(err)
		}
		m.Connected("gone")
		m.Connected("gone")
		if n := m.ConnectionClosedByClient("gone"); n != 1 {
			t.Fatalf("ConnectionClosedByClient with a connection remaining = %d, want 1", n)
		}
		synctest.Wait()
		if c, _ := m.Claim(uri); c != ahp.ClientClaim("gone") {
			t.Fatalf("claim moved to %+v while the client still had a connection", c)
		}
		m.ConnectionClosedByClient("gone")
		synctest.Wait()
		if c, _ := m.Claim(uri); c != ahp.ClientClaim("tab") {
			t.Errorf("claim after ConnectionClosedByClient = %+v, want tab's at once", c)
		}
	})
}
