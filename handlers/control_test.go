package handlers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
)

// waitNotice waits for the next x-termhost/controlRequest with status.
func waitNotice(t *testing.T, c *client, status string) ext.ControlNotice {
	t.Helper()
	var n ext.ControlNotice
	c.NextFrame("controlRequest "+status, func(m *ahp.Message) bool {
		if m.Method != "x-termhost/controlRequest" {
			return false
		}
		n = ext.ControlNotice{}
		_ = json.Unmarshal(m.Params, &n)
		return n.Status == status
	})
	return n
}

// controlSetup: the owner holds a terminal a labelled driver link watches.
func controlSetup(t *testing.T, opts ...serverOption) (ts *testServer, owner, driver *client, uri string) {
	t.Helper()
	ts = newServer(t, opts...)
	owner = ts.dial(t)
	owner.Initialize("1.0.0", "holder")
	uri, _ = owner.CreateTerminal("ctl", "holder", nil)
	driver = ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", "alice"))
	driver.Initialize("1.0.0", "alice-tab")
	driver.Subscribe(uri)
	return ts, owner, driver, uri
}

// takeControl: c, an owner's client, takes the claim of uri for clientID
// (only the holder types) and waits for the echo.
func takeControl(t *testing.T, c *client, uri, clientID string) {
	t.Helper()
	seq := c.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": clientID}})
	e := c.WaitAction("take control", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Origin != nil && e.Origin.ClientID == clientID && e.Origin.ClientSeq == seq
	})
	if e.RejectionReason != "" {
		t.Fatalf("taking control for %s: %s", clientID, e.RejectionReason)
	}
}

func requestControl(t *testing.T, c *client, uri string) (status, id string) {
	t.Helper()
	var r struct{ Status, RequestID string }
	res := c.MustCall("x-termhost/requestControl", map[string]any{"channel": ahp.RootURI, "terminal": uri})
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	return r.Status, r.RequestID
}

// TestControlRequest: a driver asks the holder; the holder (told who asks)
// grants or declines; a holder that does not type grants by itself.
func TestControlRequest(t *testing.T) {
	cases := []struct {
		name       string
		answer     *bool // nil: the holder stays idle
		wantStatus string
		wantClaim  string
	}{
		{"holder grants", new(true), "granted", "alice-tab"},
		{"holder declines", new(false), "declined", "holder"},
		{"idle holder grants by itself", nil, "granted", "alice-tab"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			autoGrant := time.Hour
			if tc.answer == nil {
				autoGrant = 100 * time.Millisecond
			}
			ts, owner, driver, uri := controlSetup(t, testserver.Handlers(func(c *handlersConfig) { c.ControlAutoGrant = autoGrant }))
			status, id := requestControl(t, driver, uri)
			if status != "pending" || id == "" {
				t.Fatalf("requestControl = %q %q, want pending with an id", status, id)
			}
			asked := waitNotice(t, owner, "pending")
			if asked.RequestID != id || asked.From.Name != "alice" || asked.From.Kind != "driver" || asked.Terminal != uri {
				t.Errorf("holder was told %+v, want request %s from alice (driver) on %s", asked, id, uri)
			}
			if tc.answer != nil {
				owner.MustCall("x-termhost/answerControl", map[string]any{"channel": ahp.RootURI, "terminal": uri, "requestId": id, "grant": *tc.answer})
			}
			got := waitNotice(t, driver, tc.wantStatus)
			if got.Auto != (tc.answer == nil) {
				t.Errorf("answer auto = %v, want %v", got.Auto, tc.answer == nil)
			}
			waitNotice(t, owner, tc.wantStatus)
			if tc.wantStatus == "granted" { // the claim moved by terminal/claimed, before the notice
				found := false
				for _, e := range driver.Envelopes() {
					found = found || e.Action.Type == ahp.TerminalClaimed && e.Action.Claim == ahp.ClientClaim(tc.wantClaim)
				}
				if !found {
					t.Errorf("no terminal/claimed for %s before the granted notice", tc.wantClaim)
				}
			}
			if claim, _ := ts.m.Claim(uri); claim != ahp.ClientClaim(tc.wantClaim) {
				t.Errorf("claim = %+v, want %s's", claim, tc.wantClaim)
			}
		})
	}
}

