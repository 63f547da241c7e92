package agent_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/approval"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// ownerClient connects a person's client (the owner's browser tab) to the
// rig's server, subscribed to the root.
func ownerClient(t *testing.T, r *rig) *ahptest.Client {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+r.ts.Token)
	c := ahptest.MustDial(t, "ws"+strings.TrimPrefix(r.ts.URL, "http")+"/ws", ahptest.Options{Header: h})
	c.Initialize("1.0.0", "owner-tab")
	return c
}

// pendingApproval waits for a pending approval of commandLine in the
// lists c receives.
func pendingApproval(t *testing.T, c *ahptest.Client, commandLine string) ext.Approval {
	t.Helper()
	var found ext.Approval
	c.WaitFrame("pending approval of "+commandLine, func(m *ahp.Message, _ int) bool {
		if m.Method != ext.NotifyApprovals {
			return false
		}
		var l ext.ApprovalList
		_ = json.Unmarshal(m.Params, &l)
		for _, a := range l.Approvals {
			if a.CommandLine == commandLine && a.State == ext.ApprovalPending {
				found = a
				return true
			}
		}
		return false
	})
	return found
}

// callAsync calls a tool on another goroutine; wait returns its result.
func callAsync(t *testing.T, r *rig, name string, args map[string]any) (wait func() (map[string]any, string, bool)) {
	var wg sync.WaitGroup
	var out map[string]any
	var text string
	var isErr bool
	var err error
	wg.Go(func() { out, text, isErr, err = r.try(t, name, args) })
	return func() (map[string]any, string, bool) {
		wg.Wait()
		if err != nil {
			t.Fatalf("%s: protocol error %v", name, err)
		}
		return out, text, isErr
	}
}

func rulesRig(t *testing.T, mode string) *rig {
	t.Helper()
	return newRigWith(t, func(c *agent.Config) { c.Approve = mode })
}

// exists reports whether the file name exists in the rig's shells' home.
func exists(r *rig, name string) bool {
	_, err := os.Stat(filepath.Join(r.ts.Home, name))
	return err == nil
}

// TestRunCommandApproval: under the rules, a read-only command runs at
// once; one the rules ask about waits for a person, who answers from
// another client: approved, it runs; denied or unanswered, nothing of it
// reaches the shell.
func TestRunCommandApproval(t *testing.T) {
	t.Parallel()
	r := rulesRig(t, agent.ApproveRules)
	owner := ownerClient(t, r)
	id := r.open(t)
	uri := ahp.TerminalURI(id)
	owner.Subscribe(uri)

	out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo allowed"})
	if out["status"] != "finished" || !strings.Contains(out["output"].(string), "allowed") {
		t.Fatalf("a read-only command: %v", out)
	}

	t.Run("approved", func(t *testing.T) {
		wait := callAsync(t, r, "run_command", map[string]any{"terminal": id, "command": "touch approved.txt"})
		a := pendingApproval(t, owner, "touch approved.txt")
		if a.Terminal != uri || a.RequestedBy.Kind != ext.RequesterAgent || a.Rule == "" || a.Reason == "" {
			t.Errorf("approval = %+v", a)
		}
		if exists(r, "approved.txt") {
			t.Fatal("the command ran before it was approved")
		}
		owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "approve"})
		out, text, isErr := wait()
		if isErr || out["status"] != "finished" || !exists(r, "approved.txt") {
			t.Fatalf("approved command: %v %s (file exists %v)", out, text, exists(r, "approved.txt"))
		}
	})
	t.Run("denied", func(t *testing.T) {
		wait := callAsync(t, r, "run_command", map[string]any{"terminal": id, "command": "touch denied.txt"})
		a := pendingApproval(t, owner, "touch denied.txt")
		owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "deny", "reason": "not that file"})
		out, text, isErr := wait()
		if isErr || out["status"] != "denied" || out["reason"] != "not that file" || out["answeredBy"] != "Owner" {
			t.Fatalf("denied command: %v %s", out, text)
		}
		// The shell never saw it: not created, not even typed.
		r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo after-denial"})
		if exists(r, "denied.txt") || strings.Contains(owner.Output(uri), "denied.txt") {
			t.Errorf("the denied command reached the shell (file %v); output:\n%s", exists(r, "denied.txt"), owner.Output(uri))
		}
	})
	t.Run("timed out", func(t *testing.T) {
		out, text := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "touch late.txt", "timeoutSeconds": 1})
		if out["status"] != "timed_out" || exists(r, "late.txt") {
			t.Fatalf("unanswered command: %v %s", out, text)
		}
	})
}

