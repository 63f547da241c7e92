package vtbound

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
)

func newVT(cols, rows int, clamp bool) *vt.Emulator {
	e := vt.NewEmulator(cols, rows)
	e.SetScrollbackSize(1)
	if pw, ok := e.InputPipe().(*io.PipeWriter); ok {
		_ = pw.Close() // answers to queries fail at once instead of blocking
	}
	if clamp {
		Clamp(e)
	}
	return e
}

// TestClampIsCheapAndExact: a huge count costs no more than the screen
// holds (about half an hour of vt without the clamp), and a clamped
// emulator draws what vt alone draws, checked where vt alone is fast
// enough to compare (counts a few times the screen).
func TestClampIsCheapAndExact(t *testing.T) {
	const cols, rows = 20, 5
	for _, final := range "b" + countFinals {
		t.Run(string(final), func(t *testing.T) {
			huge := fmt.Sprintf("ab\x1b[3;2Hxyz\x1b[999999999%cq\x1b[2;4r\x1b[3;1Hrst\x1b[99999999%cw", final, final)
			start := time.Now()
			_, _ = newVT(cols, rows, true).WriteString(huge)
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("%q took %v", huge, d)
			}
			for _, n := range []int{cols*rows + cols + 3, 3*cols*rows + 7, 5*cols*rows + 2*cols - 1} {
				in := fmt.Sprintf("ab\x1b[3;2Hxyz\x1b[%d%cq\x1b[2;4r\x1b[3;1Hrst\x1b[%d%cw", n, final, n, final)
				clamped, raw := newVT(cols, rows, true), newVT(cols, rows, false)
				_, _ = clamped.WriteString(in)
				_, _ = raw.WriteString(in)
				if got, want := clamped.Render(), raw.Render(); got != want || clamped.CursorPosition() != raw.CursorPosition() {
					t.Fatalf("count %d: screen %q cursor %v, vt alone %q cursor %v", n, got, clamped.CursorPosition(), want, raw.CursorPosition())
				}
			}
		})
	}
}