// TestControlRequestWhenHolderLeaves: a request waiting for a holder that
// stays gone for the grace period is granted, before the server would hand
// the claim to anyone else (here the owner's other tab).
func TestControlRequestWhenHolderLeaves(t *testing.T) {
	ts, owner, driver, uri := controlSetup(t,
		testserver.Handlers(func(c *handlersConfig) { c.ControlAutoGrant = time.Hour }),
		testserver.Terminals(func(c *terminalsConfig) { c.ClaimGrace = 50 * time.Millisecond }))
	tab := ts.dial(t) // the successor the server would pick without a request
	tab.Initialize("1.0.0", "other-tab", ahp.RootURI, uri)
	requestControl(t, driver, uri)
	waitNotice(t, owner, "pending")
	_ = owner.Conn().CloseNow()
	if n := waitNotice(t, driver, "granted"); !n.Auto {
		t.Errorf("granted after the holder left: %+v, want auto", n)
	}
	if claim, _ := ts.m.Claim(uri); claim != ahp.ClientClaim("alice-tab") {
		t.Errorf("claim = %+v, want the requester's", claim)
	}
}

// TestControlSurvivesHolderBlip: a holder whose connections all dropped
// keeps the claim for the grace period (a network blip, an eviction, an
// upgrade's reconnect): a pending request stays pending, and a driver can
// neither take the claim nor type.
func TestControlSurvivesHolderBlip(t *testing.T) {
	ts, owner, driver, uri := controlSetup(t,
		testserver.Handlers(func(c *handlersConfig) { c.ControlAutoGrant = time.Hour }),
		testserver.Terminals(func(c *terminalsConfig) { c.ClaimGrace = time.Hour }))
	_, id := requestControl(t, driver, uri)
	waitNotice(t, owner, "pending")
	_ = owner.Conn().CloseNow()
	owner.WaitClosed()
	poll.Until(t, 10*time.Second, "the holder's connection to be gone", func() bool { return ts.m.Connections("holder") == 0 })

	if status, again := requestControl(t, driver, uri); status != "pending" || again != id {
		t.Errorf("requestControl during the holder's grace = %s %s, want the request %s still pending", status, again, id)
	}
	seq := driver.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "alice-tab"}})
	if e := driver.WaitAction("claim refused", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq }); e.RejectionReason == "" {
		t.Error("a driver took the claim of a holder within its grace period")
	}
	seq = driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "x"})
	if e := driver.WaitAction("input refused", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq }); e.RejectionReason == "" {
		t.Error("a driver typed into a terminal whose holder is within its grace period")
	}
	if claim, _ := ts.m.Claim(uri); claim != ahp.ClientClaim("holder") {
		t.Errorf("claim during the grace = %+v, want still the holder's", claim)
	}

	back := ts.dial(t) // the holder comes back and answers
	back.MustCall("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "holder", "lastSeenServerSeq": 0, "subscriptions": []string{uri}})
	back.MustCall("x-termhost/answerControl", map[string]any{"channel": ahp.RootURI, "terminal": uri, "requestId": id, "grant": false})
	waitNotice(t, driver, "declined")
}

