package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// Terminal is how the tools describe a terminal.
type Terminal struct {
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
}

func (a *Agent) list(ctx context.Context, s *session, _ listIn) (listOut, string, error) {
	c, err := s.conn(ctx)
	if err != nil {
		return listOut{}, "", err
	}
	root, _ := c.Root()
	out := listOut{Terminals: []Terminal{}}
	for _, info := range root.Terminals {
		if s.mayUse(info.Resource) != nil {
			continue
		}
		out.Terminals = append(out.Terminals, s.describe(c, info))
	}
	if len(out.Terminals) == 0 {
		return out, "No terminals yet: open one with open_terminal.", nil
	}
	var b strings.Builder
	for _, t := range out.Terminals {
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
	t := Terminal{ID: id, Title: info.Title, State: info.Lifecycle.Status, ExitCode: info.Lifecycle.ExitCode,
		ControlledBy: s.holderText(c, info.Resource, info.Claim), Watchers: []string{}}
	if t.State == "" {
		t.State = ahp.StatusRunning
	}
	if base := s.a.linkBase(c); base != nil {
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