// TestSendInputApproval: send_input that submits a line (Enter) asks for
// the whole line, also typed over several calls; typing without Enter
// does not ask.
func TestSendInputApproval(t *testing.T) {
	t.Parallel()
	r := rulesRig(t, agent.ApproveRules)
	owner := ownerClient(t, r)
	id := r.open(t)
	r.ok(t, "send_input", map[string]any{"terminal": id, "text": "touch typed"}) // no Enter: no approval
	wait := callAsync(t, r, "send_input", map[string]any{"terminal": id, "text": ".txt", "keys": []string{"Enter"}})
	a := pendingApproval(t, owner, "touch typed.txt")
	owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "approve"})
	if _, text, isErr := wait(); isErr {
		t.Fatalf("approved input: %s", text)
	}
	poll.Until(t, 20*time.Second, "typed.txt created", func() bool { return exists(r, "typed.txt") })
	r.ok(t, "wait_for", map[string]any{"terminal": id, "timeoutSeconds": 30})

	wait = callAsync(t, r, "send_input", map[string]any{"terminal": id, "text": "touch nope.txt\r"})
	a = pendingApproval(t, owner, "touch nope.txt")
	owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "deny"})
	if _, text, isErr := wait(); !isErr || !strings.Contains(text, "denied") {
		t.Fatalf("denied input: %s", text)
	}
	r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo done"})
	if exists(r, "nope.txt") {
		t.Error("the denied input ran")
	}
	// Input to a program a command runs is not a command line: no approval.
	out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "read -p 'answer? ' x; echo got-$x", "timeoutSeconds": 60})
	if out["status"] != "input_awaited" {
		t.Fatalf("read x: %v", out)
	}
	r.ok(t, "send_input", map[string]any{"terminal": id, "text": "rm -rf nothing", "keys": []string{"Enter"}})
	out, _ = r.ok(t, "wait_for", map[string]any{"terminal": id, "timeoutSeconds": 30})
	if !strings.Contains(out["output"].(string), "got-rm") {
		t.Errorf("the program's answer: %v", out)
	}
}

// TestApproveModes: never asks nothing, always asks everything.
func TestApproveModes(t *testing.T) {
	t.Parallel()
	t.Run("never", func(t *testing.T) {
		r := rulesRig(t, agent.ApproveNever)
		id := r.open(t)
		out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "touch free.txt"})
		if out["status"] != "finished" || !exists(r, "free.txt") {
			t.Fatalf("--approve never: %v", out)
		}
		r.ok(t, "send_input", map[string]any{"terminal": id, "text": "touch free2.txt\r"})
		poll.Until(t, 20*time.Second, "free2.txt", func() bool { return exists(r, "free2.txt") })
	})
	t.Run("always", func(t *testing.T) {
		r := rulesRig(t, agent.ApproveAlways)
		owner := ownerClient(t, r)
		id := r.open(t)
		wait := callAsync(t, r, "run_command", map[string]any{"terminal": id, "command": "echo hi"})
		a := pendingApproval(t, owner, "echo hi")
		if a.Rule != "always" {
			t.Errorf("rule = %q", a.Rule)
		}
		owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "approve"})
		if out, _, _ := wait(); out["status"] != "finished" {
			t.Fatalf("--approve always, approved: %v", out)
		}
		wait = callAsync(t, r, "send_input", map[string]any{"terminal": id, "keys": []string{"Enter"}}) // an empty line asks nothing
		if _, text, isErr := wait(); isErr {
			t.Fatalf("an empty Enter: %s", text)
		}
	})
}

