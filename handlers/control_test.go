package handlers_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/testserver"
)

// controlNotice is the params of x-termhost/controlRequest.
type controlNotice struct {
	Terminal  string `json:"terminal"`
	RequestID string `json:"requestId"`
	Status    string `json:"status"`
	From      struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	} `json:"from"`
	Auto bool `json:"auto"`
}

// waitNotice waits for the next x-termhost/controlRequest with status.
func waitNotice(t *testing.T, c *client, status string) controlNotice {
	t.Helper()
	var n controlNotice
	c.NextFrame("controlRequest "+status, func(m *ahp.Message) bool {
		if m.Method != "x-termhost/controlRequest" {
			return false
		}
		n = controlNotice{}
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
// goes away is granted (a claim whose client is gone is anyone's).
func TestControlRequestWhenHolderLeaves(t *testing.T) {
	_, owner, driver, uri := controlSetup(t, testserver.Handlers(func(c *handlersConfig) { c.ControlAutoGrant = time.Hour }))
	requestControl(t, driver, uri)
	waitNotice(t, owner, "pending")
	_ = owner.Conn().CloseNow()
	if n := waitNotice(t, driver, "granted"); !n.Auto {
		t.Errorf("granted after the holder left: %+v, want auto", n)
	}
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
