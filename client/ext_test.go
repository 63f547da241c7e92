package client_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// notice waits for c's next ext.NotifyControlRequest of status on uri.
func notice(t *testing.T, c *client.Client, uri, status string) ext.ControlNotice {
	t.Helper()
	var n ext.ControlNotice
	waitEvent(t, c, "controlRequest "+status, func(ev client.Event) bool {
		if ev.Kind != client.EventNotification || ev.Method != ext.NotifyControlRequest {
			return false
		}
		n = ext.ControlNotice{}
		return json.Unmarshal(ev.Params, &n) == nil && n.Terminal == uri && n.Status == status
	})
	return n
}

// TestPresenceAndScreen: the typed x-termhost/presence and
// x-termhost/screen calls against the real server.
func TestPresenceAndScreen(t *testing.T) {
	ts := newServer(t)
	c := dial(t, ts.URL, client.Options{})
	uri := createShell(t, c, "typed")
	waitOutput(t, c, uri, "the prompt", "$ ")

	lists, err := c.Presence(t.Context())
	if err != nil {
		t.Fatalf("Presence: %v", err)
	}
	i := slices.IndexFunc(lists, func(p ext.PresenceList) bool { return p.Channel == uri })
	if i < 0 || len(lists[i].Members) != 1 {
		t.Fatalf("Presence = %+v, want %s with one member", lists, uri)
	}
	if m := lists[i].Members[0]; m.ID != terminals.PresenceID(c.ClientID()) || m.Kind != ext.KindCLI || !m.Control {
		t.Errorf("Presence member = %+v, want this client (%s, cli) in control", m, terminals.PresenceID(c.ClientID()))
	}

	scr, err := c.Screen(t.Context(), uri)
	if err != nil {
		t.Fatalf("Screen: %v", err)
	}
	if scr.Cols <= 0 || scr.Rows <= 0 || len(scr.Lines) != scr.Rows || !strings.HasPrefix(scr.Lines[0], "$") {
		t.Errorf("Screen = %+v, want a screen of Rows lines starting with the prompt", scr)
	}
	if _, err := c.Screen(t.Context(), ahp.TerminalURI("nope")); !isAHPError(err, ahp.CodeNotFound) {
		t.Errorf("Screen of no terminal: err = %v, want AHP error %d", err, ahp.CodeNotFound)
	}
}

// TestSetRecording: the typed x-termhost/record call starts and pauses a
// recording, which the catalogue's _meta reports.
func TestSetRecording(t *testing.T) {
	ts := testserver.New(t, testserver.Terminals(func(c *terminals.Config) { c.RecordDir = t.TempDir() }))
	c := dial(t, ts.URL, client.Options{InitialSubscriptions: []string{ahp.RootURI}})
	uri := createShell(t, c, "rec")
	for _, tc := range []struct {
		on   bool
		want string
	}{{true, ext.RecordingOn}, {false, ext.RecordingPaused}} {
		if err := c.SetRecording(t.Context(), uri, tc.on); err != nil {
			t.Fatalf("SetRecording(%v): %v", tc.on, err)
		}
		waitEvent(t, c, "_meta "+tc.want, func(client.Event) bool {
			root, _ := c.Root()
			for _, info := range root.Terminals {
				var meta map[string]string
				if info.Resource == uri && json.Unmarshal(info.Meta, &meta) == nil && meta[ext.MetaRecording] == tc.want {
					return true
				}
			}
			return false
		})
	}
}

// TestControlCalls: the typed x-termhost/requestControl and
// x-termhost/answerControl calls, and the notices they bring.
func TestControlCalls(t *testing.T) {
	ts := newServer(t)
	holder := dial(t, ts.URL, client.Options{})
	uri := createShell(t, holder, "ctl")
	asker := dial(t, ts.URL, client.Options{InitialSubscriptions: []string{uri}})
	ctx := t.Context()

	if r, err := holder.RequestControl(ctx, uri, false); err != nil || r.Status != ext.ControlGranted {
		t.Errorf("RequestControl by the holder = %+v, %v; want granted", r, err)
	}
	if r, err := asker.RequestControl(ctx, uri, false); err != nil || r.Status != ext.ControlHeld {
		t.Errorf("RequestControl without ask = %+v, %v; want held", r, err)
	}
	r, err := asker.RequestControl(ctx, uri, true)
	if err != nil || r.Status != ext.ControlPending || r.RequestID == "" || r.AutoGrantMs <= 0 {
		t.Fatalf("RequestControl with ask = %+v, %v; want pending with an id", r, err)
	}
	asked := notice(t, holder, uri, ext.ControlPending)
	if asked.RequestID != r.RequestID || asked.From.ID != terminals.PresenceID(asker.ClientID()) {
		t.Errorf("the holder was told %+v, want request %s from the asker", asked, r.RequestID)
	}
	if err := holder.AnswerControl(ctx, uri, r.RequestID, true); err != nil {
		t.Fatalf("AnswerControl: %v", err)
	}
	notice(t, asker, uri, ext.ControlGranted)
	// The claim's action may come before the notice (notice read past it).
	hasClaim := func(client.Event) bool {
		st, _ := asker.Terminal(uri)
		return st.Claim == ahp.ClientClaim(asker.ClientID())
	}
	if !hasClaim(client.Event{}) {
		waitEvent(t, asker, "the claim", hasClaim)
	}
	if err := holder.AnswerControl(ctx, uri, r.RequestID, true); !isAHPError(err, ahp.CodeNotFound) {
		t.Errorf("AnswerControl of an answered request: err = %v, want AHP error %d", err, ahp.CodeNotFound)
	}
}

// TestShareCalls: the typed x-share/create, x-share/list and x-share/revoke
// calls.
func TestShareCalls(t *testing.T) {
	ts := newServer(t)
	c := dial(t, ts.URL, client.Options{})
	uri := createShell(t, c, "shared")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	sh, err := c.CreateShare(ctx, ext.ShareCreateParams{Terminal: uri, Role: ext.RoleDriver, TTLSeconds: 3600, Label: "alice"})
	if err != nil {
		t.Fatalf("CreateShare: %v", err)
	}
	if sh.ID == "" || sh.Terminal != uri || sh.Role != ext.RoleDriver || sh.Label != "alice" || sh.ExpiresAt == nil || !strings.Contains(sh.URL, "#share=") {
		t.Errorf("CreateShare = %+v, want alice's driver link to %s with an expiry and a URL", sh, uri)
	}
	for _, terminal := range []string{uri, ""} {
		list, err := c.Shares(ctx, terminal)
		if err != nil || len(list) != 1 || list[0].ID != sh.ID || list[0].URL != "" {
			t.Errorf("Shares(%q) = %+v, %v; want the link %s without its URL", terminal, list, err, sh.ID)
		}
	}
	if err := c.RevokeShare(ctx, sh.ID); err != nil {
		t.Fatalf("RevokeShare: %v", err)
	}
	if list, err := c.Shares(ctx, uri); err != nil || len(list) != 0 {
		t.Errorf("Shares after the revoke = %+v, %v; want none", list, err)
	}
	if err := c.RevokeShare(ctx, sh.ID); !isAHPError(err, ahp.CodeNotFound) {
		t.Errorf("RevokeShare again: err = %v, want AHP error %d", err, ahp.CodeNotFound)
	}
}
