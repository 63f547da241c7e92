package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// TestApprovalsCLI: termhost approvals lists what an agent waits for;
// approve and deny answer it over AHP, as the owner, and the agent gets
// the answer; a second answer or an unknown id is an error.
func TestApprovalsCLI(t *testing.T) {
	ts := newTestServer(t)
	agent := ts.dial(t)
	id := ts.shell(t, agent, "build", agent.ClientID())
	uri := ahp.TerminalURI(id)

	type answer struct {
		res ext.ApprovalResult
		err error
	}
	ask := func(line string) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			raw, err := agent.Call(t.Context(), ext.MethodApprovalRequest,
				ext.ApprovalRequestParams{Terminal: uri, CommandLine: line, Rule: "rm", Reason: "`rm` deletes files", RequestedBy: "Agent · Test"})
			var a answer
			a.err = err
			if err == nil {
				a.err = json.Unmarshal(raw, &a.res)
			}
			ch <- a
		}()
		return ch
	}
	pendingID := func(line string) string {
		var found string
		waitFor(t, "the approval of "+line, func() bool {
			code, stdout, _ := call(t, ownerEnv(ts), "approvals", "--json")
			var list []ext.Approval
			if code != 0 || json.Unmarshal([]byte(stdout), &list) != nil {
				return false
			}
			for _, a := range list {
				if a.CommandLine == line && a.State == ext.ApprovalPending {
					found = a.ID
				}
			}
			return found != ""
		})
		return found
	}

	first := ask("rm -rf build")
	aid := pendingID("rm -rf build")
	code, stdout, stderr := call(t, ownerEnv(ts), "approvals")
	for _, want := range []string{"ID", aid, "build", "pending", "Agent · Test", "rm", "rm -rf build"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("approvals: exit %d, stdout lacks %q:\n%s%s", code, want, stdout, stderr)
		}
	}
	code, _, stderr = call(t, ownerEnv(ts), "approve", aid)
	oneLine(t, "approve", stderr, `approved "rm -rf build" in build`)
	if code != 0 {
		t.Fatalf("approve: exit %d", code)
	}
	if a := await(t, first); a.err != nil || a.res.State != ext.ApprovalApproved || a.res.AnsweredBy == nil {
		t.Errorf("the agent got %+v, %v", a.res, a.err)
	}
	code, _, stderr = call(t, ownerEnv(ts), "deny", aid)
	if code != exitUsage || !strings.Contains(stderr, "was approved by") {
		t.Errorf("a second answer: exit %d, %q", code, stderr)
	}

	second := ask("rm -rf dist")
	aid = pendingID("rm -rf dist")
	code, _, stderr = call(t, ownerEnv(ts), "deny", "--reason", "keep dist", aid)
	if code != 0 || !strings.Contains(stderr, "denied") {
		t.Fatalf("deny: exit %d, %q", code, stderr)
	}
	if a := await(t, second); a.err != nil || a.res.State != ext.ApprovalDenied || a.res.DenyReason != "keep dist" {
		t.Errorf("the agent got %+v, %v", a.res, a.err)
	}
	code, _, stderr = call(t, ownerEnv(ts), "approve", "a-unknown")
	if code != exitUsage || !strings.Contains(stderr, `no approval "a-unknown"`) {
		t.Errorf("unknown id: exit %d, %q", code, stderr)
	}
	code, _, stderr = call(t, ownerEnv(ts), "approve")
	if code != exitUsage || !strings.Contains(stderr, "want one approval id") {
		t.Errorf("no id: exit %d, %q", code, stderr)
	}
}
