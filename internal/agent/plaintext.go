package agent

import (
	"context"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"

	"github.com/termhost/termhost/internal/vtbound"
)

// Plain text is what a terminal shows, not the bytes a program wrote: a
// carriage return rewrites the line, a progress bar ends as its last frame,
// colours and cursor moves are applied, not stripped. The bytes go through a
// real emulator (charmbracelet/x/vt, the one the server's screen model uses)
// a few lines at a time, and each line that scrolls off its screen is taken
// as final.
//
// vt moves every cell of its screen on each scroll, erase or line
// insertion: a KiB of such sequences costs it about 0.1 s here (a KiB of
// ordinary lines about 8 ms), and a count it works through one at a time
// (ESC[999999999b) would take it hours. So its counts are clamped
// to the screen (vtbound), and it works to a deadline: it is fed in small
// pieces and the clock is read between them; past the budget the rest
// is rendered by strip, in one linear pass, and the caller says the text
// was simplified.
const (
	plainCols = 240 // wide enough that few lines wrap; memory grows with it
	plainRows = 48
	// plainPiece and plainPieceCost bound what is written between two
	// reads of the clock and of the scrollback (see pieceLen): some ms of
	// vt even for the costliest bytes, and no line scrolls past
	// plainScrollback unread.
	plainPiece      = 256
	plainPieceCost  = 32
	plainScrollback = plainPieceCost + plainRows + 1 + plainPiece/plainCols + 8
)

// Budgets of the emulator (Config.RenderBudget): a read gets all of it; a
// call with a timeout (wait_for, run_command) a tenth of the timeout, at
// least minRenderBudget and at most all of it, for each rendering of
// output. A rendering starts before the call's timeout, so the call
// returns at most about a budget after it.
const (
	defaultRenderBudget = 2 * time.Second
	minRenderBudget     = 250 * time.Millisecond
)

// renderBudget is the emulator's budget for each rendering within a call
// whose timeout is timeout.
func (a *Agent) renderBudget(timeout time.Duration) time.Duration {
	limit := a.cfg.RenderBudget
	return min(max(timeout/10, min(minRenderBudget, limit)), limit)
}

// simplifiedNote tells the agent that some output was rendered by strip.
const simplifiedNote = "[Rendering this output as a terminal would took too long: part of it is shown with its escape sequences stripped (no cursor moves, no screen drawing).]"

// Plain renders terminal output as the text a person would read. The
// emulator stops once ctx ends (its deadline is the budget; a cancelled
// call ends it too); the rest of raw is then rendered by strip and
// simplified is true.
func Plain(ctx context.Context, raw string) (text string, simplified bool) {
	text, simplified = plainPage(ctx, raw)
	return strings.TrimRight(text, "\n"), simplified
}

// plainPage is Plain keeping the text's final line ends: output ending
// with a line feed renders as text ending with a line end, and the text of
// output cut after a line feed, rendered piece by piece, is the pieces'
// texts one after the other (when nothing moves the cursor back across a
// cut: each piece is rendered on a terminal of its own).
func plainPage(ctx context.Context, raw string) (text string, simplified bool) {
	if raw == "" {
		return "", false
	}
	e := vt.NewEmulator(plainCols, plainRows)
	e.SetScrollbackSize(plainScrollback)
	vtbound.Clamp(e)
	// vt answers queries into a pipe nobody reads: closed, the answers
	// fail at once instead of blocking the write.
	if pw, ok := e.InputPipe().(*io.PipeWriter); ok {
		_ = pw.Close()
	}
	var out strings.Builder
	for raw != "" && !simplified {
		n := pieceLen(raw)
		_, _ = e.WriteString(raw[:n])
		raw = raw[n:]
		sb := e.Scrollback()
		for i := range sb.Len() {
			writeLine(&out, sb.Line(i))
		}
		e.ClearScrollback()
		simplified = raw != "" && ctx.Err() != nil
	}
	// The screen's rows down to the cursor's or the last one written,
	// whichever is lower; the cursor's row, empty at its start, is where
	// the text ends after a line feed.
	rows := make([]string, 0, plainRows)
	last := -1
	for y := range e.Height() {
		l := make(uv.Line, e.Width())
		for x := range l {
			if c := e.CellAt(x, y); c != nil {
				l[x] = *c
			}
		}
		s := strings.TrimRight(l.String(), " ")
		rows = append(rows, s)
		if s != "" || y <= e.CursorPosition().Y {
			last = y
		}
	}
	for i, s := range rows[:last+1] {
		if i > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(s)
	}
	if simplified {
		// The rest goes on from a line start: after the line feed that
		// ended the last piece, on a line of its own otherwise.
		if last >= 0 && rows[last] != "" {
			out.WriteByte('\n')
		}
		out.WriteString(strip(raw))
	}
	return out.String(), simplified
}

