package handlers_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/testserver"
)

// initAgent initializes c as termhost mcp does (an agent, "Agent · Claude Code").
func initAgent(t *testing.T, c *client, clientID string) {
	t.Helper()
	c.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"},
		"clientId": clientID, "initialSubscriptions": []string{ahp.RootURI},
		"clientInfo": map[string]any{"name": "termhost-mcp", "title": "Claude Code", "version": "1"}})
}

// sendApproval sends an approval request for commandLine and returns its id.
func sendApproval(t *testing.T, c *client, uri, commandLine string, timeoutMs int64) string {
	t.Helper()
	p := map[string]any{"terminal": uri, "commandLine": commandLine, "rule": "rm", "reason": "`rm` deletes files"}
	if timeoutMs > 0 {
		p["timeoutMs"] = timeoutMs
	}
	id, err := c.Send(ext.MethodApprovalRequest, p)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// approvalResult waits for the answer of the request with id.
func approvalResult(t *testing.T, c *client, id string) ext.ApprovalResult {
	t.Helper()
	res, rpcErr := c.Response(json.RawMessage(id))
	if rpcErr != nil {
		t.Fatalf("approval request: error %d %s", rpcErr.Code, rpcErr.Message)
	}
	var r ext.ApprovalResult
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitApprovals waits for the next x-termhost/approvals whose list ok accepts.
func waitApprovals(t *testing.T, c *client, what string, ok func([]ext.Approval) bool) []ext.Approval {
	t.Helper()
	var list ext.ApprovalList
	c.NextFrame(what, func(m *ahp.Message) bool {
		if m.Method != ext.NotifyApprovals {
			return false
		}
		list = ext.ApprovalList{}
		_ = json.Unmarshal(m.Params, &list)
		return ok(list.Approvals)
	})
	return list.Approvals
}

// pendingFor is the pending approval of commandLine in list, or nil.
func pendingFor(list []ext.Approval, commandLine string) *ext.Approval {
	for i := range list {
		if list[i].CommandLine == commandLine && list[i].State == ext.ApprovalPending {
			return &list[i]
		}
	}
	return nil
}

// approvalNotices counts the x-termhost/approvals c received.
func approvalNotices(c *client) int {
	n := 0
	for _, f := range c.Frames() {
		if strings.Contains(string(f), `"method":"`+ext.NotifyApprovals+`"`) {
			n++
		}
	}
	return n
}

// giveControl: owner, initialized as "owner-tab", gives the claim of uri
// to clientID.
func giveControl(t *testing.T, owner *client, uri, clientID string) {
	t.Helper()
	seq := owner.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": clientID}})
	e := owner.WaitAction("give control", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Origin != nil && e.Origin.ClientID == "owner-tab" && e.Origin.ClientSeq == seq
	})
	if e.RejectionReason != "" {
		t.Fatalf("giving control to %s: %s", clientID, e.RejectionReason)
	}
}

// approvalSetup: an owner's tab holds a terminal an agent works in.
func approvalSetup(t *testing.T, opts ...serverOption) (ts *testServer, owner, agent *client, uri string) {
	t.Helper()
	ts = newServer(t, opts...)
	owner = ts.dial(t)
	owner.Initialize("1.0.0", "owner-tab")
	uri, _ = owner.CreateTerminal("build", "owner-tab", nil)
	agent = ts.dial(t)
	initAgent(t, agent, "agent-1")
	return ts, owner, agent, uri
}

// TestApprovalApproved: an agent asks, the owner (another client) sees the
// pending approval with who asks and why, approves, and the agent's
// request is answered with who approved; the list shows the answer.
func TestApprovalApproved(t *testing.T) {
	_, owner, agent, uri := approvalSetup(t)
	id := sendApproval(t, agent, uri, "rm -rf build", 0)
	list := waitApprovals(t, owner, "pending approval", func(l []ext.Approval) bool { return pendingFor(l, "rm -rf build") != nil })
	a := pendingFor(list, "rm -rf build")
	if a.Terminal != uri || a.TerminalTitle == "" || a.RequestedBy != (ext.Requester{Kind: ext.RequesterAgent, Name: "Agent · Claude Code"}) ||
		a.Rule != "rm" || a.Reason == "" || a.ExpiresAt <= a.CreatedAt {
		t.Errorf("pending approval = %+v", *a)
	}
	res := owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "approve", "alwaysAllow": true})
	var answered ext.ApprovalAnswerResult
	if err := json.Unmarshal(res, &answered); err != nil {
		t.Fatal(err)
	}
	if answered.Approval.State != ext.ApprovalApproved || answered.Approval.AnsweredBy == nil || answered.Approval.AnsweredAt == 0 {
		t.Errorf("answer result = %+v", answered.Approval)
	}
	got := approvalResult(t, agent, id)
	if got.ID != a.ID || got.State != ext.ApprovalApproved || got.AnsweredBy == nil || got.AnsweredBy.Name != "Owner" || !got.AlwaysAllow {
		t.Errorf("agent got %+v, want approved by Owner with alwaysAllow", got)
	}
	waitApprovals(t, owner, "approved in the list", func(l []ext.Approval) bool {
		return len(l) == 1 && l[0].State == ext.ApprovalApproved && l[0].AnsweredBy != nil
	})
	// Answering again names who answered first.
	err := owner.CallErr(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "deny"}, ahp.CodeAlreadyExists)
	if err.Message != "already approved by Owner" {
		t.Errorf("second answer: %q, want %q", err.Message, "already approved by Owner")
	}
	var all ext.ApprovalList
	if err := json.Unmarshal(agent.MustCall(ext.MethodApprovalList, map[string]any{}), &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Approvals) != 1 || all.Approvals[0].State != ext.ApprovalApproved {
		t.Errorf("approval/list = %+v", all.Approvals)
	}
}

