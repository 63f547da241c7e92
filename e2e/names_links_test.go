//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/internal/poll"
)

// Terminal names and links in the browser.

// terminalNames reads the names the side bar and the tabs show, by terminal id.
func (p *page) terminalNames() (sidebar, tabs map[string]string) {
	p.t.Helper()
	read := func(sel, label string) map[string]string {
		m := map[string]string{}
		p.eval(fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll(%q)].map(e => [e.dataset.terminal, e.querySelector(%q).firstChild.textContent]))`, sel, label), &m)
		return m
	}
	// A tab's label is its name, then (same names) the terminal's id, as ls's ID column.
	return read(`#terminals-view .terminal-item`, `.row-label`), read(`.tab[data-terminal]`, `.tab-label`)
}

// showAndType shows the terminal, then types into it.
func (p *page) showAndType(id, keys string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
	p.waitJS("the terminal shown", fmt.Sprintf(`window.__termhost.active() === %q`, id), 5*time.Second)
	p.typeKeys(id, keys)
}

// waitName waits until the side bar shows the terminal under this name.
func (p *page) waitName(id, want string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("terminal %s to be named %q", id, want),
		fmt.Sprintf(`document.querySelector('#terminals-view .terminal-item[data-terminal=%q] .row-label')?.textContent === %q`, id, want), 10*time.Second)
}

// TestTerminalNames: a terminal has one name, the
// server's title — on its tab, in the side bar, in the rename box and in
// termhost ls (the catalogue) — whatever its cwd or running program; a
// program's title changes it, a rename wins over that, and a reload keeps it.
func TestTerminalNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	ids := []string{p.newTerminal(), p.newTerminal()}
	checkNames := func(t *testing.T, want ...string) {
		t.Helper()
		for i, id := range ids {
			p.waitName(id, want[i])
		}
		sidebar, tabs := p.terminalNames()
		server := map[string]string{}
		for _, in := range e.m.Terminals() { // what termhost ls shows
			server[filepath.Base(in.Resource)] = in.Title
		}
		for i, id := range ids {
			if sidebar[id] != want[i] || tabs[id] != want[i] || server[id] != want[i] {
				t.Errorf("terminal %d (%s): side bar %q, tab %q, server (ls) %q, want %q", i+1, id, sidebar[id], tabs[id], server[id], want[i])
			}
		}
	}

	p.run(t, "the shell's name, whatever the cwd or program", func(t *testing.T) {
		checkNames(t, "bash", "bash")
		p.showAndType(ids[0], "cd /tmp"+kb.Enter)
		p.waitCommandRow("cd /tmp")
		p.showAndType(ids[1], "FOO=1 /bin/sleep 30"+kb.Enter)
		p.waitJS("sleep running", fmt.Sprintf(`window.__termhost.view(%q).runningCommand?.includes('sleep')`, ids[1]), 10*time.Second)
		checkNames(t, "bash", "bash")
		p.eval(fmt.Sprintf(`(window.__termhost.type('\x03', %q), true)`, ids[1]), nil)
	})
	p.run(t, "title sequence", func(t *testing.T) {
		p.showAndType(ids[1], `printf '\e]2;build-server\a'`+kb.Enter)
		checkNames(t, "bash", "build-server")
	})
	p.run(t, "rename wins, and the rename box shows the name", func(t *testing.T) {
		p.do(chromedp.Focus(chromedp.CSS(fmt.Sprintf(`#terminals-view .terminal-item[data-terminal=%q]`, ids[0]))), chromedp.KeyEvent(kb.F2))
		p.waitJS("the rename box", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
		if got := p.evalString(`document.querySelector('.quick-input-box').value`); got != "bash" {
			t.Errorf("rename box = %q, want the name the tab shows, bash", got)
		}
		p.eval(`(document.querySelector('.quick-input-box').select(), true)`, nil)
		p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "my-name"+kb.Enter))
		checkNames(t, "my-name", "build-server")
		// A program's title does not take it back.
		p.showAndType(ids[0], `printf '\e]2;other\a'; cd /; sleep 0.3`+kb.Enter)
		p.waitCommandRow(`printf '\e]2;other\a'; cd /; sleep 0.3`)
		checkNames(t, "my-name", "build-server")
	})
	p.run(t, "after a reload", func(t *testing.T) {
		p.do(chromedp.Reload())
		p.waitOnline()
		checkNames(t, "my-name", "build-server") // before any view is opened
		for _, id := range ids {
			p.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
			p.waitLoaded(id)
		}
		checkNames(t, "my-name", "build-server")
		p.shot("terminal-names")
	})
}

