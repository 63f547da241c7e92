package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/approval"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
)

// TestApproveDrivers: under --approve-drivers a driver link's Enter on a
// line the rules do not allow is held until the owner answers: approved,
// the command runs; denied, it does not (the shell never got the Enter).
// A line the rules allow goes through at once.
func TestApproveDrivers(t *testing.T) {
	rules, err := approval.Open("", nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, testserver.Terminals(func(c *terminalsConfig) { c.ShellIntegration, c.ShellArgs = true, nil }),
		testserver.Handlers(func(c *handlersConfig) { c.ApproveDrivers = rules }))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner-tab")
	uri, _ := owner.CreateTerminal("drv", "owner-tab", nil)
	poll.Until(t, 20*time.Second, "the shell's prompt", func() bool { return ts.m.AtPrompt(uri) })
	driver := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", "alice"))
	driver.Initialize("1.0.0", "alice-tab")
	driver.Subscribe(uri)
	giveControl(t, owner, uri, "alice-tab")
	mkdir := func(name string) {
		if err := os.Mkdir(filepath.Join(ts.Home, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(name string) bool {
		_, err := os.Stat(filepath.Join(ts.Home, name))
		return os.IsNotExist(err)
	}
	mkdir("x")
	mkdir("y")

	// Allowed: runs at once.
	driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo fi''ne\r"})
	driver.WaitOutput(uri, "fine")

	// Typed key by key, then Enter: held, approved, run.
	for _, k := range "rm -rf x" {
		driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": string(k)})
	}
	driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "\r"})
	a := waitApprovals(t, owner, "the driver's line", func(l []ext.Approval) bool { return pendingFor(l, "rm -rf x") != nil })
	p := pendingFor(a, "rm -rf x")
	if p.RequestedBy.Kind != ext.RequesterDriver || p.RequestedBy.Name != "alice" || p.Rule != "rm" {
		t.Errorf("approval = %+v", *p)
	}
	if gone("x") {
		t.Fatal("the line ran before it was approved")
	}
	// The driver holds the terminal, but its own Enter is not its to approve.
	if err := driver.CallErr(ext.MethodApprovalAnswer, map[string]any{"id": p.ID, "decision": "approve"}, ahp.CodePermissionDenied); !strings.Contains(err.Message, "its own") {
		t.Errorf("a driver approving its own line: %q", err.Message)
	}
	owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": p.ID, "decision": "approve"})
	poll.Until(t, 20*time.Second, "x removed", func() bool { return gone("x") })

	// Pasted with its Enter: denied, never run.
	poll.Until(t, 20*time.Second, "the prompt back", func() bool { return ts.m.AtPrompt(uri) })
	driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "rm -rf y\r"})
	a = waitApprovals(t, owner, "the pasted line", func(l []ext.Approval) bool { return pendingFor(l, "rm -rf y") != nil })
	owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": pendingFor(a, "rm -rf y").ID, "decision": "deny"})
	driver.WaitAction("the refusal", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalInput && strings.Contains(e.RejectionReason, "not approved")
	})
	// Ctrl-U clears the line; a later allowed command shows the shell went on without it.
	driver.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "\x15echo after''wards\r"})
	driver.WaitOutput(uri, "afterwards")
	if gone("y") {
		t.Error("the denied line ran")
	}
}