// TestApprovalDenied: a denial carries the person's reason to the agent.
func TestApprovalDenied(t *testing.T) {
	_, owner, agent, uri := approvalSetup(t)
	id := sendApproval(t, agent, uri, "rm x", 0)
	list := waitApprovals(t, owner, "pending", func(l []ext.Approval) bool { return pendingFor(l, "rm x") != nil })
	owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": pendingFor(list, "rm x").ID, "decision": "deny", "reason": "not today"})
	got := approvalResult(t, agent, id)
	if got.State != ext.ApprovalDenied || got.DenyReason != "not today" || got.AnsweredBy == nil {
		t.Errorf("agent got %+v, want denied with the reason", got)
	}
}

// TestApprovalErrors: bad params and callers get the documented codes.
func TestApprovalErrors(t *testing.T) {
	ts, owner, agent, uri := approvalSetup(t)
	for _, tc := range []struct {
		name   string
		params map[string]any
		code   int
	}{
		{"no terminal", map[string]any{"commandLine": "rm x"}, ahp.CodeInvalidParams},
		{"not a terminal URI", map[string]any{"terminal": "file:///x", "commandLine": "rm x"}, ahp.CodeInvalidParams},
		{"empty command line", map[string]any{"terminal": uri, "commandLine": ""}, ahp.CodeInvalidParams},
		{"command line too long", map[string]any{"terminal": uri, "commandLine": strings.Repeat("x", ext.ApprovalMaxCommandLine+1)}, ahp.CodeInvalidParams},
		{"rule too long", map[string]any{"terminal": uri, "commandLine": "rm x", "rule": strings.Repeat("r", 257)}, ahp.CodeInvalidParams},
		{"negative timeout", map[string]any{"terminal": uri, "commandLine": "rm x", "timeoutMs": -1}, ahp.CodeInvalidParams},
		{"timeout over an hour", map[string]any{"terminal": uri, "commandLine": "rm x", "timeoutMs": ext.ApprovalMaxTimeoutMs + 1}, ahp.CodeInvalidParams},
		{"mistyped params", map[string]any{"terminal": uri, "commandLine": 3}, ahp.CodeInvalidParams},
		{"unknown terminal", map[string]any{"terminal": ahp.TerminalURI("nope"), "commandLine": "rm x"}, ahp.CodeNotFound},
	} {
		t.Run("request "+tc.name, func(t *testing.T) { agent.CallErr(ext.MethodApprovalRequest, tc.params, tc.code) })
	}
	for _, tc := range []struct {
		name   string
		params map[string]any
		code   int
	}{
		{"no id", map[string]any{"decision": "approve"}, ahp.CodeInvalidParams},
		{"unknown decision", map[string]any{"id": "a1", "decision": "maybe"}, ahp.CodeInvalidParams},
		{"unknown id", map[string]any{"id": "a-nope", "decision": "approve"}, ahp.CodeNotFound},
	} {
		t.Run("answer "+tc.name, func(t *testing.T) { owner.CallErr(ext.MethodApprovalAnswer, tc.params, tc.code) })
	}
	// Share links: a driver may not ask; a viewer may neither list nor answer.
	driver := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", "bob"))
	driver.Initialize("1.0.0", "bob-tab")
	driver.CallErr(ext.MethodApprovalRequest, map[string]any{"terminal": uri, "commandLine": "rm x"}, ahp.CodePermissionDenied)
	viewer := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "viewer", "eve"))
	viewer.Initialize("1.0.0", "eve-tab")
	viewer.CallErr(ext.MethodApprovalList, map[string]any{}, ahp.CodePermissionDenied)
	viewer.CallErr(ext.MethodApprovalAnswer, map[string]any{"id": "a1", "decision": "approve"}, ahp.CodePermissionDenied)
	viewer.CallErr(ext.MethodApprovalRequest, map[string]any{"terminal": uri, "commandLine": "rm x"}, ahp.CodePermissionDenied)
}

