package screen

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
)

// TestHugeCountsAreCheap: a count vt works through one at a time (REP,
// ECH, CHT…) costs no more than the screen holds: ESC[999999999b took vt
// about half an hour of CPU, and a fuzz run of the model stalled on such
// inputs. The screen stays what vt alone draws, checked where vt alone is
// fast enough to compare (counts a few times the screen).
func TestHugeCountsAreCheap(t *testing.T) {
	const cols, rows = 20, 5
	for _, tc := range []string{"b", "@", "P", "X", "I", "Z", "L", "M", "S", "T", "A", "B", "C", "D", "E", "F", "G", "`", "a", "d", "e"} {
		t.Run(tc, func(t *testing.T) {
			huge := "ab\x1b[3;2Hxyz\x1b[999999999" + tc + "q\x1b[2;4r\x1b[3;1Hrst\x1b[999999999" + tc + "w"
			e := newEmulator(cols, rows)
			start := time.Now()
			e.feed([]byte(huge))
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("%q took %v", huge, d) // about half an hour without the clamp
			}
			// Exact: counts past the clamp, fed to vt alone and to the model.
			for _, n := range []int{cols*rows + cols + 3, 3*cols*rows + 7, 5*cols*rows + 2*cols - 1} {
				in := fmt.Sprintf("ab\x1b[3;2Hxyz\x1b[%d%sq\x1b[2;4r\x1b[3;1Hrst\x1b[%d%sw", n, tc, n, tc)
				e := newEmulator(cols, rows)
				e.feed([]byte(in))
				raw := vt.NewEmulator(cols, rows)
				raw.SetScrollbackSize(1)
				if pw, ok := raw.InputPipe().(*io.PipeWriter); ok {
					_ = pw.Close()
				}
				_, _ = raw.Write([]byte(in))
				if got, want := e.vt.Render(), raw.Render(); got != want || e.vt.CursorPosition() != raw.CursorPosition() {
					t.Fatalf("count %d: screen %q cursor %v, vt alone %q cursor %v", n, got, e.vt.CursorPosition(), want, raw.CursorPosition())
				}
			}
		})
	}
}
