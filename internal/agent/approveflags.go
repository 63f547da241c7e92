package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/termhost/termhost/internal/approval"
)

// ApproveOptions are the approval flags (README, "Approvals") of termhost
// mcp and termhost serve.
type ApproveOptions struct {
	Mode    string // --approve: ApproveNever, ApproveRules or ApproveAlways
	Rules   string // --approve-rules
	Drivers bool   // --approve-drivers (serve)
}

// ApproveUsage and ApproveRulesUsage are the help of --approve and
// --approve-rules.
const ApproveUsage = "when an agent's command line waits for a person's approval: never, rules (the rules decide: read-only commands run, rm, sudo, writes and anything not allowed ask) or always"

const ApproveRulesUsage = "a JSON `file` of rules {\"git status\": true, \"rm\": false, \"/^npm (test|run lint)$/\": true} (true runs, false asks) added to the built-in ones; re-read when it changes or on SIGHUP; \"always allow\" answers add rules to it"

// Check refuses an unknown mode.
func (o ApproveOptions) Check() error {
	switch o.Mode {
	case ApproveNever, ApproveRules, ApproveAlways:
		return nil
	}
	return fmt.Errorf("--approve must be never, rules or always, not %q", o.Mode)
}

// OpenRules loads the rules file (none: the built-in rules), re-reads it
// when it changes and on SIGHUP until stop.
func (o ApproveOptions) OpenRules(log *slog.Logger) (rules *approval.File, stop func(), err error) {
	rules, err = approval.Open(o.Rules, log)
	if err != nil {
		return nil, nil, fmt.Errorf("--approve-rules: %w", err)
	}
	if o.Rules == "" {
		return rules, func() {}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	waitWatch, err := rules.Watch(ctx)
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("--approve-rules: %w", err)
	}
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hups:
				if err := rules.Reload(); err != nil {
					log.Warn("approval rules not reloaded; the previous rules stay in force", "err", err)
				}
			}
		}
	}()
	return rules, func() {
		signal.Stop(hups)
		cancel()
		<-done
		waitWatch()
	}, nil
}
