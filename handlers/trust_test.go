package handlers_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/testenv"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestInputEchoOnlyToDispatcher: what the owner types at
// a `read -s` prompt reaches no other connection: not a viewer watching
// live, not another owner connection, not a viewer that subscribes or
// reconnects (replay from 0, per-channel replay) afterwards. The dispatcher
// gets each echo exactly once, with its origin and a serverSeq.
func TestInputEchoOnlyToDispatcher(t *testing.T) {
	const secret = "hunter2-s3cret-pw"
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-1")
	uri, _ := owner.CreateTerminal("secret", "owner-1", nil)
	_, liveTok := share(t, owner, uri, "viewer", 0)
	live := ts.dial(t, "Authorization", "Bearer "+liveTok)
	live.Initialize("1.0.0", "live-viewer", ahp.RootURI, uri)
	watcher := ts.dial(t) // the owner in another tab
	watcher.Initialize("1.0.0", "owner-2", ahp.RootURI, uri)

	typed := []string{"read -s -p 'Pass''word: ' PW; echo; echo got-${#PW}-chars\r", secret + "\r"}
	seqs := []int64{owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": typed[0]})}
	owner.WaitOutput(uri, "Password: ")
	seqs = append(seqs, owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": typed[1]}))
	owner.WaitOutput(uri, fmt.Sprintf("got-%d-chars", len(secret)))
	live.WaitOutput(uri, fmt.Sprintf("got-%d-chars", len(secret)))
	watcher.WaitOutput(uri, fmt.Sprintf("got-%d-chars", len(secret)))

	// The dispatcher's echoes: each clientSeq once, accepted, with a serverSeq.
	for i, seq := range seqs {
		var echoes []ahp.Envelope
		for _, e := range owner.Envelopes() {
			if e.Action.Type == ahp.TerminalInput && e.Origin != nil && e.Origin.ClientSeq == seq {
				echoes = append(echoes, e)
			}
		}
		if len(echoes) != 1 || echoes[0].RejectionReason != "" || echoes[0].ServerSeq <= 0 ||
			echoes[0].Origin.ClientID != "owner-1" || echoes[0].Action.Data != typed[i] {
			t.Errorf("echoes of clientSeq %d = %+v, want one accepted echo of %q from owner-1", seq, echoes, typed[i])
		}
	}

	// A link made after the secret was typed; a viewer on it subscribes,
	// then reconnects in both forms.
	_, laterTok := share(t, owner, uri, "viewer", 0)
	later := ts.dial(t, "Authorization", "Bearer "+laterTok)
	later.Initialize("1.0.0", "later-viewer")
	later.Subscribe(uri)
	_ = later.Conn().CloseNow()
	later.WaitClosed()
	reconnects := []struct {
		name   string
		params map[string]any
	}{
		{"legacy from 0", map[string]any{"channel": ahp.RootURI, "clientId": "later-viewer", "lastSeenServerSeq": 0,
			"subscriptions": []string{ahp.RootURI, uri}}},
		{"per channel from 1", map[string]any{"channel": ahp.RootURI, "clientId": "later-viewer",
			"subscriptions": []map[string]any{{"channel": ahp.RootURI, "lastSeenServerSeq": 1}, {"channel": uri, "lastSeenServerSeq": 1}}}},
	}
	viewers := map[string]*client{"live viewer": live, "owner's other connection": watcher, "later viewer (subscribe)": later}
	for _, rc := range reconnects {
		c := ts.dial(t, "Authorization", "Bearer "+laterTok)
		res := c.MustCall("reconnect", rc.params)
		if !strings.Contains(string(res), "replay") {
			t.Errorf("%s: reconnect = %.300s, want a replay (the ring holds everything)", rc.name, res)
		}
		viewers["later viewer ("+rc.name+")"] = c
		_ = c.Conn().CloseNow()
		c.WaitClosed()
	}
	for name, c := range viewers {
		frames := c.RawFrames()
		if strings.Contains(frames, `"terminal/input"`) || strings.Contains(frames, secret) {
			t.Errorf("%s received someone's input (the secret: %v)", name, strings.Contains(frames, secret))
		}
	}
}

// TestClientIDBoundToPrincipal: a clientId belongs to the
// principal (the owner, one share link) that first used it, or on whose
// behalf a claim names it; anyone else using it is refused with -32602.
func TestClientIDBoundToPrincipal(t *testing.T) {
	ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) { hc.Retention = time.Millisecond })
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-1")
	uri, _ := owner.CreateTerminal("bound", "owner-1", nil)
	// A terminal claimed for a client that has not connected yet.
	owner.MustCall("createTerminal", map[string]any{"channel": "ahp-terminal:/agent", "claim": map[string]any{"kind": "client", "clientId": "agent-x"}})
	// A terminal the owner handed to a client that has not connected yet.
	handed, _ := owner.CreateTerminal("handed", "owner-1", nil)
	seq := owner.Dispatch(handed, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "handed-x"}})
	if e := owner.WaitAction("handover", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq }); e.RejectionReason != "" {
		t.Fatalf("handover rejected: %s", e.RejectionReason)
	}
	// A terminal whose holder has come and gone, longer ago than the retention.
	gone := ts.dial(t)
	gone.Initialize("1.0.0", "gone-holder")
	gone.MustCall("createTerminal", map[string]any{"channel": "ahp-terminal:/gone", "claim": map[string]any{"kind": "client", "clientId": "gone-holder"}})
	_ = gone.Conn().CloseNow()
	gone.WaitClosed()
	_, viewTok := share(t, owner, uri, "viewer", 0)
	_, driveTok := share(t, owner, uri, "driver", 0)
	_, drive2Tok := share(t, owner, uri, "driver", 0)
	d := ts.dial(t, "Authorization", "Bearer "+driveTok)
	d.Initialize("1.0.0", "driver-1")

	cases := []struct {
		name, token, method, clientID string
	}{
		{"viewer initializes with the holder's clientId", viewTok, "initialize", "owner-1"},
		{"driver initializes with the owner's clientId", driveTok, "initialize", "owner-1"},
		{"driver reconnects with the owner's clientId", driveTok, "reconnect", "owner-1"},
		{"viewer takes a clientId a claim names for the owner", viewTok, "initialize", "agent-x"},
		{"viewer takes a clientId the owner handed a claim to", viewTok, "initialize", "handed-x"},
		{"viewer takes a gone holder's clientId after the retention", viewTok, "initialize", "gone-holder"},
		{"another driver link uses the first's clientId", drive2Tok, "initialize", "driver-1"},
		{"owner uses a driver's clientId", ownerToken, "initialize", "driver-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ts.dial(t, "Authorization", "Bearer "+tc.token)
			params := map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": tc.clientID}
			if tc.method == "reconnect" {
				params = map[string]any{"channel": ahp.RootURI, "clientId": tc.clientID, "lastSeenServerSeq": 0, "subscriptions": []string{uri}}
			}
			e := c.CallErr(tc.method, params, ahp.CodeInvalidParams)
			if !strings.Contains(e.Message, "belongs to another") {
				t.Errorf("message %q, want it to say the clientId belongs to someone else", e.Message)
			}
		})
	}
	// The owner's other credentials and connections are the same principal.
	second := ts.dial(t)
	second.Initialize("1.0.0", "owner-1")
	second.MustCall("ping", map[string]any{"channel": ahp.RootURI})
}

