package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/termhost/termhost/ahp"
)

type inputIn struct {
	Terminal string   `json:"terminal" jsonschema:"the terminal's id"`
	Text     string   `json:"text,omitempty" jsonschema:"text to type as it is (no Enter is added)"`
	Keys     []string `json:"keys,omitempty" jsonschema:"named keys pressed after the text, e.g. [\"Enter\"] or [\"Ctrl-C\"]"`
}

type inputOut struct {
	Terminal string `json:"terminal"`
	Bytes    int    `json:"bytes"`
	Cursor   int64  `json:"cursor" jsonschema:"output position before the input: wait_for since this sees the answer"`
}

const maxInputBytes = 64 << 10

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
	s.mu.Lock()
	cursor := t.total
	s.mu.Unlock()
	if err := s.dispatch(ctx, c, uri, ahp.Action{Type: ahp.TerminalInput, Data: data}); err != nil {
		return inputOut{}, "", s.inputRefused(c, uri, err)
	}
	out := inputOut{Terminal: ahp.TerminalIDOf(uri), Bytes: len(data), Cursor: cursor}
	return out, fmt.Sprintf("Sent %d bytes. wait_for or read_terminal shows what follows (since cursor %d).", len(data), cursor), nil
}
