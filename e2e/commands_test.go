//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Command tracking in the browser: subshells and
// commands that fail are decorated with their exit code, pasted lines are
// listed in full, and a command whose output was cleared says so.

// commandRow is one row of the Commands view.
type commandRow struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Title  string `json:"title"`
	Status string `json:"status"`
	Exit   string `json:"exit"`
}

// commandRows reads the Commands view, newest first.
func (p *page) commandRows() []commandRow {
	p.t.Helper()
	var rows []commandRow
	p.eval(`[...document.querySelectorAll('#commands-view .command-item')].map(r => ({
		id: r.dataset.command, label: r.querySelector('.row-label').textContent, title: r.title,
		status: r.dataset.status, exit: r.dataset.exitCode ?? '' }))`, &rows)
	return rows
}

// waitCommandRow waits for a finished row with this label and returns it.
func (p *page) waitCommandRow(label string) commandRow {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("a finished command %q in the Commands view", label),
		fmt.Sprintf(`[...document.querySelectorAll('#commands-view .command-item')].some(r => r.querySelector('.row-label').textContent === %q && r.dataset.status !== 'running')`, label), 10*time.Second)
	for _, r := range p.commandRows() {
		if r.Label == label {
			return r
		}
	}
	p.fail("command %q vanished from the Commands view", label)
	return commandRow{}
}

// markedLine is the text of the buffer line a command's mark is on.
func (p *page) markedLine(id, commandID string) string {
	p.t.Helper()
	return p.evalString(fmt.Sprintf(`(v => { const m = v.commands.find(c => c.commandId === %q)?.marker;
		return m && !m.isDisposed ? v.term.buffer.active.getLine(m.line).translateToString(true) : '(no mark)'; })(window.__termhost.view(%q))`, commandID, id))
}

// run is t.Run with the page's failures reported to the subtest (as
// phone_test.go's step).
func (p *page) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		saved := p.t
		p.t = t
		defer func() { p.t = saved }()
		f(t)
	})
}

// pasteAndRun pastes text into the terminal as xterm does once a paste is
// allowed (bracketed, since bash asks for it: the lines wait in the line
// editor), then presses Enter.
func (p *page) pasteAndRun(id, text string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`(window.__termhost.view(%q).term.paste(%q), true)`, id, text), nil)
	p.typeKeys(id, kb.Enter)
}

func TestFailedCommandsAreDecorated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()
	tests := []struct {
		name, keys, exit string
		marked           bool // the mark is on the command line (a subshell with output is reported after it: its mark is on its last line)
	}{
		{name: "subshell", keys: "(exit 3)", exit: "3", marked: true},
		{name: "subshell with output", keys: "(echo sub; exit 5)", exit: "5"},
		{name: "false", keys: "false", exit: "1", marked: true},
		{name: "bash -c", keys: "bash -c 'exit 4'", exit: "4", marked: true},
	}
	for _, tc := range tests {
		p.run(t, tc.name, func(t *testing.T) {
			p.typeKeys(id, tc.keys+kb.Enter)
			row := p.waitCommandRow(tc.keys)
			if row.Status != "failure" || row.Exit != tc.exit {
				t.Errorf("typing %q: Commands view row status %s exit %q, want failure exit %s", tc.keys, row.Status, row.Exit, tc.exit)
			}
			deco := fmt.Sprintf(`document.querySelector('.terminal-command-decoration[data-cmd=%q]')`, row.ID)
			p.waitJS("the command's decoration", deco, 5*time.Second)
			var got struct {
				Failure bool   `json:"failure"`
				Label   string `json:"label"`
			}
			p.eval(fmt.Sprintf(`(d => ({ failure: d.classList.contains('failure'), label: d.getAttribute('aria-label') }))(%s)`, deco), &got)
			if want := tc.keys + " — exit code " + tc.exit; !got.Failure || !strings.HasPrefix(got.Label, want) {
				t.Errorf("typing %q: decoration failure=%v aria-label %q, want failure and %q", tc.keys, got.Failure, got.Label, want)
			}
			if line := p.markedLine(id, row.ID); tc.marked && !strings.HasSuffix(line, "# "+tc.keys) {
				t.Errorf("typing %q: the mark is on the line %q, want the command's", tc.keys, line)
			}
		})
	}
	p.shot("commands-failed-decorations")
}