// stuckViewer opens a share-link connection with a small receive buffer,
// sends requests one at a time reading until each is answered, and from then
// on never reads.
func stuckViewer(t *testing.T, ts *testServer, token string, requests ...map[string]any) {
	t.Helper()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, HTTPClient: smallBuffers}
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", opts)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	for _, req := range requests {
		b, _ := json.Marshal(req)
		if err := ws.Write(t.Context(), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		for {
			_, frame, err := ws.Read(t.Context())
			if err != nil {
				t.Fatalf("stuck viewer: %v", err)
			}
			var m ahp.Message
			if json.Unmarshal(frame, &m) == nil && m.Method == "" && string(m.ID) == fmt.Sprint(req["id"]) {
				break
			}
		}
	}
}

func rpcRequest(id int, method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
}

// TestViewerNeverPacesOwner: a viewer that stops reading
// never pauses the shell, whether it tried the holder's clientId or the
// claim names its own. Here with 1 MiB, which exercises the claim's path;
// TestViewerNeverPacesOwnerVolume floods 16 MB, more than the server's
// socket send buffer (at most 4 MiB, tcp_wmem) and the holder's backlog
// past which the shell pauses (hub.HighWater) take together: a viewer
// pacing the shell would stall it there. (8 MiB under -race took half a
// minute of make test for what the volume test shows once.)
func TestViewerNeverPacesOwner(t *testing.T) {
	t.Parallel()
	viewerNeverPacesOwner(t, 1<<20)
}

// TestViewerNeverPacesOwnerVolume is TestViewerNeverPacesOwner with 16 MB.
func TestViewerNeverPacesOwnerVolume(t *testing.T) {
	testenv.Volume(t)
	viewerNeverPacesOwner(t, 16000000)
}

