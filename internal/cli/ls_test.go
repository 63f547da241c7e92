package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

func TestLsMatchesCatalogue(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t, ahp.RootURI)
	ts.shell(t, c, "one", c.ClientID())
	_, gate, open := newGate(t)
	meta, _ := json.Marshal(map[string][]string{terminals.MetaCommand: {"sh", "-c", gate + "; exit 3"}})
	name := "fails\tbadly\x1b[31m\u202eevil"
	claim := ahp.ClientClaim("someone")
	if _, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: "ahp-terminal:/two",
		Claim: &claim, Name: &name, Meta: meta}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second terminal", func() bool { return len(ts.m.Terminals()) == 2 })
	open()
	nextUntil(t, c, "the second terminal to exit", func(ev client.Event) bool {
		root, _ := ev.State.(ahp.RootState)
		return len(root.Terminals) == 2 && root.Terminals[1].Lifecycle.Exited()
	})
	root, _ := c.Root()

	code, stdout, stderr := call(t, ownerEnv(ts), "ls", "--json")
	if code != 0 {
		t.Fatalf("ls --json: exit %d, %s", code, stderr)
	}
	var got []lsEntry
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("ls --json output %q: %v", stdout, err)
	}
	if len(got) != len(root.Terminals) {
		t.Fatalf("ls --json has %d entries, the catalogue %d:\n%s", len(got), len(root.Terminals), stdout)
	}
	for i, in := range root.Terminals {
		id, _ := ahp.TerminalID(in.Resource)
		want := lsEntry{ID: id, Title: in.Title, State: in.Lifecycle.Status, ExitCode: in.Lifecycle.ExitCode,
			Claim: in.Claim, URL: ts.URL + "/t/" + id}
		g := got[i]
		if g.ID != want.ID || g.Title != want.Title || g.State != want.State || g.Claim != want.Claim || g.URL != want.URL ||
			(g.ExitCode == nil) != (want.ExitCode == nil) || (g.ExitCode != nil && *g.ExitCode != *want.ExitCode) {
			t.Errorf("entry %d = %+v, want %+v", i, g, want)
		}
	}
	if got[0].State != "running" || got[1].State != "exited" || got[1].ExitCode == nil || *got[1].ExitCode != 3 {
		t.Errorf("states = %+v", got)
	}
	if !strings.Contains(stdout, `"exitCode": 3`) || strings.Count(stdout, `"exitCode"`) != 1 {
		t.Errorf("exitCode should appear only for the exited terminal:\n%s", stdout)
	}

	// The table: a header, one row per terminal, control and direction characters dropped.
	code, stdout, _ = call(t, ownerEnv(ts), "ls")
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "CONTROL") {
		t.Fatalf("ls table:\n%s", stdout)
	}
	if !strings.Contains(lines[2], "two") || !strings.Contains(lines[2], "failsbadly[31mevil") || !strings.Contains(lines[2], "exited") ||
		!strings.Contains(lines[2], " 3 ") || strings.Contains(lines[2], "someone") || !strings.Contains(lines[2], ts.URL+"/t/two") {
		t.Errorf("ls row %q", lines[2])
	}

	// No terminals: an empty JSON array.
	empty := newTestServer(t)
	if code, stdout, _ := call(t, ownerEnv(empty), "ls", "--json"); code != 0 || strings.TrimSpace(stdout) != "[]" {
		t.Errorf("ls --json on an empty server = %d, %q", code, stdout)
	}
}

// TestLsPreview: ls --preview prints each terminal's
// current screen as text, from the server's screen model.
func TestLsPreview(t *testing.T) {
	s := testserver.New(t)
	ts := &testServer{Server: s, m: s.Manager}
	c := ts.dial(t, ahp.RootURI)
	id := ts.shell(t, c, "shown", c.ClientID())
	uri := ahp.TerminalURI(id)
	if _, err := c.Subscribe(t.Context(), uri); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "echo on''screen-$((6*7))\r"}); err != nil {
		t.Fatal(err)
	}
	nextUntil(t, c, "the echo", func(client.Event) bool {
		st, _ := c.Terminal(uri)
		return strings.Contains(contentText(st), "onscreen-42")
	})
	code, stdout, stderr := call(t, ownerEnv(ts), "ls", "--preview")
	if code != 0 || !strings.Contains(stdout, "── shown (80×24) ──") || !strings.Contains(stdout, "\nonscreen-42\n") {
		t.Fatalf("ls --preview: exit %d, stdout %q, stderr %q; want the screen of shown with onscreen-42", code, stdout, stderr)
	}
}

// TestLsPreviewSaysWhyNot: terminals without a screen model get, instead
// of a preview, the reason the server gives (not a guess of ls's): once
// when every terminal has the same, else one line per terminal.
func TestLsPreviewSaysWhyNot(t *testing.T) {
	s := testserver.New(t, testserver.Terminals(func(c *terminals.Config) { c.NoScreenModel = true }))
	ts := &testServer{Server: s, m: s.Manager}
	c := ts.dial(t, ahp.RootURI)
	ts.shell(t, c, "one", c.ClientID())
	code, _, stderr := call(t, ownerEnv(ts), "ls", "--preview")
	want := "termhost ls: No preview of one: no screen model: the server keeps no screen models (it was started with --screen-model=false)\n"
	if code != 0 || stderr != want {
		t.Fatalf("ls --preview: exit %d, stderr %q; want %q", code, stderr, want)
	}
	ts.shell(t, c, "two", c.ClientID())
	code, _, stderr = call(t, ownerEnv(ts), "ls", "--preview")
	want = "termhost ls: No previews: no screen model: the server keeps no screen models (it was started with --screen-model=false)\n"
	if code != 0 || stderr != want {
		t.Fatalf("ls --preview, two terminals: exit %d, stderr %q; want %q", code, stderr, want)
	}
}