// TestApprovalAudience: the owner and a driver of the terminal get the
// list; a viewer of it and a driver of another terminal never do (an
// approval of a terminal one may not see does not exist for it); a driver
// answers only while it holds the terminal.
func TestApprovalAudience(t *testing.T) {
	ts, owner, agent, uri := approvalSetup(t)
	other, _ := owner.CreateTerminal("other", "owner-tab", nil)
	driver := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", "alice"))
	driver.Initialize("1.0.0", "alice-tab")
	driver.Subscribe(uri)
	viewer := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "viewer", "eve"))
	viewer.Initialize("1.0.0", "eve-tab")
	viewer.Subscribe(uri)
	elsewhere := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, other, "driver", "mallory"))
	elsewhere.Initialize("1.0.0", "mallory-tab")
	elsewhere.Subscribe(other)

	id := sendApproval(t, agent, uri, "rm -rf x", 0)
	list := waitApprovals(t, driver, "driver sees it", func(l []ext.Approval) bool { return pendingFor(l, "rm -rf x") != nil })
	aid := pendingFor(list, "rm -rf x").ID
	waitApprovals(t, owner, "owner sees it", func(l []ext.Approval) bool { return pendingFor(l, "rm -rf x") != nil })

	elsewhere.CallErr(ext.MethodApprovalAnswer, map[string]any{"id": aid, "decision": "approve"}, ahp.CodeNotFound)
	var seen ext.ApprovalList
	if err := json.Unmarshal(elsewhere.MustCall(ext.MethodApprovalList, map[string]any{}), &seen); err != nil {
		t.Fatal(err)
	}
	if len(seen.Approvals) != 0 {
		t.Errorf("a driver of another terminal lists %+v", seen.Approvals)
	}
	err := driver.CallErr(ext.MethodApprovalAnswer, map[string]any{"id": aid, "decision": "approve"}, ahp.CodePermissionDenied)
	if !strings.Contains(err.Message, "control of the terminal") {
		t.Errorf("driver without control: %q", err.Message)
	}
	giveControl(t, owner, uri, "alice-tab")
	driver.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": aid, "decision": "approve"})
	if got := approvalResult(t, agent, id); got.State != ext.ApprovalApproved || got.AnsweredBy == nil || got.AnsweredBy.Name != "alice" {
		t.Errorf("agent got %+v, want approved by alice", got)
	}
	waitApprovals(t, driver, "driver sees the answer", func(l []ext.Approval) bool { return len(l) == 1 && l[0].State == ext.ApprovalApproved })
	// Anything queued for them before is ahead of these answers.
	viewer.MustCall(ahp.MethodPing, nil)
	elsewhere.MustCall(ahp.MethodPing, nil)
	if n := approvalNotices(viewer); n != 0 {
		t.Errorf("the viewer got %d approval lists", n)
	}
	if n := approvalNotices(elsewhere); n != 0 {
		t.Errorf("the driver of another terminal got %d approval lists", n)
	}
}

// TestApprovalFirstAnswerWins: two people answer at once; one wins, the
// other is told who answered.
func TestApprovalFirstAnswerWins(t *testing.T) {
	for range 5 {
		ts, owner, agent, uri := approvalSetup(t)
		driver := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", "alice"))
		driver.Initialize("1.0.0", "alice-tab")
		giveControl(t, owner, uri, "alice-tab")
		id := sendApproval(t, agent, uri, "rm x", 0)
		list := waitApprovals(t, owner, "pending", func(l []ext.Approval) bool { return pendingFor(l, "rm x") != nil })
		aid := pendingFor(list, "rm x").ID
		oid, err1 := owner.Send(ext.MethodApprovalAnswer, map[string]any{"id": aid, "decision": "deny"})
		did, err2 := driver.Send(ext.MethodApprovalAnswer, map[string]any{"id": aid, "decision": "approve"})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		_, oerr := owner.Response(json.RawMessage(oid))
		_, derr := driver.Response(json.RawMessage(did))
		got := approvalResult(t, agent, id)
		switch {
		case oerr == nil && derr != nil:
			if got.State != ext.ApprovalDenied || derr.Code != ahp.CodeAlreadyExists || derr.Message != "already denied by Owner" {
				t.Errorf("owner won: agent got %+v, driver %d %q", got, derr.Code, derr.Message)
			}
		case derr == nil && oerr != nil:
			if got.State != ext.ApprovalApproved || oerr.Code != ahp.CodeAlreadyExists || oerr.Message != "already approved by alice" {
				t.Errorf("driver won: agent got %+v, owner %d %q", got, oerr.Code, oerr.Message)
			}
		default:
			t.Fatalf("both answers: owner %v, driver %v", oerr, derr)
		}
	}
}

