package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/termhost/termhost/ahp"
)

type readIn struct {
	Terminal string `json:"terminal" jsonschema:"the terminal's id"`
	Mode     string `json:"mode,omitempty" jsonschema:"screen (default): what the terminal shows now; output: the output since a cursor as plain text"`
	Since    *int64 `json:"since,omitempty" jsonschema:"mode output: the cursor a previous call returned (default: the last 8 KiB)"`
}

type readOut struct {
	Terminal       string   `json:"terminal"`
	Mode           string   `json:"mode"`
	Lines          []string `json:"lines,omitempty" jsonschema:"mode screen: the screen's rows"`
	Cols           int      `json:"cols,omitempty"`
	Rows           int      `json:"rows,omitempty"`
	AltScreen      bool     `json:"altScreen,omitempty" jsonschema:"a full-screen program (editor, pager) is showing"`
	Text           string   `json:"text,omitempty" jsonschema:"mode output: the output as plain text"`
	DroppedBytes   int64    `json:"droppedBytes,omitempty" jsonschema:"output before the cursor no longer kept"`
	Simplified     bool     `json:"simplified,omitempty" jsonschema:"mode output: rendering the output as a terminal would took too long: part of it is shown with its escape sequences stripped"`
	Cursor         int64    `json:"cursor" jsonschema:"output position now: pass it as since next time"`
	RunningCommand string   `json:"runningCommand,omitempty"`
}

// defaultReadBytes is what mode output returns without a cursor.
const defaultReadBytes = 8 << 10

func (a *Agent) read(ctx context.Context, s *session, in readIn) (readOut, string, error) {
	uri, err := terminalURI(in.Terminal)
	if err != nil {
		return readOut{}, "", err
	}
	if err := s.mayUse(uri); err != nil {
		return readOut{}, "", err
	}
	c, t, err := s.follow(ctx, uri)
	if err != nil {
		return readOut{}, "", err
	}
	out := readOut{Terminal: ahp.TerminalIDOf(uri), Mode: in.Mode}
	switch in.Mode {
	case "", "screen":
		out.Mode = "screen"
		scr, err := c.Screen(ctx, uri)
		if err != nil {
			return readOut{}, "", fmt.Errorf("%w (mode output reads the output instead)", s.a.explain(err))
		}
		out.Cols, out.Rows, out.AltScreen, out.Lines = scr.Cols, scr.Rows, scr.AltScreen, scr.Lines
	case "output":
		s.mu.Lock()
		cursor := t.total - defaultReadBytes
		if in.Since != nil {
			cursor = *in.Since
		}
		raw, dropped := t.since(max(cursor, 0))
		if in.Since == nil {
			dropped = 0
		}
		rawText := string(raw)
		s.mu.Unlock()
		out.DroppedBytes = dropped
		rctx, cancel := context.WithTimeout(ctx, a.cfg.RenderBudget)
		out.Text, out.Simplified = Plain(rctx, rawText)
		cancel()
	default:
		return readOut{}, "", fmt.Errorf("mode %q is not known: use screen or output", clip(in.Mode, 40))
	}
	s.mu.Lock()
	out.Cursor = t.total
	if r := t.running(); r != nil {
		out.RunningCommand = r.line
	}
	s.mu.Unlock()
	if out.Mode == "screen" {
		lines := out.Lines
		for len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		return out, strings.Join(lines, "\n"), nil
	}
	text := out.Text
	if out.DroppedBytes > 0 {
		text = fmt.Sprintf("[%d earlier bytes are no longer kept]\n", out.DroppedBytes) + text
	}
	if out.Simplified {
		text += "\n" + simplifiedNote
	}
	return out, text, nil
}