// cellCenter returns the page coordinates of the middle of text's first
// cell in the viewport of a terminal (the lowest line that has it).
func (p *page) cellCenter(id, text string) (x, y float64) {
	p.t.Helper()
	var at struct {
		X, Y  float64
		Found bool
	}
	p.eval(fmt.Sprintf(`(() => {
		const v = window.__termhost.view(%q), t = v.term, b = t.buffer.active;
		const r = v.element.querySelector('.xterm-screen').getBoundingClientRect();
		const cw = r.width / t.cols, ch = r.height / t.rows;
		for (let row = t.rows - 1; row >= 0; row--) {
			const col = (b.getLine(b.viewportY + row)?.translateToString(true) ?? '').indexOf(%q);
			if (col >= 0) return { x: r.left + (col + 0.5) * cw, y: r.top + (row + 0.5) * ch, found: true };
		}
		return { found: false };
	})()`, id, text), &at)
	if !at.Found {
		p.fail("%q is not on the screen of terminal %s", text, id)
	}
	return at.X, at.Y
}

// hoverLink moves the mouse over text and reports whether xterm shows it
// as a link (the pointer cursor).
func (p *page) hoverLink(id, text string) bool {
	p.t.Helper()
	// Leave any earlier link, then come in from the last cell: xterm looks
	// for links only when the pointer enters another cell.
	p.do(chromedp.MouseEvent(chromedp.MouseMoved, 2, 2))
	p.waitJS("no link under the mouse", `!document.querySelector('.terminal-view:not([hidden]) .xterm-cursor-pointer')`, 5*time.Second)
	var corner struct{ X, Y float64 }
	p.eval(fmt.Sprintf(`(r => ({ x: r.right - 3, y: r.bottom - 3 }))(window.__termhost.view(%q).element.querySelector('.xterm-screen').getBoundingClientRect())`, id), &corner)
	x, y := p.cellCenter(id, text)
	p.do(chromedp.MouseEvent(chromedp.MouseMoved, corner.X, corner.Y), chromedp.MouseEvent(chromedp.MouseMoved, x, y))
	// The link providers answer asynchronously: give them a moment to.
	return poll.Eventually(2*time.Second, func() bool {
		return p.evalString(`!!document.querySelector('.terminal-view:not([hidden]) .xterm-cursor-pointer')`) == "true"
	})
}

// clickLink hovers the link on text, then clicks it, with Ctrl held
// (Cmd on macOS: following a link) or without.
func (p *page) clickLink(id, text string, ctrl bool) {
	p.t.Helper()
	if !p.hoverLink(id, text) {
		p.fail("%q is not a link", text)
	}
	x, y := p.cellCenter(id, text)
	var opts []chromedp.MouseOption
	if ctrl {
		opts = append(opts, chromedp.ButtonModifiers(chromedp.ModifierCtrl))
	}
	p.do(chromedp.MouseClickXY(x, y, opts...))
}