// pieceLen is how much of s to write before the next read of the clock and
// the scrollback: at most about plainPiece bytes costing at most
// plainPieceCost, where a line feed or an escape sequence costs one (about
// a scroll of the screen: vt moves every cell) and a REP the rows it can
// fill. When the bytes run out first, the piece ends after a line feed or
// before an escape sequence if it holds one, so that strip starts the rest
// where a line or a sequence starts.
func pieceLen(s string) int {
	cost, i := 0, 0
	for i < len(s) && i < plainPiece {
		switch s[i] {
		case '\n', '\v', '\f':
			cost++
			i++
		case 0x1b:
			n, final, _ := escapeLen(s[i:])
			cost++
			if final == 'b' {
				cost += plainRows
			}
			i += n
		default:
			i++
			continue
		}
		if cost >= plainPieceCost {
			return i
		}
	}
	if i >= len(s) {
		return len(s)
	}
	if j := strings.LastIndexByte(s[:i], '\n'); j >= 0 {
		return j + 1
	}
	if j := strings.LastIndexByte(s[:i], 0x1b); j > 0 {
		return j
	}
	return i
}

func writeLine(out *strings.Builder, l uv.Line) {
	out.WriteString(strings.TrimRight(l.String(), " "))
	out.WriteByte('\n')
}

// strip renders terminal output cheaply, in one pass over it: escape
// sequences are dropped; a carriage return, a backspace, a tab, an erase in
// line and a cursor move within what the line holds act on the current
// line; a line feed ends it; other controls and invalid bytes are dropped.
// No other cursor moves, no wrapping, no screen: what a terminal would draw
// elsewhere stays where it was written.
func strip(raw string) string {
	var out strings.Builder
	out.Grow(len(raw))
	var line []rune
	col := 0
	put := func(r rune) {
		if col < len(line) {
			line[col] = r
		} else {
			line = append(line, r)
		}
		col++
	}
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == 0x1b:
			n, final, param := escapeLen(raw[i:])
			i += n
			switch final {
			case 'K': // erase in line
				if param == 0 {
					line = line[:col]
				} else {
					line, col = line[:0], 0
				}
			case 'C': // cursor moves within the line written so far
				col = min(col+max(param, 1), len(line))
			case 'D':
				col = max(col-max(param, 1), 0)
			case 'G', '`':
				col = min(max(param, 1)-1, len(line))
			}
			continue
		case c == '\n':
			out.WriteString(strings.TrimRight(string(line), " "))
			out.WriteByte('\n')
			line, col = line[:0], 0
		case c == '\r':
			col = 0
		case c == '\b':
			col = max(col-1, 0)
		case c == '\t':
			for put(' '); col%8 != 0; {
				put(' ')
			}
		case c < 0x20 || c == 0x7f:
		case c < utf8.RuneSelf:
			put(rune(c))
		default:
			r, size := utf8.DecodeRuneInString(raw[i:])
			if r != utf8.RuneError || size > 1 {
				put(r)
			}
			i += size
			continue
		}
		i++
	}
	out.WriteString(strings.TrimRight(string(line), " "))
	return out.String()
}

// escapeLen measures the escape sequence at the start of s (s[0] is ESC):
// its length (to the end of s when unfinished; an ESC inside a string
// sequence other than its terminator starts the next sequence), and for a
// CSI sequence its final byte and first parameter (capped).
func escapeLen(s string) (n int, final byte, param int) {
	if len(s) < 2 {
		return len(s), 0, 0
	}
	switch c := s[1]; {
	case c == '[': // CSI: parameters and intermediates, then a final byte
		j, first := 2, true
		for ; j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f; j++ {
			switch d := s[j]; {
			case d == ';' || d == ':':
				first = false
			case first && d >= '0' && d <= '9' && param < 1<<16:
				param = param*10 + int(d-'0')
			}
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1, s[j], param
		}
		return j, 0, 0
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_': // strings: OSC, DCS, SOS, PM, APC
		for j := 2; j < len(s); j++ {
			switch s[j] {
			case 0x07, 0x18, 0x1a: // BEL ends an OSC (xterm: any), CAN and SUB cancel
				return j + 1, 0, 0
			case 0x1b:
				if j+1 < len(s) && s[j+1] == '\\' {
					return j + 2, 0, 0
				}
				return j, 0, 0
			}
		}
		return len(s), 0, 0
	default: // intermediates, then a final byte
		j := 1
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			return j + 1, 0, 0
		}
		return max(j, 1), 0, 0
	}
}
