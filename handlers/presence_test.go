package handlers_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

const firefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"

// shareLabelled creates a share link with a label and returns its token.
func shareLabelled(t *testing.T, owner *client, uri, role, label string) string {
	t.Helper()
	res := owner.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": role, "label": label})
	var r struct {
		URL   string `json:"url"`
		Label string `json:"label"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if r.Label != label {
		t.Fatalf("x-share/create label = %q, want %q", r.Label, label)
	}
	_, tok, _ := strings.Cut(r.URL, "#share=")
	return tok
}

// describe renders members as "name/kind/device/control" for comparisons.
func describe(members []terminals.Member) []string {
	var out []string
	for _, m := range members {
		out = append(out, fmt.Sprintf("%s/%s/%s/%v", m.Name, m.Kind, m.Device, m.Control))
	}
	return out
}

// waitPresence waits for the next x-termhost/presence notification in which
// uri's presence reads want.
func waitPresence(t *testing.T, c *client, uri string, want []string) []terminals.Member {
	t.Helper()
	var got []terminals.Member
	c.NextFrame(fmt.Sprintf("presence %v", want), func(m *ahp.Message) bool {
		var p terminals.PresenceList
		if m.Method != terminals.MethodPresence || json.Unmarshal(m.Params, &p) != nil || p.Channel != uri {
			return false
		}
		got = p.Members
		return slices.Equal(describe(got), want)
	})
	return got
}

// TestPresenceOverAHP: the owner and a labelled driver link see each other
// by name in x-termhost/presence, never by token or clientId; leaving
// updates it.
func TestPresenceOverAHP(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t, "User-Agent", firefoxUA)
	init := owner.Initialize("1.0.0", "web-0123456789abcdef")
	selfID, _ := init["_meta"].(map[string]any)["termhost/presenceId"].(string)
	if selfID != terminals.PresenceID("web-0123456789abcdef") || strings.Contains(selfID, "0123456789abcdef") {
		t.Errorf("initialize _meta presenceId = %q, want an opaque id", selfID)
	}
	uri, _ := owner.CreateTerminal("team", "web-0123456789abcdef", nil)
	tok := shareLabelled(t, owner, uri, "driver", "alice")

	alice := ts.dial(t, "Authorization", "Bearer "+tok, "User-Agent", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36")
	alice.Initialize("1.0.0", "web-aaaabbbbccccdddd")
	alice.Subscribe(uri)
	both := []string{"Owner/owner/Firefox on Linux/true", "alice/driver/Chrome on Android/false"}
	for name, c := range map[string]*client{"owner": owner, "alice": alice} {
		t.Run(name+" sees both", func(t *testing.T) {
			got := waitPresence(t, c, uri, both)
			raw, _ := json.Marshal(got)
			for _, secret := range []string{tok, ownerToken, "web-0123456789abcdef", "web-aaaabbbbccccdddd"} {
				if strings.Contains(string(raw), secret) {
					t.Errorf("presence %s holds a token or clientId %q", raw, secret)
				}
			}
			if got[0].ID != selfID {
				t.Errorf("owner's presence id = %q, want the one initialize gave (%q)", got[0].ID, selfID)
			}
		})
	}

	t.Run("a CLI shows as user@host", func(t *testing.T) {
		cli := ts.dial(t)
		cli.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"},
			"clientId": "termhost-cli-abc", "clientInfo": map[string]any{"name": "termhost-cli", "title": "bob@build1"}})
		cli.Subscribe(uri)
		waitPresence(t, owner, uri, []string{"Owner/owner/Firefox on Linux/true", "bob@build1/cli//false", "alice/driver/Chrome on Android/false"})
		cli.Notify(ahp.MethodUnsubscribe, map[string]any{"channel": uri})
	})

	t.Run("leaving updates it", func(t *testing.T) {
		_ = alice.Conn().CloseNow()
		waitPresence(t, owner, uri, []string{"Owner/owner/Firefox on Linux/true"})
	})
}

// TestShareLabel: a label is kept with the link (x-share/list) and refused
// when it is not a short line of text.
func TestShareLabel(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("lbl", "owner", nil)
	shareLabelled(t, owner, uri, "viewer", "CI dashboard")
	list := owner.MustCall("x-share/list", map[string]any{"channel": ahp.RootURI, "terminal": uri})
	if !strings.Contains(string(list), `"label":"CI dashboard"`) {
		t.Errorf("x-share/list = %s, want the label", list)
	}
	for name, label := range map[string]string{"too long": strings.Repeat("x", 65), "control characters": "a\x1b[31mb"} {
		t.Run(name, func(t *testing.T) {
			owner.CallErr("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "viewer", "label": label}, ahp.CodeInvalidParams)
		})
	}
}

// TestStaleHolderReleased: the claim of a client whose connections all
// closed goes, after the grace period, to a client still there that may
// act; a viewer never gets it.
func TestStaleHolderReleased(t *testing.T) {
	cases := []struct {
		name, role string // who stays: owner, driver or viewer
		wantHeir   bool
	}{
		{"another owner tab takes it", "owner", true},
		{"a driver link takes it", "driver", true},
		{"a viewer link does not", "viewer", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, testserver.Terminals(func(c *terminalsConfig) { c.ClaimGrace = 50 * time.Millisecond }))
			admin := ts.dial(t) // makes the links; never subscribed to the terminal
			admin.Initialize("1.0.0", "admin")
			holder := ts.dial(t)
			holder.Initialize("1.0.0", "holder")
			uri, _ := holder.CreateTerminal("stale", "holder", nil)
			stay := ts.dial(t)
			if tc.role != "owner" {
				stay = ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, admin, uri, tc.role, "stayer"))
			}
			stay.Initialize("1.0.0", "stayer")
			stay.Subscribe(uri)
			_ = holder.Conn().CloseNow()
			if tc.wantHeir {
				e := stay.WaitAction("claim handed on", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalClaimed })
				if e.Action.Claim != ahp.ClientClaim("stayer") || e.Origin != nil {
					t.Errorf("claim after the holder left = %+v (origin %v), want stayer's, from the server", e.Action.Claim, e.Origin)
				}
				return
			}
			// Nobody there may hold it: presence shows nobody in control, and
			// the claim is anyone's who may act (granted at once).
			waitPresence(t, stay, uri, []string{"stayer/viewer//false"})
			poll.Until(t, 10*time.Second, "the holder's grace to end", func() bool { return !ts.m.Present("holder") })
			driver := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, admin, uri, "driver", "late"))
			driver.Initialize("1.0.0", "late")
			driver.Subscribe(uri)
			res := driver.MustCall("x-termhost/requestControl", map[string]any{"channel": ahp.RootURI, "terminal": uri})
			if !strings.Contains(string(res), `"status":"granted"`) {
				t.Errorf("requestControl of a claim whose holder left = %s, want granted", res)
			}
			if claim, _ := ts.m.Claim(uri); claim != ahp.ClientClaim("late") {
				t.Errorf("claim = %+v, want late's (never the viewer's)", claim)
			}
		})
	}
}

// TestDetachedHolderReleasedAtOnce: a holder that says
// goodbye (a normal close, as `termhost attach` sends when you detach)
// hands the claim on at once, so the tab still there gets the terminal's
// size back; a dropped connection keeps it for the claim grace.
func TestDetachedHolderReleasedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		detach   bool
		wantHeir bool
	}{
		{"normal close hands on at once", true, true},
		{"dropped connection keeps it for the grace", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, testserver.Terminals(func(c *terminalsConfig) { c.ClaimGrace = time.Hour }))
			holder := ts.dial(t)
			holder.Initialize("1.0.0", "wide")
			uri, _ := holder.CreateTerminal("wide", "wide", nil)
			holder.Dispatch(uri, map[string]any{"type": ahp.TerminalResized, "cols": 200, "rows": 50})
			stay := ts.dial(t)
			stay.Initialize("1.0.0", "narrow")
			stay.Subscribe(uri)
			waitMembers(t, stay, uri, 2)
			if tc.detach {
				_ = holder.Conn().Close(websocket.StatusNormalClosure, "detached")
				e := stay.WaitAction("claim handed on", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalClaimed })
				if e.Action.Claim != ahp.ClientClaim("narrow") {
					t.Fatalf("claim after the detach = %+v, want narrow's", e.Action.Claim)
				}
				// The new holder sizes the terminal.
				stay.Dispatch(uri, map[string]any{"type": ahp.TerminalResized, "cols": 80, "rows": 24})
				stay.WaitAction("resized", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalResized && e.Action.Cols == 80 })
				return
			}
			_ = holder.Conn().CloseNow()
			waitMembers(t, stay, uri, 1)
			if claim, _ := ts.m.Claim(uri); claim != ahp.ClientClaim("wide") {
				t.Errorf("claim after a drop = %+v, want still wide's within the grace", claim)
			}
		})
	}
}

// waitMembers waits for an x-termhost/presence notification in which uri
// has n members.
func waitMembers(t *testing.T, c *client, uri string, n int) {
	t.Helper()
	c.NextFrame(fmt.Sprintf("%d present", n), func(m *ahp.Message) bool {
		var p terminals.PresenceList
		return m.Method == terminals.MethodPresence && json.Unmarshal(m.Params, &p) == nil && p.Channel == uri && len(p.Members) == n
	})
}