// TestControlRequestsPerLink: however many connections of one share link
// ask, the holder is asked once; a terminal has a bounded number of
// pending requests.
func TestControlRequestsPerLink(t *testing.T) {
	ts, owner, driver, uri := controlSetup(t, testserver.Handlers(func(c *handlersConfig) { c.ControlAutoGrant = time.Hour }))
	tok := shareLabelled(t, owner, uri, "driver", "bob")
	_, first := requestControl(t, driver, uri)
	bobs := map[string]bool{}
	for i := range 5 {
		c := ts.dial(t, "Authorization", "Bearer "+tok)
		c.Initialize("1.0.0", fmt.Sprintf("bob-%d", i), ahp.RootURI, uri)
		status, id := requestControl(t, c, uri)
		if status != "pending" {
			t.Fatalf("bob-%d's request = %s, want pending", i, status)
		}
		bobs[id] = true
	}
	if len(bobs) != 1 || bobs[first] {
		t.Errorf("bob's 5 connections got requests %v, want one, not alice's %s", bobs, first)
	}
	owner.MustCall("ping", map[string]any{"channel": ahp.RootURI}) // the notices went out before the results
	asked := map[string]bool{}
	for _, f := range owner.Frames() {
		var m ahp.Message
		var n ext.ControlNotice
		if json.Unmarshal(f, &m) == nil && m.Method == "x-termhost/controlRequest" && json.Unmarshal(m.Params, &n) == nil && n.Status == "pending" {
			asked[n.From.Name+"/"+n.RequestID] = true
		}
	}
	if len(asked) != 2 || !asked["alice/"+first] {
		t.Errorf("the holder was asked %v, want once by alice (%s) and once by bob", asked, first)
	}

	for i := range 20 { // distinct links: bounded
		c := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", fmt.Sprintf("l%d", i)))
		c.Initialize("1.0.0", fmt.Sprintf("l%d", i), ahp.RootURI, uri)
		var r struct{ Status string }
		res, err := c.Call("x-termhost/requestControl", map[string]any{"channel": ahp.RootURI, "terminal": uri})
		if err != nil {
			if err.Code != ahp.CodePermissionDenied || i+2 < 16 {
				t.Fatalf("request %d: %v, want -32009 only past 16 pending", i+2, err)
			}
			return
		}
		_ = json.Unmarshal(res, &r)
	}
	t.Error("20 links asked: no request refused")
}

// TestOwnerTakesControl: the owner takes the claim from a connected driver
// with terminal/claimed, no request needed; a driver cannot.
func TestOwnerTakesControl(t *testing.T) {
	ts, owner, driver, uri := controlSetup(t)
	owner.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "alice-tab"}})
	driver.WaitAction("handed to the driver", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalClaimed })
	owner2 := ts.dial(t) // the owner's other device
	owner2.Initialize("1.0.0", "phone")
	owner2.Subscribe(uri)
	owner2.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "phone"}})
	e := driver.WaitAction("taken by the owner", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalClaimed })
	if e.RejectionReason != "" || e.Action.Claim != ahp.ClientClaim("phone") {
		t.Errorf("owner's take = %+v (%q), want the phone's claim", e.Action.Claim, e.RejectionReason)
	}
	seq := driver.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "alice-tab"}})
	rej := driver.WaitAction("driver refused", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq })
	if rej.RejectionReason == "" {
		t.Error("a driver took the claim from a connected holder without asking")
	}
}

