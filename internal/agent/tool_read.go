package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/termhost/termhost/ahp"
)

type readIn struct {
	Host     string `json:"host,omitempty" jsonschema:"the host the terminal is on, as list_terminals names it (default: the server's own)"`
	Terminal string `json:"terminal" jsonschema:"the terminal's id"`
	Mode     string `json:"mode,omitempty" jsonschema:"screen (default): what the terminal shows now; output: the output since a cursor as plain text"`
	Since    *int64 `json:"since,omitempty" jsonschema:"mode output: the cursor a previous call returned (default: the last 8 KiB); 0 reads from the oldest output kept"`
	MaxBytes int    `json:"maxBytes,omitempty" jsonschema:"the most bytes of text in the result (default 16384, from 2048 to 131072): longer output comes in pages, each result's cursor is where the next page starts"`
}

func (in readIn) hostName() string { return in.Host }

func (in readIn) limit() int { return clampMaxBytes(in.MaxBytes) }

type readOut struct {
	Terminal       string   `json:"terminal"`
	Mode           string   `json:"mode"`
	Lines          []string `json:"lines,omitempty" jsonschema:"mode screen: the screen's rows (the bottom ones when they are longer than maxBytes)"`
	Cols           int      `json:"cols,omitempty"`
	Rows           int      `json:"rows,omitempty"`
	AltScreen      bool     `json:"altScreen,omitempty" jsonschema:"a full-screen program (editor, pager) is showing"`
	Text           string   `json:"text,omitempty" jsonschema:"mode output: the output as plain text, one page: the texts of the pages one after the other are the whole output's"`
	DroppedBytes   int64    `json:"droppedBytes,omitempty" jsonschema:"output before the cursor no longer kept"`
	Simplified     bool     `json:"simplified,omitempty" jsonschema:"mode output: rendering the output as a terminal would took too long: part of it is shown with its escape sequences stripped"`
	Truncated      bool     `json:"truncated,omitempty" jsonschema:"the result stops short of maxBytes' worth: mode output, more output follows (read on with since set to cursor); mode screen, the top rows are left out"`
	RemainingBytes int64    `json:"remainingBytes,omitempty" jsonschema:"mode output: how many bytes of output follow the cursor"`
	Cursor         int64    `json:"cursor" jsonschema:"mode output: where this page ends, pass it as since to read on; mode screen: the output position now"`
	RunningCommand string   `json:"runningCommand,omitempty"`
}

// defaultReadBytes is what mode output returns without a cursor.
const defaultReadBytes = 8 << 10

func (a *Agent) read(ctx context.Context, s *session, in readIn) (readOut, string, error) {
	uri, err := terminalURI(in.Terminal)
	if err != nil {
		return readOut{}, "", err
	}
	maxBytes, err := maxBytesOf(in.MaxBytes)
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
	budget := maxBytes - noteBytes
	leftOut := 0 // mode screen: top rows left out
	out := readOut{Terminal: ahp.TerminalIDOf(uri), Mode: in.Mode}
	switch in.Mode {
	case "", "screen":
		out.Mode = "screen"
		scr, err := c.Screen(ctx, uri)
		if err != nil {
			return readOut{}, "", fmt.Errorf("%w (mode output reads the output instead)", s.a.explain(err))
		}
		out.Cols, out.Rows, out.AltScreen = scr.Cols, scr.Rows, scr.AltScreen
		lines := scr.Lines
		for len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		out.Lines, out.Truncated = bottomRows(lines, budget)
		leftOut = len(lines) - len(out.Lines)
		s.mu.Lock()
		out.Cursor = t.total
		s.mu.Unlock()
	case "output":
		s.mu.Lock()
		cursor := t.total - defaultReadBytes
		if in.Since != nil {
			cursor = *in.Since
		}
		cursor = min(max(cursor, 0), t.total)
		raw, dropped := t.since(cursor)
		if in.Since == nil {
			dropped = 0
		}
		start := t.total - int64(len(raw)) // raw is the output's end
		rawText := string(raw)
		s.mu.Unlock()
		out.DroppedBytes = dropped
		rctx, cancel := context.WithTimeout(ctx, a.cfg.RenderBudget)
		var n int
		out.Text, n, out.Simplified = renderPage(rctx, rawText, budget)
		cancel()
		out.Cursor = start + int64(n)
		out.RemainingBytes = int64(len(rawText) - n)
		out.Truncated = out.RemainingBytes > 0
	default:
		return readOut{}, "", fmt.Errorf("mode %q is not known: use screen or output", clip(in.Mode, 40))
	}
	s.mu.Lock()
	if r := t.running(); r != nil {
		out.RunningCommand = r.line
	}
	s.mu.Unlock()
	if out.Mode == "screen" {
		text := strings.Join(out.Lines, "\n")
		if out.Truncated {
			text = fmt.Sprintf("[The top %d rows are left out (maxBytes): mode output reads the output in pages.]\n", leftOut) + text
		}
		return out, text, nil
	}
	text := out.Text
	if out.DroppedBytes > 0 {
		text = fmt.Sprintf("[%d earlier bytes are no longer kept]\n", out.DroppedBytes) + text
	}
	if out.Truncated {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += fmt.Sprintf("[Page cut at maxBytes: %d more bytes of output follow. read_terminal with mode output and since %d reads on.]", out.RemainingBytes, out.Cursor)
	}
	if out.Simplified {
		text += "\n" + simplifiedNote
	}
	return out, text, nil
}

// bottomRows is the bottom rows of a screen whose text (the rows and
// their line ends) fits in limit bytes, and whether rows were left out.
func bottomRows(lines []string, limit int) ([]string, bool) {
	size, i := 0, len(lines)
	for i > 0 && size+len(lines[i-1])+1 <= limit {
		size += len(lines[i-1]) + 1
		i--
	}
	if i == len(lines) && i > 0 { // the last row alone is longer than the limit: its end
		last, _ := tailText(lines[i-1], limit)
		return []string{last}, true
	}
	return lines[i:], i > 0
}