// TestApprovalWithdrawnAndTimedOut: a requester that leaves withdraws its
// approval; one nobody answers times out.
func TestApprovalWithdrawnAndTimedOut(t *testing.T) {
	_, owner, agent, uri := approvalSetup(t)
	sendApproval(t, agent, uri, "rm gone", 0)
	waitApprovals(t, owner, "pending", func(l []ext.Approval) bool { return pendingFor(l, "rm gone") != nil })
	_ = agent.Conn().CloseNow()
	list := waitApprovals(t, owner, "withdrawn", func(l []ext.Approval) bool { return len(l) == 1 && l[0].State == ext.ApprovalWithdrawn })
	owner.CallErr(ext.MethodApprovalAnswer, map[string]any{"id": list[0].ID, "decision": "approve"}, ahp.CodeAlreadyExists)

	ts2, owner2, agent2, uri2 := approvalSetup(t)
	_ = ts2
	id := sendApproval(t, agent2, uri2, "rm slow", 50)
	if got := approvalResult(t, agent2, id); got.State != ext.ApprovalTimedOut || got.AnsweredBy != nil {
		t.Errorf("unanswered approval = %+v, want timed_out", got)
	}
	waitApprovals(t, owner2, "timed out", func(l []ext.Approval) bool { return len(l) == 1 && l[0].State == ext.ApprovalTimedOut })
}

// TestApprovalBound: a requester has at most 16 pending approvals.
func TestApprovalBound(t *testing.T) {
	_, _, agent, uri := approvalSetup(t)
	for i := range 16 {
		sendApproval(t, agent, uri, "rm "+string(rune('a'+i)), 0)
	}
	err := agent.CallErr(ext.MethodApprovalRequest, map[string]any{"terminal": uri, "commandLine": "rm z"}, ahp.CodePermissionDenied)
	if !strings.Contains(err.Message, "too many pending approvals") {
		t.Errorf("over the bound: %q", err.Message)
	}
}

// TestApprovalListCoalesced: a burst of changes reaches a connection as at
// most one list per 100 ms (plus the first), the last one whole.
func TestApprovalListCoalesced(t *testing.T) {
	_, owner, agent, uri := approvalSetup(t)
	start := time.Now()
	const n = 30
	for i := range n {
		sendApproval(t, agent, uri, "rm f"+string(rune('a'+i%16)), 0)
		if i%16 == 15 { // stay under the bound: answer what is pending
			var l ext.ApprovalList
			_ = json.Unmarshal(owner.MustCall(ext.MethodApprovalList, map[string]any{}), &l)
			for _, a := range l.Approvals {
				if a.State == ext.ApprovalPending {
					owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "deny"})
				}
			}
		}
	}
	var want int
	var l ext.ApprovalList
	_ = json.Unmarshal(owner.MustCall(ext.MethodApprovalList, map[string]any{}), &l)
	want = len(l.Approvals)
	waitApprovals(t, owner, "the whole list", func(got []ext.Approval) bool { return len(got) >= want })
	elapsed := time.Since(start)
	got := approvalNotices(owner)
	if limit := 2 + int(elapsed/(100*time.Millisecond)); got > limit {
		t.Errorf("%d lists in %v for %d+ changes, want at most %d", got, elapsed, n, limit)
	}
}

// TestApprovalAudited: requests and answers are in the audit trail.
func TestApprovalAudited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(path, testserver.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	_, owner, agent, uri := approvalSetup(t, testserver.Handlers(func(c *handlersConfig) { c.Audit = log }))
	t.Cleanup(func() { _ = log.Close() })
	id := sendApproval(t, agent, uri, "rm -rf audited", 0)
	list := waitApprovals(t, owner, "pending", func(l []ext.Approval) bool { return pendingFor(l, "rm -rf audited") != nil })
	owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": pendingFor(list, "rm -rf audited").ID, "decision": "deny", "reason": "no"})
	approvalResult(t, agent, id)
	log.Sync()
	data, _ := os.ReadFile(path)
	var req, ans bool
	for line := range strings.Lines(string(data)) {
		var e audit.Event
		_ = json.Unmarshal([]byte(line), &e)
		switch e.Event {
		case audit.ApprovalRequested:
			req = e.Command == "rm -rf audited" && e.Rule == "rm" && e.Terminal == uri && strings.HasPrefix(e.Name, "Agent")
		case audit.ApprovalAnswered:
			ans = e.Command == "rm -rf audited" && e.Decision == ext.ApprovalDenied && e.Reason == "no" && e.Name == "Owner"
		}
	}
	if !req || !ans {
		t.Errorf("audit trail (request %v, answer %v):\n%s", req, ans, data)
	}
}