// TestControlErrors: every refused control request has its JSON-RPC code.
func TestControlErrors(t *testing.T) {
	ts, owner, driver, uri := controlSetup(t, testserver.Handlers(func(c *handlersConfig) { c.ControlAutoGrant = time.Hour }))
	other, _ := owner.CreateTerminal("other", "holder", nil)
	viewer := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "viewer", "bob"))
	viewer.Initialize("1.0.0", "bob-tab")
	viewer.Subscribe(uri)
	_, pending := requestControl(t, driver, uri)

	cases := []struct {
		name   string
		c      *client
		method string
		params map[string]any
		code   int
	}{
		{"request without a terminal", driver, "x-termhost/requestControl", map[string]any{}, ahp.CodeInvalidParams},
		{"request of a malformed uri", driver, "x-termhost/requestControl", map[string]any{"terminal": "not a uri"}, ahp.CodeInvalidParams},
		{"request of an unknown terminal", owner, "x-termhost/requestControl", map[string]any{"terminal": "ahp-terminal:/nope"}, ahp.CodeNotFound},
		{"request of a terminal the link does not grant", driver, "x-termhost/requestControl", map[string]any{"terminal": other}, ahp.CodeNotFound},
		{"a viewer requests", viewer, "x-termhost/requestControl", map[string]any{"terminal": uri}, ahp.CodePermissionDenied},
		{"answer without grant", owner, "x-termhost/answerControl", map[string]any{"terminal": uri, "requestId": pending}, ahp.CodeInvalidParams},
		{"answer of an unknown request", owner, "x-termhost/answerControl", map[string]any{"terminal": uri, "requestId": "nope", "grant": true}, ahp.CodeNotFound},
		{"answer on another terminal", owner, "x-termhost/answerControl", map[string]any{"terminal": other, "requestId": pending, "grant": true}, ahp.CodeNotFound},
		{"the requester answers itself", driver, "x-termhost/answerControl", map[string]any{"terminal": uri, "requestId": pending, "grant": true}, ahp.CodePermissionDenied},
		{"a viewer answers", viewer, "x-termhost/answerControl", map[string]any{"terminal": uri, "requestId": pending, "grant": true}, ahp.CodePermissionDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.params["channel"] = ahp.RootURI
			tc.c.CallErr(tc.method, tc.params, tc.code)
		})
	}
	if claim, _ := ts.m.Claim(uri); claim != ahp.ClientClaim("holder") {
		t.Errorf("claim after refused requests = %+v, want the holder's", claim)
	}
}

// TestControlRequestEndsWhenClaimMoves: a request to a holder whose claim
// someone else took ends at once (cancelled), for both sides.
func TestControlRequestEndsWhenClaimMoves(t *testing.T) {
	ts, owner, driver, uri := controlSetup(t, testserver.Handlers(func(c *handlersConfig) { c.ControlAutoGrant = time.Hour }))
	requestControl(t, driver, uri)
	waitNotice(t, owner, "pending")
	phone := ts.dial(t)
	phone.Initialize("1.0.0", "phone")
	phone.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "phone"}})
	waitNotice(t, driver, "cancelled")
	waitNotice(t, owner, "cancelled")
}

// TestOnlyHolderTypes: the claim holder types and
// sizes; a driver without control is refused (a rejection envelope) and
// its command never runs; the owner's other tab too, until it takes
// control, which it always may.
func TestOnlyHolderTypes(t *testing.T) {
	ts, owner, driver, uri := controlSetup(t, testserver.Handlers(func(c *handlersConfig) { c.ControlAutoGrant = time.Hour }))
	clientOf := map[*client]string{owner: "holder", driver: "alice-tab"} // others' echoes have their own clientSeq
	refused := func(c *client, action map[string]any) string {
		t.Helper()
		seq := c.Dispatch(uri, action)
		return c.WaitAction(fmt.Sprint(action["type"]), func(e ahp.Envelope) bool {
			return e.Origin != nil && e.Origin.ClientSeq == seq && e.Origin.ClientID == clientOf[c]
		}).RejectionReason
	}
	typeCmd := map[string]any{"type": "terminal/input", "data": "echo ran-$((6*7))\r"}
	resize := map[string]any{"type": "terminal/resized", "cols": 91, "rows": 21}
	if r := refused(driver, typeCmd); r != "only the claim holder can type into the terminal: ask for control first" {
		t.Errorf("a driver without control typed: rejection %q", r)
	}
	if r := refused(driver, resize); r == "" {
		t.Error("a driver without control resized")
	}
	tab := ts.dial(t) // the owner's other tab
	tab.Initialize("1.0.0", "tab", ahp.RootURI, uri)
	clientOf[tab] = "tab"
	if r := refused(tab, typeCmd); r == "" {
		t.Error("the owner's tab without control typed")
	}
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo holder-$((1+1))\r"})
	owner.WaitOutput(uri, "holder-2")
	if strings.Contains(owner.Output(uri), "ran-42") {
		t.Error("a refused command ran")
	}

	if r := refused(tab, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "tab"}}); r != "" {
		t.Fatalf("the owner's take was refused: %s", r)
	}
	if r := refused(tab, typeCmd); r != "" {
		t.Errorf("the new holder's input was refused: %s", r)
	}
	tab.WaitOutput(uri, "ran-42")
	if r := refused(owner, typeCmd); r == "" {
		t.Error("the former holder still types")
	}
}