func TestPastedLinesAreListedInFull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()

	p.run(t, "each line its own command", func(t *testing.T) {
		p.pasteAndRun(id, "echo one\necho two\n")
		one, two := p.waitCommandRow("echo one"), p.waitCommandRow("echo two")
		if one.Status != "success" || two.Status != "success" || one.ID == two.ID {
			t.Errorf("pasted two lines: rows %+v and %+v, want two successful commands", one, two)
		}
		p.waitLine(id, "two", 5*time.Second)
		// No prompt before the second: its mark is where its output starts.
		if line := p.markedLine(id, two.ID); line != "two" {
			t.Errorf("the second pasted line's mark is on %q, want its output %q", line, "two")
		}
	})

	p.run(t, "a loop over several lines", func(t *testing.T) {
		p.pasteAndRun(id, "for i in 1 2\ndo echo x$i\ndone\n")
		row := p.waitCommandRow("for i in 1 2; do echo x$i; done")
		if row.Status != "success" {
			t.Errorf("pasted loop: row %+v, want success", row)
		}
	})

	p.run(t, "a multi-line command line on one row", func(t *testing.T) {
		// lithist keeps the loop's newlines in history: the command line
		// has three lines.
		p.typeKeys(id, "shopt -s lithist"+kb.Enter)
		p.waitCommandRow("shopt -s lithist")
		p.pasteAndRun(id, "for i in 3 4\ndo echo y$i\ndone\n")
		row := p.waitCommandRow("for i in 3 4 ⏎ do echo y$i ⏎ done")
		if !strings.HasPrefix(row.Title, "for i in 3 4\ndo echo y$i\ndone\n") {
			t.Errorf("the row's tooltip %q does not start with the full command", row.Title)
		}
		if line := p.markedLine(id, row.ID); !strings.HasSuffix(line, "# for i in 3 4") {
			t.Errorf("the loop's mark is on %q, want its first line", line)
		}
		deco := fmt.Sprintf(`.terminal-command-decoration[data-cmd=%q]`, row.ID)
		p.waitJS("the loop's decoration", fmt.Sprintf(`document.querySelector(%q)`, deco), 5*time.Second)
		var x, y float64
		p.eval(fmt.Sprintf(`(r => r.x + r.width / 2)(document.querySelector(%q).getBoundingClientRect())`, deco), &x)
		p.eval(fmt.Sprintf(`(r => r.y + r.height / 2)(document.querySelector(%q).getBoundingClientRect())`, deco), &y)
		p.do(chromedp.MouseEvent(chromedp.MouseMoved, x, y))
		p.waitJS("the command hover", `document.querySelector('.command-hover .hover-command')`, 5*time.Second)
		if s := p.evalString(`document.querySelector('.command-hover .hover-command').textContent`); s != "for i in 3 4\ndo echo y$i\ndone" {
			t.Errorf("hover command = %q, want the three lines", s)
		}
		p.shot("commands-multiline-hover")
		p.do(chromedp.MouseEvent(chromedp.MouseMoved, 600, 400))
	})
}

func TestClearedCommandSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()
	notice := func(label string) string {
		return fmt.Sprintf("The output of `%s` was cleared.", label)
	}
	toastShown := func(text string) string {
		return fmt.Sprintf(`[...document.querySelectorAll('.notification-toast')].some(t => t.textContent.includes(%q))`, text)
	}
	clearToasts := func() {
		p.eval(`(document.querySelectorAll('.notification-toast').forEach(t => t.remove()), true)`, nil)
	}
	clickRow := func(label string) {
		row := p.waitCommandRow(label)
		p.click("the command row", fmt.Sprintf(`#commands-view .command-item[data-command=%q]`, row.ID))
	}

	p.typeKeys(id, "echo before-clear"+kb.Enter)
	p.waitCommandRow("echo before-clear")
	p.typeKeys(id, "clear"+kb.Enter)
	p.waitCommandRow("clear")
	p.typeKeys(id, "echo after-clear"+kb.Enter)
	p.waitCommandRow("echo after-clear")

	p.run(t, "Commands view", func(t *testing.T) {
		clearToasts()
		clickRow("echo before-clear")
		p.waitJS("the cleared notice", toastShown(notice("echo before-clear")), 5*time.Second)
		p.shot("commands-cleared-notice")
	})

	p.run(t, "Go to Command", func(t *testing.T) {
		clearToasts()
		p.eval(`(window.__termhost.run('terminal.goToCommand'), true)`, nil)
		p.waitJS("the command picker", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
		p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "before-clear"))
		p.waitJS("one match", `document.querySelectorAll('.quick-input-list-entry').length === 1`, 5*time.Second)
		p.do(chromedp.KeyEvent(kb.Enter))
		p.waitJS("the cleared notice", toastShown(notice("echo before-clear")), 5*time.Second)
	})

	p.run(t, "a command still on screen is revealed", func(t *testing.T) {
		clearToasts()
		clickRow("echo after-clear")
		p.waitJS("the highlight", `document.querySelector('.terminal-command-highlight')`, 5*time.Second)
		if p.evalString(toastShown("was cleared")) == "true" {
			t.Errorf("a notice for a command still on screen")
		}
	})

	p.run(t, "trimmed from the scrollback", func(t *testing.T) {
		clearToasts()
		var scrollback int
		p.eval(fmt.Sprintf(`window.__termhost.view(%q).term.options.scrollback`, id), &scrollback)
		p.typeKeys(id, fmt.Sprintf("seq 1 %d"+kb.Enter, scrollback+200))
		p.waitCommandRow(fmt.Sprintf("seq 1 %d", scrollback+200))
		p.eval(`window.__termhost.drained()`, nil)
		clickRow("echo after-clear")
		p.waitJS("the cleared notice", toastShown(notice("echo after-clear")), 5*time.Second)
	})
}
