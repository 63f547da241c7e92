package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
)

// terminalURI reads a terminal argument: an id, or a terminal URI.
func terminalURI(arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return "", fmt.Errorf("terminal is required: pass the id open_terminal or list_terminals gave")
	}
	uri := ahp.TerminalURIOf(arg)
	if err := ahp.CheckTerminalURI(uri); err != nil {
		return "", fmt.Errorf("%q is not a terminal id (%v): pass the id open_terminal or list_terminals gave", clip(arg, 80), err)
	}
	return uri, nil
}

// mayUse says whether the session may use a terminal at all: by default
// only those it opened.
func (s *session) mayUse(uri string) error {
	s.mu.Lock()
	opened := s.opened[uri]
	s.mu.Unlock()
	if opened || s.a.cfg.AllowAnyTerminal {
		return nil
	}
	return fmt.Errorf("terminal %s was not opened by this agent, and termhost mcp only lets an agent use its own terminals: "+
		"open one with open_terminal (the user can allow every terminal with termhost mcp --allow-any-terminal)", ahp.TerminalIDOf(uri))
}

// inControl says whether the session may type into a terminal now. A
// terminal it opened must still carry its session claim: once a person
// takes control, the agent only reads until the claim is handed back.
func (s *session) inControl(c *client.Client, uri string) error {
	st, ok := c.Terminal(uri)
	if !ok {
		return fmt.Errorf("terminal %s is not open any more: list_terminals shows the open ones", ahp.TerminalIDOf(uri))
	}
	if st.Lifecycle.Exited() {
		return fmt.Errorf("terminal %s has exited%s: open a new one with open_terminal", ahp.TerminalIDOf(uri), exitText(st.Lifecycle.ExitCode))
	}
	s.mu.Lock()
	opened := s.opened[uri]
	s.mu.Unlock()
	if s.holds(st.Claim) {
		return nil
	}
	if !opened { // --allow-any-terminal: typing is fine unless someone here controls it
		for _, m := range Presence(c)[uri] {
			if m.Control {
				return fmt.Errorf("terminal %s is controlled by %s, and an agent never types into a terminal someone controls: "+
					"read_terminal and wait_for still work; ask the user to leave it or to hand it to you, or open your own with open_terminal",
					ahp.TerminalIDOf(uri), m.Name)
			}
		}
		return nil
	}
	return fmt.Errorf("a person took control of terminal %s (controlled by %s): your input is refused until they hand it back. "+
		"read_terminal still works; wait, or ask the user to hand the terminal back", ahp.TerminalIDOf(uri), s.holderText(c, uri, st.Claim))
}

// confirmControl is inControl after one round trip to the server when the
// mirror says someone else holds the terminal: the mirror may not have the
// latest claim yet (a person handed it back a moment ago), and the answer
// to any request comes after every action the server sent before it.
func (s *session) confirmControl(ctx context.Context, c *client.Client, uri string) error {
	err := s.inControl(c, uri)
	if err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, cerr := c.Presence(ctx); cerr != nil {
		return err
	}
	return s.inControl(c, uri)
}

// holds reports whether claim is this session's.
func (s *session) holds(claim ahp.Claim) bool {
	return claim.Kind == ahp.ClaimSession && claim.Session == s.claim.Session
}

// holderText names who holds a claim, for people and agents, the way
// presence and the workbench name them: "Agent · Claude Code (this
// agent)", "Agent · Cursor" (another agent session), "Owner", "Alice
// Smith", "alice@build1 (CLI)"; "nobody" when the holder is not connected to the terminal
// (anyone who may act takes it by typing).
func (s *session) holderText(c *client.Client, uri string, claim ahp.Claim) string {
	if s.holds(claim) {
		return "Agent · " + s.name + " (this agent)"
	}
	present := Presence(c)[uri]
	if claim.Kind == ahp.ClaimSession {
		for _, m := range present {
			if m.Kind == ext.KindAgent && m.Name != "Agent · "+s.name {
				return m.Name
			}
		}
		return "another agent session"
	}
	for _, m := range present {
		if m.Control {
			if m.Kind == ext.KindCLI {
				return m.Name + " (CLI)" // "alice@build1 (CLI)", as the workbench says
			}
			return m.Name
		}
	}
	return "nobody"
}

// Presence is who is connected to each terminal c may see, by URI:
// termhost's ext.MethodPresence request (subscribers get it as a
// notification; the tools and the CLI ask when they need it). Empty when
// the server does not answer.
func Presence(c *client.Client) map[string][]ext.Member {
	out := map[string][]ext.Member{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lists, err := c.Presence(ctx)
	if err != nil {
		return out
	}
	for _, p := range lists {
		out[p.Channel] = p.Members
	}
	return out
}

func exitText(code *int) string {
	if code == nil {
		return ""
	}
	return fmt.Sprintf(" with code %d", *code)
}

// clip cuts s to n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return ahp.Truncate(s, n) + "…"
}
