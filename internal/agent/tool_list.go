package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
)

// Terminal is how the tools describe a terminal.
type Terminal struct {
	Host             string   `json:"host,omitempty" jsonschema:"the host the terminal is on (pass it as host to the other tools); absent for a server without other hosts"`
	ID               string   `json:"id" jsonschema:"the terminal's id, for the other tools"`
	Title            string   `json:"title"`
	URL              string   `json:"url" jsonschema:"the terminal's page in the workbench (needs the owner's login)"`
	State            string   `json:"state" jsonschema:"running or exited"`
	ExitCode         *int     `json:"exitCode,omitempty" jsonschema:"the terminal's own exit code, once exited"`
	Cwd              string   `json:"cwd,omitempty"`
	RunningCommand   string   `json:"runningCommand,omitempty"`
	LastExitCode     *int     `json:"lastExitCode,omitempty" jsonschema:"exit code of the last command that finished"`
	ShellIntegration bool     `json:"shellIntegration" jsonschema:"whether command starts, ends and exit codes are reported (run_command needs it)"`
	ControlledBy     string   `json:"controlledBy" jsonschema:"who types into it, as presence names them: Agent · <name> (this agent), a person's name, or nobody"`
	Watchers         []string `json:"watchers"`
	OpenedByYou      bool     `json:"openedByYou"`
}

type listIn struct{}

type listOut struct {
	Terminals []Terminal `json:"terminals"`
	// Unreachable are the hosts that could not be listed, and why.
	Unreachable []hostError `json:"unreachable,omitempty" jsonschema:"the hosts whose terminals could not be listed, and why"`
}

func (a *Agent) list(ctx context.Context, s *session, _ listIn) (listOut, string, error) {
	out := listOut{Terminals: []Terminal{}}
	var hosts *ext.HostList
	if a.cfg.Hosts != nil && a.cfg.DialHost != nil {
		// A server that cannot list its hosts (an older one) is listed alone.
		if l, err := a.cfg.Hosts(ctx); err == nil {
			hosts = &l
		}
	}
	if hosts != nil {
		var err error
		if out, err = a.listHosts(ctx, s, *hosts); err != nil {
			return listOut{}, "", err
		}
	} else {
		ts, err := a.listOn(ctx, s, "")
		if err != nil {
			return listOut{}, "", err
		}
		out.Terminals = append(out.Terminals, ts...)
	}
	var b strings.Builder
	for _, u := range out.Unreachable {
		fmt.Fprintf(&b, "host %s: %s\n", u.Host, u.Error)
	}
	if len(out.Terminals) == 0 {
		return out, b.String() + "No terminals yet: open one with open_terminal.", nil
	}
	for _, t := range out.Terminals {
		if t.Host != "" {
			fmt.Fprintf(&b, "[%s] ", t.Host)
		}
		fmt.Fprintf(&b, "%s %q %s", t.ID, t.Title, t.State)
		if t.RunningCommand != "" {
			fmt.Fprintf(&b, ", running %q", clip(t.RunningCommand, 60))
		}
		fmt.Fprintf(&b, ", controlled by %s\n", t.ControlledBy)
	}
	return out, strings.TrimSuffix(b.String(), "\n"), nil
}

// describe builds a Terminal from its catalogue entry and, when the session
// follows it, its state.
func (s *session) describe(c *client.Client, info ahp.TerminalInfo) Terminal {
	id := ahp.TerminalIDOf(info.Resource)
	t := Terminal{Host: s.host, ID: id, Title: info.Title, State: info.Lifecycle.Status, ExitCode: info.Lifecycle.ExitCode,
		ControlledBy: s.holderText(c, info.Resource, info.Claim), Watchers: []string{}}
	if t.State == "" {
		t.State = ahp.StatusRunning
	}
	if base := s.linkBase(c); base != nil {
		t.URL = client.TerminalURL(base, id)
	}
	for _, m := range Presence(c)[info.Resource] {
		t.Watchers = append(t.Watchers, m.Name)
	}
	if st, ok := c.Terminal(info.Resource); ok {
		t.Cwd = strings.TrimPrefix(st.Cwd, "file://")
		t.ShellIntegration = st.SupportsCommandDetection != nil && *st.SupportsCommandDetection
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.OpenedByYou = s.opened[info.Resource]
	if tr := s.terms[info.Resource]; tr != nil && tr.cmd != nil {
		if tr.cmd.done {
			t.LastExitCode = tr.cmd.exitCode
		} else {
			t.RunningCommand = tr.cmd.line
		}
	}
	return t
}
