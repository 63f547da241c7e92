package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// person is the owner in a browser, as an AHP client.
func (r *rig) person(t *testing.T, id string) *client.Client {
	t.Helper()
	c, err := client.Dial(t.Context(), r.ts.URL, client.Options{Token: r.ts.Token, InitialSubscriptions: []string{ahp.RootURI, ahp.TerminalURI(id)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// cliName is how presence names a termhost client of this user: user@host.
func cliName() string {
	u, _ := user.Current()
	host, _ := os.Hostname()
	return u.Username + "@" + host
}

// setClaim dispatches a claim change and waits until the person sees it.
func setClaim(t *testing.T, c *client.Client, uri string, claim ahp.Claim) {
	t.Helper()
	if _, err := c.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: claim}); err != nil {
		t.Fatal(err)
	}
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		ev, err := c.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for the claim change: %v", err)
		}
		if ev.Kind == client.EventAction && ev.Envelope.Action.Type == ahp.TerminalClaimed && ev.Envelope.Action.Claim == claim {
			return
		}
	}
}

func TestPersonTakesControl(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	uri := ahp.TerminalURI(id)
	p := r.person(t, id)
	st, _ := p.Terminal(uri)
	agentClaim := st.Claim
	if agentClaim.Kind != ahp.ClaimSession || !strings.HasPrefix(agentClaim.Session, "ahp-session:") || agentClaim.Chat == "" {
		t.Fatalf("the agent's terminal has claim %+v, want a session claim", agentClaim)
	}

	// The owner takes control (the owner override) while a command runs.
	r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo before; sleep 600", "timeoutSeconds": 1})
	// The call has returned; its claim's narrowing (unbindCall, dispatched
	// as it returned) must have reached the server before the person takes
	// control, or that late narrowing would be a second change of the claim.
	for {
		if c, _ := r.ts.Manager.Claim(uri); c.Kind == ahp.ClaimSession && c.ToolCallID == "" {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("the agent's claim was never narrowed back after run_command")
		case <-time.After(10 * time.Millisecond):
		}
	}
	setClaim(t, p, uri, ahp.ClientClaim(p.ClientID()))
	r.controlledBy(t, cliName()+" (CLI)")
	r.fails(t, "send_input", map[string]any{"terminal": id, "keys": []string{"Ctrl-C"}}, "a person took control")
	r.fails(t, "run_command", map[string]any{"terminal": id, "command": "echo hi"}, "a person took control")
	if _, text := r.ok(t, "read_terminal", map[string]any{"terminal": id}); !strings.Contains(text, "before") {
		t.Fatalf("reading while a person controls the terminal: %q", text)
	}
	// The person interrupts and hands the terminal back.
	if _, err := p.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "\x03"}); err != nil {
		t.Fatal(err)
	}
	setClaim(t, p, uri, ahp.Claim{Kind: ahp.ClaimSession, Session: agentClaim.Session, Chat: agentClaim.Chat})
	r.controlledBy(t, "Agent · test-agent (this agent)")
	if out, _ := r.ok(t, "wait_for", map[string]any{"terminal": id}); out["status"] != "finished" || num(out["exitCode"]) != 130 {
		t.Fatalf("the command the person interrupted: %v", out)
	}
	out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo after"})
	if out["output"] != "after" {
		t.Fatalf("after the hand-back: %v", out)
	}
}

func TestControlTakenMidCommand(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	uri := ahp.TerminalURI(id)
	p := r.person(t, id)
	done := make(chan string, 1)
	go func() {
		_, text, isErr, err := r.try(t, "run_command", map[string]any{"terminal": id, "command": "echo working; sleep 600", "timeoutSeconds": 120})
		done <- fmt.Sprint(isErr, " ", text, err)
	}()
	// Wait for the command to run, bound to the tool call.
	for seen := ""; ; {
		st, _ := p.Terminal(uri)
		if st.Claim.ToolCallID != "" && strings.Contains(seen, "working\r\n") {
			break
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		ev, err := p.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for the command to run (seen %q): %v", seen, err)
		}
		if ev.Kind == client.EventAction && ev.Envelope.Action.Type == ahp.TerminalData {
			seen += ev.Envelope.Action.Data
		}
	}
	setClaim(t, p, uri, ahp.ClientClaim(p.ClientID()))
	if got := <-done; !strings.HasPrefix(got, "true ") || !strings.Contains(got, "a person took control") || !strings.Contains(got, "working") {
		t.Fatalf("run_command when a person takes over mid-command: %s", got)
	}
}

