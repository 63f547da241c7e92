package terminals

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/terminals/hub"
)

// Secret prompts (docs/protocol.md, "Approvals"): a program that reads
// input it does not echo (sudo, ssh, read -s, getpass) leaves the pty with
// echo off and canonical mode on; a shell's line editor turns both off, so
// its prompt does not count. While a terminal is so, its catalogue entry
// carries ext.MetaSecretPrompt and an agent's input is refused: a person
// must answer.

// MetaSecretPrompt is the catalogue entry's _meta key of a terminal whose
// program waits for a secret.
const MetaSecretPrompt = ext.MetaSecretPrompt

// secretRefusal is the rejection of an agent's input at a secret prompt.
const secretRefusal = "a person must answer this prompt in the terminal"

// secretPoll is how often the terminals an agent session holds (and those
// at a secret prompt) are checked, besides whenever their output goes
// quiet.
const secretPoll = 250 * time.Millisecond

// checkSecret reads the pty's modes (one ioctl) and publishes a change of
// the secret prompt. It reports whether the prompt is up.
func (t *terminal) checkSecret() bool {
	on := false
	if t.proc.Control(func(fd uintptr) {
		tio, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		on = err == nil && tio.Lflag&unix.ECHO == 0 && tio.Lflag&unix.ICANON != 0
	}) != nil {
		on = false
	}
	if t.secret.Swap(on) != on {
		var v any
		if on {
			v = true
		}
		t.m.hub.SetInfoMeta(t.uri, MetaSecretPrompt, v)
		if on {
			t.m.secrets.Kick()
		}
	}
	return on
}

// SecretPrompt reports whether the terminal's program waits for a secret
// (as last checked).
func (m *Manager) SecretPrompt(uri string) bool {
	t := m.live(uri)
	return t != nil && t.secret.Load()
}

// pollSecrets checks, every secretPoll, the terminals an agent session
// holds and those at a secret prompt, until there are none (the worker
// ends; a session claim or a prompt kicks it again) or the manager closes.
func (m *Manager) pollSecrets() {
	timer := time.NewTimer(secretPoll)
	defer timer.Stop()
	for {
		if m.checkSecrets() == 0 {
			return
		}
		timer.Reset(secretPoll)
		select {
		case <-m.secretsStop:
			return
		case <-timer.C:
		}
	}
}

// checkSecrets checks the terminals to watch and returns how many there are.
func (m *Manager) checkSecrets() int {
	m.mu.Lock()
	terms := make([]*terminal, 0, len(m.terms))
	for _, t := range m.terms {
		if t.live {
			terms = append(terms, t)
		}
	}
	m.mu.Unlock()
	n := 0
	for _, t := range terms {
		held := false
		m.hub.Do(func(tx hub.Tx) {
			st, ok := tx.Terminal(t.uri)
			held = ok && st.Claim.Kind == ahp.ClaimSession && !st.Lifecycle.Exited()
		})
		if held || t.secret.Load() {
			n++
			t.checkSecret()
		}
	}
	return n
}

// AtPrompt reports whether the terminal's shell reports its commands
// (shell integration) and runs none now: a line typed there is a command
// line for the shell.
func (m *Manager) AtPrompt(uri string) bool {
	at := false
	m.hub.Do(func(tx hub.Tx) {
		st, ok := tx.Terminal(uri)
		if !ok || st.SupportsCommandDetection == nil || !*st.SupportsCommandDetection || st.Lifecycle.Exited() {
			return
		}
		at = true
		for i := len(st.Content) - 1; i >= 0; i-- {
			if p := st.Content[i]; p.Type == ahp.PartCommand {
				at = p.IsComplete
				break
			}
		}
	})
	return at
}