func viewerNeverPacesOwner(t *testing.T, size int) {
	for _, tc := range []struct {
		name     string
		clientID string // the viewer's successful clientId
		first    string // a clientId it tries first
		handTo   bool   // the owner hands the claim to the viewer's clientId
	}{
		{"viewer tries the holder's clientId", "viewer-a", "owner-1", false},
		{"owner hands the claim to a viewer", "viewer-b", "viewer-b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A queue big enough that the owner, no longer pacing the shell
			// once it handed the claim away, is not evicted.
			ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) { hc.SendQueue, hc.PingInterval = 512<<20, noPings })
			owner := ts.dial(t)
			owner.Initialize("1.0.0", "owner-1")
			uri, _ := owner.CreateTerminal("flow", "owner-1", nil)
			owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "stty -echo\r"})
			_, tok := share(t, owner, uri, "viewer", 0)
			init := func(id string) map[string]any {
				return map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": id}
			}
			stuckViewer(t, ts, tok, rpcRequest(1, "initialize", init(tc.first)), rpcRequest(2, "initialize", init(tc.clientID)),
				rpcRequest(3, "subscribe", map[string]any{"channel": uri}))
			// Typed first: once the claim is the viewer's, only it could type.
			owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x; echo; echo DO''NE\r", size)})
			if tc.handTo {
				seq := owner.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": tc.clientID}})
				e := owner.WaitAction("handover", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq })
				if e.RejectionReason != "" {
					t.Fatalf("handover rejected: %s", e.RejectionReason)
				}
			}
			// 16 MB under -race on a loaded 2-core machine took 110 s once; a
			// stall behind the viewer would never finish.
			owner.SetWaitTimeout(5 * time.Minute)
			owner.WaitOutput(uri, "DONE")
		})
	}
}

// TestOwnerTakesClaim: the owner takes the claim from a
// connected driver; the driver sees the change with the owner's origin; a
// driver cannot take it back from the connected owner.
func TestOwnerTakesClaim(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-1")
	uri, _ := owner.CreateTerminal("ctl", "owner-1", nil)
	_, tok := share(t, owner, uri, "driver", 0)
	d := ts.dial(t, "Authorization", "Bearer "+tok)
	d.Initialize("1.0.0", "driver-1", ahp.RootURI, uri)
	ids := map[*client]string{owner: "owner-1", d: "driver-1"}
	claimed := func(c *client, id string) int64 {
		return c.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": id}})
	}
	result := func(c *client, seq int64) string {
		e := c.WaitAction("claim result", func(e ahp.Envelope) bool {
			return e.Action.Type == ahp.TerminalClaimed && e.Origin != nil && e.Origin.ClientSeq == seq && e.Origin.ClientID == ids[c]
		})
		return e.RejectionReason
	}
	// The owner hands control to the driver, then takes it back.
	if r := result(owner, claimed(owner, "driver-1")); r != "" {
		t.Fatalf("handover to the driver rejected: %s", r)
	}
	if r := result(owner, claimed(owner, "owner-1")); r != "" {
		t.Fatalf("owner could not take the claim from a connected driver: %s", r)
	}
	lost := d.WaitAction("the driver sees it lost control", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Action.Claim.ClientID == "owner-1" && e.RejectionReason == ""
	})
	if lost.Origin == nil || lost.Origin.ClientID != "owner-1" {
		t.Errorf("driver saw the claim change with origin %+v, want owner-1's", lost.Origin)
	}
	if r := result(d, claimed(d, "driver-1")); r != "terminal is claimed by another client" {
		t.Errorf("driver taking the claim from the connected owner: rejection %q, want %q", r, "terminal is claimed by another client")
	}
	// Another owner connection (a second tab) may take it too.
	tab := ts.dial(t)
	tab.Initialize("1.0.0", "owner-2", ahp.RootURI, uri)
	ids[tab] = "owner-2"
	if r := result(tab, claimed(tab, "owner-2")); r != "" {
		t.Errorf("second owner tab could not take the claim: %s", r)
	}
}

