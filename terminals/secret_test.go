package terminals

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
)

// secretMeta reports whether uri's catalogue entry has the secret prompt key.
func secretMeta(m *Manager, uri string) bool {
	for _, info := range m.Terminals() {
		if info.Resource == uri {
			return strings.Contains(string(info.Meta), `"`+MetaSecretPrompt+`":true`)
		}
	}
	return false
}

// TestSecretPrompt: a program reading without echo (read -s, stty -echo,
// Python's getpass) raises the catalogue's secret prompt on an agent's
// terminal; the agent's input is refused meanwhile, a person's goes in;
// the key leaves once the program is done. The shell's own prompt (its
// line editor turns echo off too) never counts.
func TestSecretPrompt(t *testing.T) {
	for _, tc := range []struct{ name, command, want string }{
		{"read -s", `read -s -p 'Password: ' pw; echo got ${#pw}`, "got 7"},
		{"stty -echo", `stty -echo; read pw; stty echo; echo got ${#pw}`, "got 7"},
		{"getpass", `python3 -c 'import getpass; print("got", len(getpass.getpass()))'`, "got 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			m := testManager(t, Config{})
			defer m.Close()
			uri := "ahp-terminal:/secret"
			session := ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/termhost-mcp/x", Chat: "ahp-chat:/termhost-mcp/x"}
			if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &session}); err != nil {
				t.Fatal(err)
			}
			rec := newRecorder("agent")
			if _, err := m.Subscribe(rec, uri); err != nil {
				t.Fatal(err)
			}
			agent := Policy{TakeClaim: true, Agent: true}
			owner := Policy{TakeClaim: true}
			if got := m.Dispatch(rec, ahp.Origin{ClientID: "owner", ClientSeq: 1}, uri, input(t, "echo re''ady\r"), owner); got != Accepted {
				t.Fatalf("the owner's echo = %v, want Accepted", got)
			}
			if err := rec.waitFor(ctx, "\rready\r\n"); err != nil {
				t.Fatal(err)
			}
			if m.checkSecrets() == 0 {
				t.Fatal("the agent's terminal is not watched")
			}
			if m.SecretPrompt(uri) || secretMeta(m, uri) {
				t.Fatal("the shell's prompt counts as a secret prompt")
			}
			if got := m.Dispatch(rec, ahp.Origin{ClientID: "agent", ClientSeq: 1}, uri, input(t, tc.command+"\r"), agent); got != Accepted {
				t.Fatalf("the agent's command = %v, want Accepted", got)
			}
			poll.Until(t, 20*time.Second, "the secret prompt in the catalogue", func() bool { return secretMeta(m, uri) })
			if got := m.Dispatch(rec, ahp.Origin{ClientID: "agent", ClientSeq: 2}, uri, input(t, "hunter2\r"), agent); got != Rejected {
				t.Fatalf("the agent's answer = %v, want Rejected", got)
			}
			if err := rec.waitFor(ctx, secretRefusal); err != nil {
				t.Fatal(err)
			}
			if got := m.Dispatch(rec, ahp.Origin{ClientID: "owner", ClientSeq: 2}, uri, input(t, "hunter2\r"), owner); got != Accepted {
				t.Fatalf("the owner's answer = %v, want Accepted", got)
			}
			if err := rec.waitFor(ctx, tc.want); err != nil {
				t.Fatal(err)
			}
			poll.Until(t, 20*time.Second, "the secret prompt gone", func() bool { return !secretMeta(m, uri) && !m.SecretPrompt(uri) })
			rec.mu.Lock()
			out := rec.output.String()
			rec.mu.Unlock()
			if strings.Contains(out, "hunter2") {
				t.Errorf("the secret was echoed:\n%q", out)
			}
		})
	}
}

// TestCloseTwice: Close may run twice (an e2e restart closes the manager,
// then the test server's cleanup does again); the second is a no-op.
func TestCloseTwice(t *testing.T) {
	m := testManager(t, Config{})
	m.Close()
	m.Close()
}
