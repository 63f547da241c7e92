package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
)

const approvalsAbout = `List the approvals agents and drivers are waiting for (README, "Approvals"):
its id, terminal, command line, who asks and the rule that asked. Approve or
deny one with termhost approve / termhost deny. Answered approvals stay listed
for a few seconds with their answer.`

const approvalsExamples = `  termhost approvals
  termhost approvals --json | jq -r '.[] | select(.state == "pending") | .id'`

const approveAbout = `Approve a pending approval: the agent's (or driver's) command line runs.
--always also asks the requester to add a rule that allows such commands from
now on.`

const approveExamples = `  termhost approve a3f2c9a1b0d4e5f
  termhost approve --always a3f2c9a1b0d4e5f`

const denyAbout = `Deny a pending approval: the command line does not run; the requester is
told who denied it and why (--reason).`

const denyExamples = `  termhost deny a3f2c9a1b0d4e5f
  termhost deny --reason "not on the release branch" a3f2c9a1b0d4e5f`

// approvalsCommand is "termhost approvals".
func (a *app) approvalsCommand(args []string) int {
	f := newCmdFlags("approvals", "approvals [flags]", approvalsAbout, approvalsExamples)
	asJSON := f.Bool("json", false, "print a JSON array of the approvals as the server sends them")
	pos, code, ok := f.parse(a, args, false)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return a.failf("approvals", "unexpected argument %q (see termhost approvals --help)", pos[0])
	}
	ctx := context.Background()
	c, base, code := a.connect(ctx, "approvals", f.conn, client.Options{})
	if c == nil {
		return code
	}
	defer func() { _ = c.Close() }()
	cctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
	defer cancel()
	raw, err := c.Call(cctx, ext.MethodApprovalList, struct{}{})
	if err != nil {
		return a.fail("approvals", base, err)
	}
	var list ext.ApprovalList
	if err := json.Unmarshal(raw, &list); err != nil {
		return a.failf("approvals", "the server's answer is not understood: %v", err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(list.Approvals, "", "  ")
		fmt.Fprintf(a.stdout, "%s\n", out)
		return exitOK
	}
	if len(list.Approvals) == 0 {
		fmt.Fprintln(a.stderr, "termhost: no approvals pending")
		return exitOK
	}
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTERMINAL\tSTATE\tASKED BY\tRULE\tCOMMAND")
	for _, ap := range list.Approvals {
		state := ap.State
		if ap.State == ext.ApprovalPending {
			state += " " + time.Until(time.UnixMilli(ap.ExpiresAt)).Round(time.Second).String()
		} else if ap.AnsweredBy != nil {
			state += " by " + ap.AnsweredBy.Name
		}
		term := ahp.TerminalIDOf(ap.Terminal)
		if ap.TerminalTitle != "" {
			term += " (" + ap.TerminalTitle + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", ap.ID, term, state, ap.RequestedBy.Name, ap.Rule, approvalLine(ap.CommandLine))
	}
	_ = w.Flush()
	return exitOK
}

// approvalLine shows a command line on one line of a table.
func approvalLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}

// approveCommand is "termhost approve".
func (a *app) approveCommand(args []string) int {
	f := newCmdFlags("approve", "approve [flags] <id>", approveAbout, approveExamples)
	always := f.Bool("always", false, "also allow such commands from now on (the requester adds a rule)")
	return a.answerApproval(f, args, func(p *ext.ApprovalAnswerParams) {
		p.Decision, p.AlwaysAllow = ext.DecisionApprove, *always
	})
}

// denyCommand is "termhost deny".
func (a *app) denyCommand(args []string) int {
	f := newCmdFlags("deny", "deny [flags] <id>", denyAbout, denyExamples)
	reason := f.String("reason", "", "why, for the agent or driver that asked (at most 256 bytes)")
	return a.answerApproval(f, args, func(p *ext.ApprovalAnswerParams) {
		p.Decision, p.Reason = ext.DecisionDeny, *reason
	})
}

// answerApproval sends the answer set answers an approval.
func (a *app) answerApproval(f *cmdFlags, args []string, set func(*ext.ApprovalAnswerParams)) int {
	pos, code, ok := f.parse(a, args, false)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return a.failf(f.name, "want one approval id (see termhost approvals), got %d arguments", len(pos))
	}
	p := ext.ApprovalAnswerParams{ID: pos[0]}
	set(&p)
	ctx := context.Background()
	c, base, code := a.connect(ctx, f.name, f.conn, client.Options{})
	if c == nil {
		return code
	}
	defer func() { _ = c.Close() }()
	cctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
	defer cancel()
	raw, err := c.Call(cctx, ext.MethodApprovalAnswer, p)
	var rpcErr *ahp.Error
	switch {
	case client.IsNotFound(err):
		return a.failf(f.name, "no approval %q on %s (see termhost approvals)", p.ID, base)
	case errors.As(err, &rpcErr) && rpcErr.Code == ahp.CodeAlreadyExists:
		return a.failf(f.name, "approval %s was %s", p.ID, strings.TrimPrefix(rpcErr.Message, "already "))
	case err != nil:
		return a.fail(f.name, base, err)
	}
	var res ext.ApprovalAnswerResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return a.failf(f.name, "the server's answer is not understood: %v", err)
	}
	fmt.Fprintf(a.stderr, "termhost: %s %q in %s\n", res.Approval.State, approvalLine(res.Approval.CommandLine), ahp.TerminalIDOf(res.Approval.Terminal))
	return exitOK
}