// TestNobodyHoldsFirstTypistGetsControl: once the holder stayed gone past
// the grace period with nobody to hand the claim to, the first client that
// may act and types gets control with its keystroke; a viewer never does.
func TestNobodyHoldsFirstTypistGetsControl(t *testing.T) {
	ts := newServer(t, testserver.Terminals(func(c *terminalsConfig) { c.ClaimGrace = 50 * time.Millisecond }))
	admin := ts.dial(t) // makes the links; never subscribed to the terminal
	admin.Initialize("1.0.0", "admin")
	holder := ts.dial(t)
	holder.Initialize("1.0.0", "holder")
	uri, _ := holder.CreateTerminal("free", "holder", nil)
	_ = holder.Conn().CloseNow()
	poll.Until(t, 10*time.Second, "the holder's grace to end", func() bool { return !ts.m.Present("holder") })

	driver := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, admin, uri, "driver", "alice"))
	driver.Initialize("1.0.0", "alice-tab", ahp.RootURI, uri)
	seq := driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo free-$((2*4))\r"})
	claimed := driver.WaitAction("claim to the typist", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalClaimed })
	if claimed.Action.Claim != ahp.ClientClaim("alice-tab") || claimed.Origin != nil {
		t.Errorf("claim after typing = %+v (origin %v), want alice-tab's from the server", claimed.Action.Claim, claimed.Origin)
	}
	if e := driver.WaitAction("input echo", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq }); e.RejectionReason != "" {
		t.Errorf("input into a terminal nobody holds refused: %s", e.RejectionReason)
	}
	driver.WaitOutput(uri, "free-8")
}

// TestDriverCannotGiveToSession: a driver holding the
// claim cannot hand it to an agent session (made up or not): only the
// owner gives a terminal to an agent.
func TestDriverCannotGiveToSession(t *testing.T) {
	ts, owner, driver, uri := controlSetup(t)
	owner.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "alice-tab"}})
	driver.WaitAction("handed to the driver", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalClaimed })
	session := map[string]any{"kind": "session", "session": "ahp-session:/made-up", "chat": "ahp-session:/made-up"}
	seq := driver.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": session})
	e := driver.WaitAction("refused", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq })
	if e.RejectionReason != "only the owner can give a terminal to an agent session" {
		t.Errorf("driver's hand-over to a session: rejection %q", e.RejectionReason)
	}
	if claim, _ := ts.m.Claim(uri); claim != ahp.ClientClaim("alice-tab") {
		t.Errorf("claim = %+v, want still the driver's", claim)
	}
	seq = owner.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": session})
	if e := owner.WaitAction("owner's", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq }); e.RejectionReason != "" {
		t.Errorf("the owner could not give the terminal to a session: %s", e.RejectionReason)
	}
}

// TestShareLinkCannotPoseAsOwner: a share link's client
// names itself in clientInfo; presence shows its link's label and never
// that name.
func TestShareLinkCannotPoseAsOwner(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "holder")
	uri, _ := owner.CreateTerminal("pose", "holder", nil)
	d := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", "alice"))
	d.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": "poser",
		"initialSubscriptions": []string{ahp.RootURI, uri}, "clientInfo": map[string]any{"name": "Owner", "title": "Owner"}})
	list := waitPresence(t, owner, uri, []string{"Owner/owner/test/true", "alice/driver//false"})
	for _, m := range list {
		if m.Kind == "driver" && (m.Name == "Owner" || m.Device == "Owner") {
			t.Errorf("the driver shows as %+v", m)
		}
	}
}
