package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/termhost/termhost/ahp"
)

type inputIn struct {
	Host     string   `json:"host,omitempty" jsonschema:"the host the terminal is on, as list_terminals names it (default: the server's own)"`
	Terminal string   `json:"terminal" jsonschema:"the terminal's id"`
	Text     string   `json:"text,omitempty" jsonschema:"text to type as it is (no Enter is added)"`
	Keys     []string `json:"keys,omitempty" jsonschema:"named keys pressed after the text, e.g. [\"Enter\"] or [\"Ctrl-C\"]"`
}

func (in inputIn) hostName() string { return in.Host }

type inputOut struct {
	Terminal string `json:"terminal"`
	Bytes    int    `json:"bytes"`
	Cursor   int64  `json:"cursor" jsonschema:"output position before the input: wait_for since this sees the answer"`
}

const maxInputBytes = 64 << 10

// approvalWait is how long send_input waits for a person to approve the
// line it submits (it has no timeout of its own).
const approvalWait = 5 * time.Minute

func (a *Agent) input(ctx context.Context, s *session, in inputIn) (inputOut, string, error) {
	uri, err := terminalURI(in.Terminal)
	if err != nil {
		return inputOut{}, "", err
	}
	var b strings.Builder
	b.WriteString(in.Text)
	for _, k := range in.Keys {
		seq, err := keyBytes(k)
		if err != nil {
			return inputOut{}, "", err
		}
		b.WriteString(seq)
	}
	data := b.String()
	switch {
	case data == "":
		return inputOut{}, "", fmt.Errorf("nothing to send: pass text, keys or both")
	case len(data) > maxInputBytes:
		return inputOut{}, "", fmt.Errorf("input is %d bytes, more than %d: send it in parts, or write a file and use it from a command", len(data), maxInputBytes)
	}
	if err := s.mayUse(uri); err != nil {
		return inputOut{}, "", err
	}
	c, t, err := s.follow(ctx, uri)
	if err != nil {
		return inputOut{}, "", err
	}
	if err := s.confirmControl(ctx, c, uri); err != nil {
		return inputOut{}, "", err
	}
	if secretUp(c, uri) {
		return inputOut{}, "", errors.New(secretRefusal)
	}
	s.mu.Lock()
	cursor := t.total
	line, rest, submits := submitted(t.typed, data)
	s.mu.Unlock()
	if submits && strings.TrimSpace(line) != "" && s.toShell(c, t) {
		// Nothing of it is typed before the line is approved (when it must be).
		v, err := s.approve(ctx, c, uri, line, approvalWait)
		if err != nil {
			return inputOut{}, "", err
		}
		if v.status != "" {
			return inputOut{}, "", errors.New(v.text(line))
		}
	}
	if err := s.dispatch(ctx, c, uri, ahp.Action{Type: ahp.TerminalInput, Data: data}); err != nil {
		var rej *rejectedError
		if errors.As(err, &rej) && strings.Contains(rej.reason, "a person must answer") {
			return inputOut{}, "", errors.New(secretRefusal)
		}
		return inputOut{}, "", s.inputRefused(c, uri, err)
	}
	s.mu.Lock()
	t.typed = rest
	if len(t.typed) > maxInputBytes {
		t.typed = t.typed[len(t.typed)-maxInputBytes:]
	}
	s.mu.Unlock()
	out := inputOut{Terminal: ahp.TerminalIDOf(uri), Bytes: len(data), Cursor: cursor}
	return out, fmt.Sprintf("Sent %d bytes. wait_for or read_terminal shows what follows (since cursor %d).", len(data), cursor), nil
}