func TestTerminalKilledMidWait(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	p := r.person(t, id)
	done := make(chan map[string]any, 1)
	go func() {
		out, text, _, err := r.try(t, "run_command", map[string]any{"terminal": id, "command": "sleep 600", "timeoutSeconds": 120})
		if out == nil {
			out = map[string]any{"text": text, "err": fmt.Sprint(err)}
		}
		done <- out
	}()
	r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": "sleep 600", "since": 0})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := p.Call(ctx, ahp.MethodDisposeTerminal, ahp.ChannelParams{Channel: ahp.TerminalURI(id)}); err != nil {
		t.Fatal(err)
	}
	if out := <-done; out["status"] != "terminal_exited" {
		t.Fatalf("run_command when the terminal is killed: %v", out)
	}
	r.fails(t, "run_command", map[string]any{"terminal": id, "command": "true"}, "no terminal")
}

func TestManyParallelCalls(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	ids := []string{r.open(t), r.open(t), r.open(t)}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 36 {
		wg.Go(func() {
			id := ids[i%len(ids)]
			var out map[string]any
			var text string
			var isErr bool
			switch i % 4 {
			case 0, 1:
				out, text, isErr, _ = r.try(t, "run_command", map[string]any{"terminal": id, "command": fmt.Sprintf("echo n%d", i)})
				if isErr {
					if !strings.Contains(text, "in progress") && !strings.Contains(text, "still running") {
						errs <- fmt.Sprintf("run %d: unexpected error %q", i, text)
					}
				} else if out["output"] != fmt.Sprintf("n%d", i) {
					errs <- fmt.Sprintf("run %d: %v", i, out)
				}
			case 2:
				if _, text, isErr, _ = r.try(t, "read_terminal", map[string]any{"terminal": id, "mode": "output"}); isErr {
					errs <- fmt.Sprintf("read %d: %s", i, text)
				}
			case 3:
				if out, text, isErr, _ = r.try(t, "list_terminals", nil); isErr || out == nil || len(out["terminals"].([]any)) != len(ids) {
					errs <- fmt.Sprintf("list %d: %s %v", i, text, out)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, id := range ids {
		r.ok(t, "close_terminal", map[string]any{"terminal": id})
	}
	if n := len(r.ts.Manager.Terminals()); n != 0 {
		t.Fatalf("%d terminals left after closing them all", n)
	}
}

// controlledBy polls list_terminals, as an agent would, until its one
// terminal's controlledBy is want: the holder named as presence and the
// workbench name it, the agent itself included, and the text says so too.
func (r *rig) controlledBy(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		out, text := r.ok(t, "list_terminals", nil)
		got := out["terminals"].([]any)[0].(map[string]any)["controlledBy"].(string)
		if got == want {
			if !strings.Contains(text, ", controlled by "+want) {
				t.Errorf("list_terminals text %q does not say it is controlled by %s", text, want)
			}
			return
		}
		select {
		case <-deadline:
			t.Fatalf("controlledBy %q, want %q", got, want)
		case <-time.After(20 * time.Millisecond): // polling a tool, like an agent
		}
	}
}

// TestConnectionLostMidWait: the agent's AHP connection drops while it
// waits for a command; the client reconnects and the wait ends with the
// command's result, output included.
func TestConnectionLostMidWait(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	p := r.person(t, id)
	done := make(chan map[string]any, 1)
	go func() {
		out, text, _, err := r.try(t, "run_command", map[string]any{"terminal": id, "command": "echo begun; read -t 600 x; echo ended", "timeoutSeconds": 120})
		if out == nil {
			out = map[string]any{"text": text, "err": fmt.Sprint(err)}
		}
		done <- out
	}()
	// Once the command runs, cut the network, then let it finish.
	for seen := ""; !strings.Contains(seen, "begun\r\n"); {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		ev, err := p.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for the command to run (seen %q): %v", seen, err)
		}
		if ev.Kind == client.EventAction && ev.Envelope.Action.Type == ahp.TerminalData {
			seen += ev.Envelope.Action.Data
		}
	}
	r.proxy.Cut()
	if _, err := p.Dispatch(t.Context(), ahp.TerminalURI(id), ahp.Action{Type: ahp.TerminalInput, Data: "go\r"}); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if out["status"] != "finished" || num(out["exitCode"]) != 0 || !strings.Contains(fmt.Sprint(out["output"]), "ended") {
		t.Fatalf("run_command across a lost connection: %v", out)
	}
}

// personsShell is a terminal a person opened in the workbench (claimed by
// their client), with its shell integration reported.
func (r *rig) personsShell(t *testing.T, clientID string) (*client.Client, string) {
	t.Helper()
	c, err := client.Dial(t.Context(), r.ts.URL, client.Options{Token: r.ts.Token, ClientID: clientID, InitialSubscriptions: []string{ahp.RootURI}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	id := client.RandomID(6)
	uri := ahp.TerminalURI(id)
	claim := ahp.ClientClaim(clientID)
	if _, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: uri, Claim: &claim}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribe(t.Context(), uri); err != nil {
		t.Fatal(err)
	}
	for {
		if st, _ := c.Terminal(uri); st.SupportsCommandDetection != nil && *st.SupportsCommandDetection {
			return c, id
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		_, err := c.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for the person's shell integration: %v", err)
		}
	}
}

// TestPersonsTerminalRefused: by default an agent does not see
// or touch a terminal a person opened: list_terminals leaves it out, and
// every tool that names it fails with a tool error saying why and what to
// do. The terminal is left as it was.
func TestPersonsTerminalRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	_, id := r.personsShell(t, "persons-tab")
	uri := ahp.TerminalURI(id)
	if out, text := r.ok(t, "list_terminals", nil); len(out["terminals"].([]any)) != 0 {
		t.Fatalf("list_terminals shows a person's terminal to the agent: %s", text)
	}
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{
		{"run_command", map[string]any{"terminal": id, "command": "echo agent was here > /dev/null"}},
		{"send_input", map[string]any{"terminal": id, "text": "echo agent was here", "keys": []string{"Enter"}}},
		{"read_terminal", map[string]any{"terminal": id}},
		{"wait_for", map[string]any{"terminal": id, "pattern": "anything", "timeoutSeconds": 1}},
		{"close_terminal", map[string]any{"terminal": id}},
	} {
		text := r.fails(t, tt.tool, tt.args, "was not opened by this agent")
		if !strings.Contains(text, "open one with open_terminal") || !strings.Contains(text, "--allow-any-terminal") {
			t.Errorf("%s on a person's terminal: %q, want it to say what the agent and the user can do", tt.tool, text)
		}
	}
	if claim, ok := r.ts.Manager.Claim(uri); !ok || claim != ahp.ClientClaim("persons-tab") || !r.ts.Manager.Exists(uri) {
		t.Fatalf("the person's terminal after the agent's attempts: claim %+v (there %v), want it open and theirs", claim, ok)
	}
}

// TestAllowAnyTerminal: with --allow-any-terminal the agent
// sees a person's terminal and reads it; it types into it only when no
// person holds it: while its person is there, the server refuses the input
// and the tool says who holds the terminal; once the person has left, the
// agent runs commands in it.
func TestAllowAnyTerminal(t *testing.T) {
	t.Parallel()
	r := newRig(t, true)
	p, id := r.personsShell(t, "persons-tab")
	if _, err := p.Dispatch(t.Context(), ahp.TerminalURI(id), ahp.Action{Type: ahp.TerminalInput, Data: "echo typed-by-the-person\r"}); err != nil {
		t.Fatal(err)
	}
	out, text := r.ok(t, "list_terminals", nil)
	terms := out["terminals"].([]any)
	if len(terms) != 1 || terms[0].(map[string]any)["id"] != id || terms[0].(map[string]any)["openedByYou"] != false {
		t.Fatalf("list_terminals with --allow-any-terminal: %s %v, want the person's terminal", text, out)
	}
	r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": "(?m)^typed-by-the-person", "since": 0})
	if _, text := r.ok(t, "read_terminal", map[string]any{"terminal": id}); !strings.Contains(text, "typed-by-the-person") {
		t.Fatalf("read_terminal of the person's terminal: %q", text)
	}
	text = r.fails(t, "run_command", map[string]any{"terminal": id, "command": "echo agent"}, id)
	if !strings.Contains(text, "an agent never types into a terminal someone controls") || !strings.Contains(text, "open_terminal") {
		t.Fatalf("run_command while the person holds their terminal: %q", text)
	}
	_ = p.Close()
	for r.ts.Manager.Present("persons-tab") {
		select {
		case <-t.Context().Done():
			t.Fatal("the person's connection never left")
		case <-time.After(10 * time.Millisecond):
		}
	}
	out, text = r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo agent"})
	if out["output"] != "agent" || num(out["exitCode"]) != 0 {
		t.Fatalf("run_command once the person left: %v (%s)", out, text)
	}
}