// TestClientStringLimits: every client-supplied string
// is bounded: requests over a bound fail with -32602, dispatches are
// rejected with a reason; strings at the bound are accepted.
func TestClientStringLimits(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-1")
	uri, _ := owner.CreateTerminal("lim", "owner-1", nil)
	long := func(n int) string { return strings.Repeat("a", n) }
	meta := map[string]any{"pad": long(ahp.MaxMeta)}
	initialize := func(id string, extra map[string]any) map[string]any {
		p := map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": id}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	create := func(extra map[string]any) map[string]any {
		p := map[string]any{"channel": "ahp-terminal:/new", "claim": map[string]any{"kind": "client", "clientId": "owner-1"}}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	requests := []struct {
		name, method string
		params       map[string]any
		fresh        bool // on a new connection (before initialize)
	}{
		{"initialize clientId", "initialize", initialize(long(ahp.MaxClientID+1), nil), true},
		{"initialize _meta", "initialize", initialize("m", map[string]any{"_meta": meta}), true},
		{"initialize subscription URI", "initialize", initialize("s", map[string]any{"initialSubscriptions": []string{long(ahp.MaxURI + 1)}}), true},
		{"reconnect clientId", "reconnect", map[string]any{"channel": ahp.RootURI, "clientId": long(ahp.MaxClientID + 1), "lastSeenServerSeq": 0, "subscriptions": []string{}}, true},
		{"reconnect cursor URI", "reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "owner-1",
			"subscriptions": []map[string]any{{"channel": long(ahp.MaxURI + 1), "lastSeenServerSeq": 1}}}, true},
		{"subscribe channel", "subscribe", map[string]any{"channel": "ahp-terminal:/" + long(ahp.MaxURI)}, false},
		{"subscribe _meta", "subscribe", map[string]any{"channel": uri, "_meta": meta}, false},
		{"createTerminal name", "createTerminal", create(map[string]any{"name": long(ahp.MaxTitle + 1)}), false},
		{"createTerminal cwd", "createTerminal", create(map[string]any{"cwd": "file:///" + long(ahp.MaxURI)}), false},
		{"createTerminal _meta", "createTerminal", create(map[string]any{"_meta": meta}), false},
		{"createTerminal claim clientId", "createTerminal", create(map[string]any{"claim": map[string]any{"kind": "client", "clientId": long(ahp.MaxClaimField + 1)}}), false},
		{"createTerminal claim toolCallId", "createTerminal", create(map[string]any{"claim": map[string]any{"kind": "session", "session": "s", "chat": "c", "toolCallId": long(ahp.MaxClaimField + 1)}}), false},
		{"disposeTerminal _meta", "disposeTerminal", map[string]any{"channel": uri, "_meta": meta}, false},
	}
	for _, tc := range requests {
		t.Run(tc.name, func(t *testing.T) {
			c := owner
			if tc.fresh {
				c = ts.dial(t)
			}
			if _, err := c.Call(tc.method, tc.params); err == nil || err.Code != ahp.CodeInvalidParams {
				t.Errorf("got error %+v, want %d", err, ahp.CodeInvalidParams)
			}
		})
	}
	if !ts.m.Exists(uri) {
		t.Fatal("disposeTerminal with an oversized _meta disposed the terminal")
	}
	t.Run("at the bounds", func(t *testing.T) {
		c := ts.dial(t)
		c.Initialize("1.0.0", long(ahp.MaxClientID))
		owner.MustCall("createTerminal", create(map[string]any{"name": long(ahp.MaxTitle)}))
	})

	dispatches := []struct {
		name    string
		channel string
		action  map[string]any
		reason  string // "" = accepted
	}{
		{"title over the bound", uri, map[string]any{"type": "terminal/titleChanged", "title": long(ahp.MaxTitle + 1)}, "title is longer than 1024 bytes"},
		{"title at the bound", uri, map[string]any{"type": "terminal/titleChanged", "title": long(ahp.MaxTitle)}, ""},
		{"claim clientId", uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": long(ahp.MaxClaimField + 1)}}, "claim clientId is longer than 256 bytes"},
		{"claim session", uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "session", "session": long(ahp.MaxClaimField + 1), "chat": "c"}}, "claim session is longer than 256 bytes"},
		{"claim turnId", uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "session", "session": "s", "chat": "c", "turnId": long(ahp.MaxClaimField + 1)}}, "claim turnId is longer than 256 bytes"},
		{"channel", "ahp-terminal:/" + long(ahp.MaxURI), map[string]any{"type": "terminal/cleared"}, "channel is longer than 2048 bytes"},
	}
	for _, tc := range dispatches {
		t.Run("dispatch "+tc.name, func(t *testing.T) {
			seq := owner.Dispatch(tc.channel, tc.action)
			e := owner.WaitAction("result", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == seq })
			if e.RejectionReason != tc.reason {
				t.Errorf("rejection %q, want %q", e.RejectionReason, tc.reason)
			}
		})
	}
}

