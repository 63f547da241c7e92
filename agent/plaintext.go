package agent

import (
	"io"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
)

// Plain text is what a terminal shows, not the bytes a program wrote: a
// carriage return rewrites the line, a progress bar ends as its last frame,
// colours and cursor moves are applied, not stripped. The bytes go through a
// real emulator (charmbracelet/x/vt, the one the server's screen model uses)
// a few lines at a time, and each line that scrolls off its screen is taken
// as final.
const (
	plainCols = 240 // wide enough that few lines wrap; memory grows with it
	plainRows = 48
	// plainPiece bounds what is written between two reads of the
	// scrollback, so that no line scrolls past plainScrollback unread.
	plainPiece      = 2 << 10
	plainPieceLines = 32
	plainScrollback = plainPieceLines + plainPiece/plainCols + plainRows + 8
)

// Plain renders terminal output as the text a person would read.
func Plain(raw string) string {
	if raw == "" {
		return ""
	}
	e := vt.NewEmulator(plainCols, plainRows)
	e.SetScrollbackSize(plainScrollback)
	// vt answers queries into a pipe nobody reads: closed, the answers
	// fail at once instead of blocking the write.
	if pw, ok := e.InputPipe().(*io.PipeWriter); ok {
		_ = pw.Close()
	}
	var out strings.Builder
	for raw != "" {
		n := pieceLen(raw)
		_, _ = e.WriteString(raw[:n])
		raw = raw[n:]
		sb := e.Scrollback()
		for i := range sb.Len() {
			writeLine(&out, sb.Line(i))
		}
		e.ClearScrollback()
	}
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
	for _, s := range rows[:last+1] {
		out.WriteString(s)
		out.WriteByte('\n')
	}
	return strings.TrimRight(out.String(), "\n")
}

// pieceLen is how much of s to write before the next scrollback read: at
// most plainPiece bytes and plainPieceLines newlines.
func pieceLen(s string) int {
	n := min(len(s), plainPiece)
	lines := 0
	for i := range n {
		if s[i] == '\n' {
			lines++
			if lines == plainPieceLines {
				return i + 1
			}
		}
	}
	return n
}

func writeLine(out *strings.Builder, l uv.Line) {
	out.WriteString(strings.TrimRight(l.String(), " "))
	out.WriteByte('\n')
}
