//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"

	"github.com/termhost/termhost/internal/poll"
)

// viewport is the JS for a page's visible screen of terminal %q: one
// string per row, trailing blanks trimmed (as x-termhost/screen's lines).
const viewport = `(id => { const t = window.__termhost.view(id)?.term; if (!t) return [];
  const b = t.buffer.active, out = [];
  for (let y = 0; y < t.rows; y++) out.push((b.getLine(b.baseY + y)?.translateToString(true) ?? '').replace(/ +$/, ''));
  return out; })(%q)`

// TestScreensAfterResizesMatchXterm: a long command line
// and its output wrap in a narrow terminal; the watching browser's terminal
// is made wide, then narrower than at first, and xterm.js rewraps them each
// time. The server's preview (x-termhost/screen) and a browser joining after
// the resizes show, row for row, what the watching browser shows: with the
// history alone, and with the screen model's redraw (more output than the
// scrollback keeps).
func TestScreensAfterResizesMatchXterm(t *testing.T) {
	t.Parallel()
	t.Run("history", func(t *testing.T) { screensAfterResizes(t, newEnv(t), "") })
	t.Run("redraw", func(t *testing.T) {
		small := testserver.Terminals(func(c *terminals.Config) { c.Scrollback = 4 << 10 })
		screensAfterResizes(t, newEnvWith(t, nil, small), "seq 1 3000 | tr '\\n' ' '; echo\r")
	})
}

// screensAfterResizes runs the test in e, typing before first (the filler
// output that trims the history).
func screensAfterResizes(t *testing.T, e *env, before string) {
	p := e.newPage("watcher")
	p.do(chromedp.EmulateViewport(800, 500))
	p.open("/")
	id := p.newTerminal()
	if before != "" {
		p.eval(fmt.Sprintf(`(window.__termhost.type(%q, %q), true)`, before, id), nil)
	}
	var words []string
	for i := range 24 {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	p.eval(fmt.Sprintf(`(window.__termhost.type(%q, %q), true)`, "echo reflow-$((6*7)) "+strings.Join(words, " ")+"\r", id), nil)
	p.waitJS("the output", fmt.Sprintf(`(window.__termhost.buffer(%q) || '').includes('reflow-42 w00')`, id), 10*time.Second)
	p.waitPrompt(id)

	c, _, err := dialWS(t, "ws"+strings.TrimPrefix(e.URL, "http")+"/ws", "")
	if err != nil {
		t.Fatal(err)
	}
	initialize(t, c, "preview")
	uri := "ahp-terminal:/" + id
	preview := func() []string {
		var r ext.ScreenResult
		if err := json.Unmarshal(c.MustCall(ext.MethodScreen, map[string]any{"channel": uri}), &r); err != nil {
			t.Fatal(err)
		}
		return r.Lines
	}
	watched := func() []string {
		var lines []string
		p.eval(fmt.Sprintf(viewport, id), &lines)
		return lines
	}
	// same waits until other's screen equals the watcher's (the shell
	// redraws its prompt after each resize), or fails showing both.
	same := func(what string, other func() []string) {
		t.Helper()
		var w, o []string
		if poll.Eventually(poll.Short, func() bool { w, o = watched(), other(); return slices.Equal(w, o) }) {
			return
		}
		t.Fatalf("%s differs from the watching browser's screen:\nbrowser:\n%s\n%s:\n%s", what, strings.Join(w, "|\n"), what, strings.Join(o, "|\n"))
	}

	cols := func() int {
		var n int
		p.eval(fmt.Sprintf(`window.__termhost.state(%q).cols`, id), &n)
		return n
	}
	for _, width := range []int{1400, 600} {
		before := cols()
		p.do(chromedp.EmulateViewport(int64(width), 500))
		p.waitJS("the pty resized", fmt.Sprintf(`(s => s.cols !== %d && s.cols === window.__termhost.view(%q).term.cols)(window.__termhost.state(%q))`, before, id, id), 10*time.Second)
		same(fmt.Sprintf("the preview at %d columns", cols()), preview)
	}
	if s := strings.Join(watched(), "\n"); !strings.Contains(s, "w23") || !strings.Contains(s, "reflow-42") {
		t.Fatalf("the screen lost the output:\n%s", s)
	}

	j := e.newPage("joiner")
	j.do(chromedp.EmulateViewport(600, 500))
	j.open("/")
	j.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
	j.waitJS("the terminal", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 10*time.Second)
	same("the joiner's screen", func() []string {
		var lines []string
		j.eval(fmt.Sprintf(viewport, id), &lines)
		return lines
	})
}
