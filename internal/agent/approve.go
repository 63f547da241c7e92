package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/approval"
)

// Approvals (README, "Approvals"): before run_command types a command
// line, or send_input submits one (its text holds Enter), the policy
// decides whether it runs or asks; to ask, the agent files an approval on
// the server (x-termhost/approval/request) and types nothing until a
// person approves it. The policy lives here, with the requester.

// Values of Config.Approve.
const (
	ApproveNever  = "never"  // nothing asks (Config's default)
	ApproveRules  = "rules"  // the rules decide (termhost mcp's default)
	ApproveAlways = "always" // every command line asks
)

// Statuses of a Result whose command line did not run.
const (
	statusDenied   = "denied"
	statusTimedOut = "timed_out"
)

// secretRefusal is the error of send_input at a secret prompt.
const secretRefusal = "a person must answer this prompt in the terminal (it waits for a password or another secret, which an agent never types): ask the user to type it there, then wait_for the command to finish"

// verdict is how an approval ended for a line that does not run: status
// statusDenied or statusTimedOut; zero when the line may run.
type verdict struct {
	status, reason, answeredBy string
}

// decide applies the approval mode and the rules to a command line.
func (a *Agent) decide(line string) (approval.Result, bool) {
	switch a.cfg.Approve {
	case ApproveAlways:
		return approval.Result{Decision: approval.Ask, Rule: "always", Reason: "every command line asks (--approve always)"}, true
	case ApproveRules:
		var res approval.Result
		if a.cfg.Rules != nil {
			res = a.cfg.Rules.Evaluate(line)
		} else {
			res = (*approval.Policy)(nil).Evaluate(line)
		}
		return res, res.Decision == approval.Ask
	}
	return approval.Result{Decision: approval.Run}, false
}

// approve asks a person for line on terminal uri when the policy says so,
// and waits for the answer, at most timeout.
func (s *session) approve(ctx context.Context, c *client.Client, uri, line string, timeout time.Duration) (verdict, error) {
	res, ask := s.a.decide(line)
	if !ask {
		return verdict{}, nil
	}
	ms := min(max(timeout.Milliseconds(), 1), ext.ApprovalMaxTimeoutMs)
	p := ext.ApprovalRequestParams{Terminal: uri, CommandLine: clipBytes(line, ext.ApprovalMaxCommandLine),
		Rule: clipBytes(res.Rule, ext.ApprovalMaxRule), Reason: clipBytes(res.Reason, ext.ApprovalMaxRule), TimeoutMs: ms}
	raw, err := c.Call(ctx, ext.MethodApprovalRequest, p)
	if err != nil {
		return verdict{}, fmt.Errorf("asking the user to approve %q failed: %w", clip(line, 80), s.a.explain(err))
	}
	var r ext.ApprovalResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return verdict{}, fmt.Errorf("the server's answer to the approval is not understood: %w", err)
	}
	switch r.State {
	case ext.ApprovalApproved:
		if r.AlwaysAllow && s.a.cfg.Rules != nil && res.Suggest != "" {
			if err := s.a.cfg.Rules.AlwaysAllow(res.Suggest); err != nil {
				s.a.cfg.Logger.Warn("could not add the rule the user allowed", "rule", res.Suggest, "err", err)
			}
		}
		return verdict{}, nil
	case ext.ApprovalDenied:
		v := verdict{status: statusDenied, reason: r.DenyReason}
		if r.AnsweredBy != nil {
			v.answeredBy = r.AnsweredBy.Name
		}
		return v, nil
	}
	return verdict{status: statusTimedOut}, nil
}

// text is the sentence of a verdict, for the tool result.
func (v verdict) text(line string) string {
	if v.status == statusTimedOut {
		return fmt.Sprintf("Nobody approved %q within the timeout: it was not run (nothing was typed). Ask the user, or run something else.", clip(line, 200))
	}
	s := fmt.Sprintf("%s denied %q: it was not run (nothing was typed).", firstNonEmpty(v.answeredBy, "The user"), clip(line, 200))
	if v.reason != "" {
		s += " Their reason: " + v.reason
	}
	return s
}

// clipBytes cuts s to at most n bytes of valid UTF-8, marking the cut.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// secretUp reports whether the terminal's program waits for a secret
// (the catalogue's ext.MetaSecretPrompt).
func secretUp(c *client.Client, uri string) bool { return metaTrue(c, uri, ext.MetaSecretPrompt) }

// metaTrue reports whether the terminal's catalogue entry has key: true.
func metaTrue(c *client.Client, uri, key string) bool {
	root, ok := c.Root()
	if !ok {
		return false
	}
	for _, info := range root.Terminals {
		if info.Resource == uri {
			var meta map[string]json.RawMessage
			_ = json.Unmarshal(info.Meta, &meta)
			return string(meta[key]) == "true"
		}
	}
	return false
}

// toShell reports whether input to the terminal goes to its shell's
// command line: it runs a shell (not a program instead), and shell
// integration reports no command running (or cannot tell). Input to a
// program a command runs is that program's, not a command line.
func (s *session) toShell(c *client.Client, t *term) bool {
	if metaTrue(c, t.uri, ext.MetaRunsCommand) {
		return false
	}
	st, _ := c.Terminal(t.uri)
	if st.SupportsCommandDetection == nil || !*st.SupportsCommandDetection {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.running() == nil
}

// submitted is the command line an input submits: the text the agent typed
// since its last Enter plus this input's up to its last Enter (\r or \n),
// with Enter as a new line; ok is false when the input submits nothing.
// rest is what stays typed after it.
func submitted(typed, data string) (line, rest string, ok bool) {
	all := typed + data
	i := strings.LastIndexAny(all, "\r\n")
	if i < 0 {
		return "", all, false
	}
	line = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(all[:i])
	return strings.TrimRight(line, "\n"), all[i+1:], true
}

// secretText is the sentence of a Result at a secret prompt.
func secretText() string {
	return "The command waits for a password or another secret (the terminal does not echo it): a person must type it in the terminal, an agent cannot. Ask the user to, then wait_for the command to finish."
}