// TestRingCountsWholeEnvelope: long titles count against
// the replay budget, so a client renaming a terminal again and again cannot
// make the ring hold more than its budget.
func TestRingCountsWholeEnvelope(t *testing.T) {
	const budget = 64 << 10
	ts := newServer(t, func(tc *terminals.Config, _ *handlersConfig) { tc.ReplayBytes = budget })
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-1")
	uri, _ := owner.CreateTerminal("ring", "owner-1", nil)
	seen := owner.LastSeq()
	var last int64
	for i := range 200 {
		last = owner.Dispatch(uri, map[string]any{"type": "terminal/titleChanged", "title": fmt.Sprintf("%04d", i) + strings.Repeat("t", ahp.MaxTitle-4)})
	}
	owner.WaitAction("last rename", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == last })
	c := ts.dial(t)
	res := c.MustCall("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "owner-1",
		"subscriptions": []map[string]any{{"channel": uri, "lastSeenServerSeq": seen}}})
	if !strings.Contains(string(res), `"kind":"snapshot"`) {
		t.Errorf("reconnect after %d KiB of titles with a %d KiB ring: %.200s…, want a snapshot (the ring cannot hold them)",
			200*ahp.MaxTitle>>10, budget>>10, res)
	}
}

// TestBinaryFrameRefused: a binary message closes the
// connection with 1003 instead of being parsed as JSON.
func TestBinaryFrameRefused(t *testing.T) {
	ts := newServer(t)
	c := ts.dial(t)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"ahp-root://"}}`
	if err := c.Conn().Write(t.Context(), websocket.MessageBinary, []byte(ping)); err != nil {
		t.Fatal(err)
	}
	err := c.WaitClosed()
	if got := websocket.CloseStatus(err); got != websocket.StatusUnsupportedData {
		t.Errorf("closed with %v (%v), want 1003", got, err)
	}
	if frames := c.RawFrames(); strings.Contains(frames, `"id":1`) {
		t.Errorf("the binary frame was answered: %s", frames)
	}
}

// TestLogsClipClientStrings: a 100 KB clientId, method,
// action type or channel never reaches the log whole.
func TestLogsClipClientStrings(t *testing.T) {
	var logs testserver.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ts := newServer(t, func(tc *terminals.Config, hc *handlersConfig) { tc.Logger, hc.Logger = log, log })
	huge := strings.Repeat("Z", 100<<10)
	for _, req := range []struct {
		method string
		params map[string]any
	}{
		{"initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": huge}},
		{"reconnect", map[string]any{"channel": ahp.RootURI, "clientId": huge, "lastSeenServerSeq": 0, "subscriptions": []string{}}},
		{"initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{huge}, "clientId": "x"}},
	} {
		ts.dial(t).Call(req.method, req.params) // answered or refused: only the log matters here
	}
	c := ts.dial(t)
	c.Initialize("1.0.0", "owner-1")
	uri, _ := c.CreateTerminal("log", "owner-1", nil)
	c.Notify(huge, map[string]any{"channel": ahp.RootURI})
	c.Dispatch(uri, map[string]any{"type": huge})
	c.Dispatch(huge, map[string]any{"type": "terminal/cleared"})
	c.MustCall("ping", map[string]any{"channel": ahp.RootURI})
	longest := 0
	for _, run := range strings.FieldsFunc(logs.String(), func(r rune) bool { return r != 'Z' }) {
		longest = max(longest, len(run))
	}
	if longest > ahp.MaxLogString {
		t.Errorf("the log holds %d bytes of one client string, want at most %d", longest, ahp.MaxLogString)
	}
	if !strings.Contains(logs.String(), strings.Repeat("Z", 64)) {
		t.Error("the log does not mention the clipped strings at all")
	}
}

// TestDisposeAnswersWithStuckInput: a driver's megabyte
// of input to a program that does not read delays neither disposeTerminal
// nor the owner's next ping (each bounded by the client's wait deadline;
// before the fix disposeTerminal never answered).
func TestDisposeAnswersWithStuckInput(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-1")
	uri, _ := owner.CreateTerminal("stuck", "owner-1", nil)
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "stty -icanon -echo; echo NOT''READING; sleep 600\r"})
	owner.WaitOutput(uri, "NOTREADING")
	chunk := strings.Repeat("x", 64<<10)
	var last int64
	for range 16 {
		last = owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": chunk})
	}
	owner.WaitAction("last input", func(e ahp.Envelope) bool { return e.Origin != nil && e.Origin.ClientSeq == last })
	owner.MustCall("disposeTerminal", map[string]any{"channel": uri})
	owner.MustCall("ping", map[string]any{"channel": ahp.RootURI})
}