func TestLinksInOutput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()
	// Record what would open a tab or a native dialog.
	p.eval(`(window.__opened = [], window.__confirms = 0,
		window.open = (...args) => (window.__opened.push(args), null),
		window.confirm = () => (window.__confirms++, false), true)`, nil)
	opened := func() []string {
		var urls []string
		p.eval(`window.__opened.map(a => a[0])`, &urls)
		return urls
	}

	p.typeKeys(id, `printf 'main.go:3\n./src/app.ts:10:5\nsee localhost:8080\n'`+kb.Enter)
	p.waitLine(id, "./src/app.ts:10:5", 10*time.Second)

	fileLinks := []struct {
		name, text, hoverAt, want string
		link                      bool
	}{
		{name: "file with line", text: "main.go:3", hoverAt: "in.go", want: "main.go", link: true},
		{name: "relative path with line and column", text: "./src/app.ts:10:5", hoverAt: "app.ts", want: "./src/app.ts", link: true},
		{name: "host and port is no file", text: "localhost:8080", hoverAt: "host:80"},
	}
	for _, tc := range fileLinks {
		p.run(t, tc.name, func(t *testing.T) {
			if got := p.hoverLink(id, tc.hoverAt); got != tc.link {
				t.Fatalf("hovering %q: link %v, want %v", tc.text, got, tc.link)
			}
			if !tc.link {
				return
			}
			p.clickLink(id, tc.hoverAt, true)
			p.waitJS("the file link dialog", `document.querySelector('#file-link-dialog')`, 5*time.Second)
			if s := p.evalString(`document.querySelector('#file-link-dialog .link-target').textContent`); s != tc.want {
				t.Errorf("Ctrl+click %q: the dialog shows %q, want %q", tc.text, s, tc.want)
			}
			p.do(chromedp.KeyEvent(kb.Escape))
			p.waitJS("the dialog to close", `!document.querySelector('#file-link-dialog')`, 5*time.Second)
		})
	}

	p.typeKeys(id, `printf '\e]8;;https://example.com/x\e\\osc8-label\e]8;;\e\\\n'`+kb.Enter)
	p.waitLine(id, "osc8-label", 10*time.Second)
	dialog := `document.querySelector('#link-dialog')`

	p.run(t, "OSC 8 link asks in the app", func(t *testing.T) {
		p.clickLink(id, "osc8-label", true)
		p.waitJS("the link dialog", dialog, 5*time.Second)
		if s := p.evalString(dialog + `.querySelector('.link-target').textContent`); s != "https://example.com/x" {
			t.Errorf("the dialog shows %q, want the target https://example.com/x", s)
		}
		if got := opened(); len(got) != 0 {
			t.Errorf("window.open called before confirmation: %q", got)
		}
		p.shot("link-dialog")
	})

	p.run(t, "Cancel opens nothing", func(t *testing.T) {
		p.do(chromedp.Click(chromedp.Search(`//div[@id='link-dialog']//button[text()='Cancel']`)))
		p.waitJS("the dialog to close", `!`+dialog, 5*time.Second)
		if got := opened(); len(got) != 0 {
			t.Errorf("window.open called after Cancel: %q", got)
		}
	})

	p.run(t, "Open opens the target", func(t *testing.T) {
		p.clickLink(id, "osc8-label", true)
		p.waitJS("the link dialog", dialog, 5*time.Second)
		p.do(chromedp.Click(chromedp.Search(`//div[@id='link-dialog']//button[text()='Open']`)))
		p.waitJS("the dialog to close", `!`+dialog, 5*time.Second)
		if got := opened(); len(got) != 1 || got[0] != "https://example.com/x" {
			t.Errorf("window.open calls %q, want one with https://example.com/x", got)
		}
	})

	p.run(t, "a plain click only hints", func(t *testing.T) {
		p.clickLink(id, "osc8-label", false)
		p.waitJS("the hint", `[...document.querySelectorAll('.notification-toast')].some(t => t.textContent.includes('Hold Ctrl and click to follow a link.'))`, 5*time.Second)
		if got := opened(); len(got) != 1 {
			t.Errorf("a plain click opened %q", got[1:])
		}
		if s := p.evalString(dialog); s != "null" {
			t.Errorf("a plain click showed the dialog")
		}
	})

	if n := p.evalString(`window.__confirms`); n != "0" {
		t.Errorf("window.confirm called %s times, want never", n)
	}
}