// TestAlwaysAllowAddsRule: "always allow" adds the command's rule to the
// rules file, and the next such command runs without asking.
func TestAlwaysAllowAddsRule(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rules.json")
	rules, err := approval.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRigWith(t, func(c *agent.Config) { c.Approve, c.Rules = agent.ApproveRules, rules })
	owner := ownerClient(t, r)
	id := r.open(t)
	wait := callAsync(t, r, "run_command", map[string]any{"terminal": id, "command": "touch one.txt"})
	a := pendingApproval(t, owner, "touch one.txt")
	owner.MustCall(ext.MethodApprovalAnswer, map[string]any{"id": a.ID, "decision": "approve", "alwaysAllow": true})
	wait()
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"touch": true`) {
		t.Fatalf("rules file after always allow:\n%s", data)
	}
	out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "touch two.txt"})
	if out["status"] != "finished" || !exists(r, "two.txt") {
		t.Fatalf("an allowed command: %v", out)
	}
}

// TestSecretPrompt: a command reading a password with read -s: the
// agent's run_command reports a secret prompt, its input is refused, the
// owner types the password in the terminal, the command goes on; the
// password is in no tool result, in the recording or in the audit trail.
func TestSecretPrompt(t *testing.T) {
	t.Parallel()
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	trail, err := audit.Open(auditPath, testserver.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	r := newRigWith(t, func(*agent.Config) {},
		testserver.Terminals(func(c *terminals.Config) { c.RecordDir = filepath.Join(t.TempDir(), "recordings") }),
		testserver.Handlers(func(c *handlers.Config) { c.Audit = trail }))
	t.Cleanup(func() { _ = trail.Close() })
	owner := ownerClient(t, r)
	id := r.open(t)
	uri := ahp.TerminalURI(id)
	owner.Subscribe(uri)
	owner.MustCall(ext.MethodRecord, map[string]any{"channel": uri, "on": true})
	var results []string
	keep := func(out map[string]any, text string) {
		raw, _ := json.Marshal(out)
		results = append(results, string(raw), text)
	}

	out, text := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "read -s -p 'Password: ' pw; echo got ${#pw}", "timeoutSeconds": 60})
	keep(out, text)
	if out["status"] != "input_awaited" || out["secret"] != true || !strings.Contains(text, "password") {
		t.Fatalf("run_command at a password prompt: %v %s", out, text)
	}
	refusal := r.fails(t, "send_input", map[string]any{"terminal": id, "text": "hunter2\r"}, "a person must answer this prompt")
	results = append(results, refusal)
	out, text = r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": "got", "timeoutSeconds": 5})
	keep(out, text)
	if out["status"] != "input_awaited" || out["secret"] != true {
		t.Errorf("wait_for at a password prompt: %v", out)
	}

	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "hunter2\r"})
	// The agent sees the prompt go once the catalogue says so.
	poll.Until(t, 30*time.Second, "the command finished", func() bool {
		out, text = r.ok(t, "wait_for", map[string]any{"terminal": id, "timeoutSeconds": 30})
		keep(out, text)
		return out["status"] != "input_awaited"
	})
	if out["status"] != "finished" || !strings.Contains(out["output"].(string), "got 7") {
		t.Fatalf("after the owner typed the password: %v %s", out, text)
	}
	for _, mode := range []string{"screen", "output"} {
		out, text = r.ok(t, "read_terminal", map[string]any{"terminal": id, "mode": mode, "since": 0})
		keep(out, text)
	}
	out, text = r.ok(t, "list_terminals", map[string]any{})
	keep(out, text)
	for _, res := range results {
		if strings.Contains(res, "hunter2") {
			t.Errorf("a tool result holds the password: %s", res)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, r.ts.URL+"/t/"+id+"/recording.cast", nil)
	req.Header.Set("Authorization", "Bearer "+r.ts.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cast, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(cast), "got 7") || strings.Contains(string(cast), "hunter2") {
		t.Errorf("recording (%d) holds the password or not the output:\n%s", resp.StatusCode, cast)
	}
	trail.Sync()
	logged, _ := os.ReadFile(auditPath)
	if !strings.Contains(string(logged), `"event":"input"`) || strings.Contains(string(logged), "hunter2") {
		t.Errorf("audit trail holds the password or not the owner's input:\n%s", logged)
	}
}
