//go:build e2e

package e2e

// Settings and keyboard access: the renderer falls
// back to the DOM on a software GPU (headless Chromium's is SwiftShader) and
// the status bar says why; terminal settings apply live and persist; screen
// reader mode from the palette, announced; copy on selection and right
// click; every control of the workbench reachable by Tab with a focus ring.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

var rendererTiming = flag.Bool("renderer-timing", false, "run TestRendererTiming: deep link to visible content with the DOM and WebGL renderers")

// withSettings stores terminal settings (settings.ts's JSON) before the app loads.
func (p *page) withSettings(settings string) {
	p.t.Helper()
	p.addInitScript(fmt.Sprintf(`try { localStorage.setItem('termhost.terminal', %q) } catch {}`, settings))
}

type viewInfo struct {
	ID            string `json:"id"`
	Renderer      string `json:"renderer"`
	RendererLabel string `json:"rendererLabel"`
}

func (p *page) viewInfo(id string) viewInfo {
	p.t.Helper()
	var views []viewInfo
	p.eval(`window.__termhost.views()`, &views)
	for _, v := range views {
		if v.ID == id {
			return v
		}
	}
	p.fail("no view of terminal %s in %+v", id, views)
	return viewInfo{}
}

// "auto" uses the DOM on SwiftShader, "webgl" forces WebGL, and the
// size item's tooltip names the renderer and why; a change applies live.
func TestRendererFallback(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, settings, wantRenderer, wantLabel string
	}{
		{"auto on a software GPU", `{}`, "dom", "DOM — software GPU detected"},
		{"webgl forced", `{"renderer":"webgl"}`, "webgl", "WebGL — chosen in settings"},
		{"dom chosen", `{"renderer":"dom"}`, "dom", "DOM — chosen in settings"},
		{"legacy DOM key", `{}`, "dom", "DOM — chosen in settings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := e.newPage(c.name)
			p.t = t
			p.withSettings(c.settings)
			legacy := map[bool]string{true: "'dom'", false: "null"}[c.name == "legacy DOM key"]
			p.addInitScript(`try { const v = ` + legacy + `; v ? localStorage.setItem('termhost.renderer', v) : localStorage.removeItem('termhost.renderer') } catch {}`)
			p.open("/")
			id := p.newTerminal()
			if v := p.viewInfo(id); v.Renderer != c.wantRenderer || v.RendererLabel != c.wantLabel {
				t.Errorf("settings %s: renderer %q (%q), want %q (%q)", c.settings, v.Renderer, v.RendererLabel, c.wantRenderer, c.wantLabel)
			}
			p.waitJS("the size item's tooltip to name the renderer",
				fmt.Sprintf(`(document.getElementById('status.size')?.title ?? '').includes(%q)`, "Renderer: "+c.wantLabel), 5*time.Second)
			if c.wantRenderer == "webgl" {
				p.waitJS("a WebGL canvas", fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q] .xterm-screen canvas')`, id), 5*time.Second)
			}
		})
	}

	t.Run("context loss falls back to the DOM", func(t *testing.T) {
		p := e.newPage("lost")
		p.t = t
		p.withSettings(`{"renderer":"webgl"}`)
		p.addInitScript(`try { localStorage.removeItem('termhost.renderer') } catch {}`)
		p.open("/")
		id := p.newTerminal()
		canvas := fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q] .xterm-screen canvas')`, id)
		p.waitJS("a WebGL canvas", canvas, 5*time.Second)
		p.eval(fmt.Sprintf(`[...document.querySelectorAll('.terminal-view[data-terminal=%q] .xterm-screen canvas')]
			.map(c => c.getContext('webgl2')).find(Boolean).getExtension('WEBGL_lose_context').loseContext()`, id), nil)
		// xterm's addon waits 3 s for the context to come back before giving up on it.
		p.waitJS("the DOM renderer after the loss", fmt.Sprintf(`window.__termhost.views().find(v => v.id === %q).rendererLabel === 'DOM — the WebGL context was lost'`, id), 10*time.Second)
		p.waitJS("the tooltip to say so", `document.getElementById('status.size').title.includes('Renderer: DOM — the WebGL context was lost')`, 5*time.Second)
		p.typeKeys(id, "echo after-$((1+1))"+kb.Enter)
		p.waitLine(id, "after-2", 10*time.Second)
		p.waitJS("no WebGL canvas left", "!"+canvas, 5*time.Second)
	})

	t.Run("live switch from the Settings editor", func(t *testing.T) {
		p := e.newPage("live")
		p.t = t
		p.withSettings(`{}`) // the tabs share localStorage: not the cases' settings
		p.addInitScript(`try { localStorage.removeItem('termhost.renderer') } catch {}`)
		p.open("/")
		id := p.newTerminal()
		p.eval(`(window.__termhost.run('renderer.pick'), true)`, nil)
		p.waitJS("the renderer control focused", `document.activeElement?.id === 'setting-renderer'`, 5*time.Second)
		if note := p.evalString(`document.getElementById('setting-renderer-active').textContent`); !strings.Contains(note, "DOM — software GPU detected") {
			t.Errorf("settings editor's renderer note = %q, want it to name DOM — software GPU detected", note)
		}
		p.selectSetting("renderer", "webgl")
		p.waitJS("WebGL live", fmt.Sprintf(`window.__termhost.views().find(v => v.id === %q).renderer === 'webgl'`, id), 5*time.Second)
		p.waitJS("the note to follow", `document.getElementById('setting-renderer-active').textContent.includes('WebGL — chosen in settings')`, 5*time.Second)
		p.selectSetting("renderer", "auto")
		p.waitJS("back to the DOM", fmt.Sprintf(`window.__termhost.views().find(v => v.id === %q).rendererLabel === 'DOM — software GPU detected'`, id), 5*time.Second)
		p.waitJS("no WebGL canvas left", fmt.Sprintf(`!document.querySelector('.terminal-view[data-terminal=%q] .xterm-screen canvas')`, id), 5*time.Second)
	})
}

// selectSetting picks a value of the Settings editor's select, as a change by the user does.
func (p *page) selectSetting(id, value string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`(() => { const s = document.getElementById('setting-%s'); s.value = %q; s.dispatchEvent(new Event('change')); })()`, id, value), nil)
}

// typeInto replaces a focused field's text with keystrokes and presses Enter (a change event).
func (p *page) typeInto(sel, text string) {
	p.t.Helper()
	p.do(chromedp.Focus(chromedp.CSS(sel)), chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)), typeText(text+"\r"))
}

// The gear opens the Settings editor; font size, cursor, scrollback
// and screen reader mode apply at once to the open terminal (which refits),
// survive a reload, and Escape gives the keyboard back to the terminal.
func TestSettingsApplyLiveAndPersist(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("owner")
	p.open("/")
	id := p.newTerminal()
	term := fmt.Sprintf(`window.__termhost.view(%q).term`, id)
	var before struct{ Cols, FontSize int }
	p.eval(fmt.Sprintf(`({cols: %[1]s.cols, fontSize: %[1]s.options.fontSize})`, term), &before)

	p.do(chromedp.Click(`#activitybar button[aria-label="Manage"]`))
	p.waitJS("the Settings editor, font size focused", `document.activeElement?.id === 'setting-fontSize'`, 5*time.Second)
	p.shot("settings-editor")
	p.typeInto("#setting-fontSize", "20")
	p.typeInto("#setting-scrollback", "2500")
	p.selectSetting("cursorStyle", "bar")
	p.do(chromedp.Click("#setting-cursorBlink"), chromedp.Click("#setting-screenReaderMode"))

	want := map[string]string{"fontSize": "20", "scrollback": "2500", "cursorStyle": `"bar"`, "cursorBlink": "false", "screenReaderMode": "true"}
	checkOptions := func(when string) {
		t.Helper()
		for k, v := range want {
			p.waitJS(fmt.Sprintf("%s: option %s = %s", when, k, v), fmt.Sprintf(`JSON.stringify(%s.options.%s) === %q`, term, k, v), 5*time.Second)
		}
		p.waitJS(when+": the accessibility tree of screen reader mode", fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q] .xterm-accessibility-tree')`, id), 5*time.Second)
		// Bigger cells, fewer columns: the terminal was refitted and resized.
		p.waitJS(when+": refit to fewer columns", fmt.Sprintf(`%s.cols < %d && window.__termhost.state(%q).cols === %s.cols`, term, before.Cols, id, term), 5*time.Second)
	}
	checkOptions("live")

	p.do(chromedp.Click("#settings-done"))
	p.waitJS("the editor closed", `!document.getElementById('settings-dialog')`, 5*time.Second)
	p.waitJS("the keyboard back on the gear", `document.activeElement?.getAttribute('aria-label') === 'Manage'`, 5*time.Second)

	// Ctrl+, from the terminal opens it too; Escape gives the keyboard back to the terminal.
	textarea := fmt.Sprintf(`.terminal-view[data-terminal=%q] .xterm-helper-textarea`, id)
	p.do(chromedp.Focus(chromedp.CSS(textarea)), chromedp.KeyEvent(",", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitJS("the Settings editor from Ctrl+,", `document.activeElement?.id === 'setting-fontSize'`, 5*time.Second)
	p.do(chromedp.KeyEvent(kb.Escape))
	p.waitJS("the editor closed", `!document.getElementById('settings-dialog')`, 5*time.Second)
	p.waitJS("the keyboard back in the terminal", fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, textarea), 5*time.Second)

	p.do(chromedp.Reload())
	p.waitOnline()
	p.waitJS("the terminal restored", fmt.Sprintf(`window.__termhost.view(%q)?.loaded`, id), 15*time.Second)
	checkOptions("after a reload")

	// Reset to Defaults: every option back, nothing stored.
	p.eval(`(window.__termhost.run('settings.open'), true)`, nil)
	p.waitJS("the Settings editor", `document.getElementById('settings-reset')`, 5*time.Second)
	p.do(chromedp.Click("#settings-reset"))
	p.waitJS("font size back to 14", fmt.Sprintf(`%s.options.fontSize === %d`, term, before.FontSize), 5*time.Second)
	if s := p.evalString(`localStorage.getItem('termhost.terminal')`); s != "null" {
		t.Errorf("after Reset to Defaults, stored settings = %s, want none", s)
	}
}

// "Toggle Screen Reader Accessibility Mode" from the palette turns
// xterm's screen reader mode on in every terminal and says so in a live region.
func TestScreenReaderModeFromPalette(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("owner")
	p.open("/")
	id := p.newTerminal()
	for _, c := range []struct {
		name     string
		wantOn   bool
		announce string
	}{
		{"on", true, "Screen reader optimized mode enabled."},
		{"off", false, "Screen reader optimized mode disabled."},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.t = t
			p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
			p.waitJS("the command palette", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
			p.do(typeText("Toggle Screen Reader"))
			p.waitJS("one match", `document.querySelectorAll('.quick-input-list-entry').length === 1`, 5*time.Second)
			p.do(chromedp.KeyEvent(kb.Enter))
			p.waitJS("the announcement", fmt.Sprintf(`document.getElementById('a11y-announcer')?.textContent === %q`, c.announce), 5*time.Second)
			if live := p.evalString(`document.getElementById('a11y-announcer').getAttribute('aria-live')`); live != "polite" {
				t.Errorf("announcer aria-live = %q, want polite", live)
			}
			p.waitJS(fmt.Sprintf("screenReaderMode %v", c.wantOn), fmt.Sprintf(`window.__termhost.view(%q).term.options.screenReaderMode === %v`, id, c.wantOn), 5*time.Second)
			p.waitJS("the accessibility tree to follow", fmt.Sprintf(`!!document.querySelector('.terminal-view[data-terminal=%q] .xterm-accessibility-tree') === %v`, id, c.wantOn), 5*time.Second)
		})
	}
}

// Copy on selection, and right click "copyPaste" (copy the
// selection, else paste) and "nothing".
func TestCopyOnSelectionAndRightClick(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("owner")
	e.grantClipboard(p)
	p.focusEmulated()
	p.open("/")
	id := p.newTerminal()
	p.typeKeys(id, "echo sel-marker-$((6*7))"+kb.Enter)
	p.waitLine(id, "sel-marker-42", 10*time.Second)
	writeClipboard := func(s string) {
		t.Helper()
		p.eval(fmt.Sprintf(`navigator.clipboard.writeText(%q)`, s), nil)
	}
	selectAll := func() { p.eval(`window.__termhost.run('terminal.selectAll')`, nil) }

	t.Run("copy on selection", func(t *testing.T) {
		writeClipboard("before")
		selectAll()
		if got := p.clipboard(); got != "before" {
			t.Errorf("selection with copyOnSelection off: clipboard = %q, want it unchanged", got)
		}
		p.eval(`window.__termhost.view().term.clearSelection()`, nil)
		p.eval(`window.__termhost.updateSettings({copyOnSelection: true})`, nil)
		selectAll()
		p.waitJS("the selection in the clipboard", `navigator.clipboard.readText().then(t => t.includes('sel-marker-42'))`, 5*time.Second)
		p.eval(`window.__termhost.view().term.clearSelection()`, nil)
	})

	rightClick := func() {
		t.Helper()
		var box struct{ X, Y float64 }
		p.eval(fmt.Sprintf(`(() => { const r = document.querySelector('.terminal-view[data-terminal=%q] .xterm-screen').getBoundingClientRect(); return {x: r.left + 40, y: r.top + 10}; })()`, id), &box)
		p.do(chromedp.MouseClickXY(box.X, box.Y, chromedp.ButtonRight))
	}

	t.Run("copyPaste copies the selection", func(t *testing.T) {
		p.eval(`window.__termhost.updateSettings({copyOnSelection: false, rightClickBehavior: 'copyPaste'})`, nil)
		writeClipboard("before")
		selectAll()
		rightClick()
		p.waitJS("the selection in the clipboard", `navigator.clipboard.readText().then(t => t.includes('sel-marker-42'))`, 5*time.Second)
		p.waitJS("the selection cleared", `!window.__termhost.view().term.hasSelection()`, 5*time.Second)
	})

	t.Run("copyPaste pastes without a selection", func(t *testing.T) {
		writeClipboard("echo pasted-by-$((2+3))")
		rightClick()
		p.waitJS("the paste typed", `window.__termhost.sentInputs().join('').includes('echo pasted-by-$((2+3))')`, 5*time.Second)
		p.typeKeys(id, kb.Enter)
		p.waitLine(id, "pasted-by-5", 10*time.Second)
	})

	t.Run("nothing", func(t *testing.T) {
		p.eval(`window.__termhost.updateSettings({rightClickBehavior: 'nothing'})`, nil)
		sent := len(p.sentInputs())
		writeClipboard("echo never")
		rightClick()
		// A round trip through the page after the click: its handlers have run.
		p.eval(`new Promise(r => requestAnimationFrame(() => r(true)))`, nil)
		if got := p.sentInputs()[sent:]; len(got) != 0 {
			t.Errorf("right click with rightClickBehavior nothing sent %q, want nothing", got)
		}
	})
}

// focusStep is what the tab walk learns of the focused element.
type focusStep struct {
	Desc    string `json:"desc"`
	Body    bool   `json:"body"`
	Visible bool   `json:"visible"`
	Name    string `json:"name"`
	Outline bool   `json:"outline"`
	Seen    bool   `json:"seen"`
	Path    string `json:"path"` // the ids of its ancestors
}

// controlKey names a control across re-renders (the side bar and the tabs
// rebuild their elements): window.__controlKey(el). An element with an id
// is named by it alone: its title and text may change while the walk runs
// (the connection's round trip time).
const controlKey = `window.__controlKey = (el) => el.id ? el.tagName + '#' + el.id : [el.tagName, el.getAttribute('role'), el.closest('[data-terminal]')?.dataset.terminal,
  el.getAttribute('aria-label') || el.getAttribute('title') || '', (el.textContent || '').slice(0, 40), el.className].join('|')`

// describeFocus marks the focused element as seen and says whether it is
// visible, named and outlined. The terminal's input is xterm's hidden
// textarea: its visible sign is the terminal itself, drawn focused.
const describeFocus = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return { body: true };
  window.__tabSeen ??= new Set();
  const key = window.__controlKey(el);
  const seen = window.__tabSeen.has(key);
  window.__tabSeen.add(key);
  const term = el.classList.contains('xterm-helper-textarea') ? el.closest('.xterm') : null;
  const shown = term ?? el;
  const r = shown.getBoundingClientRect();
  const cs = getComputedStyle(shown);
  const visible = r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth &&
    cs.visibility !== 'hidden' && !shown.closest('[hidden]') && Number(cs.opacity) > 0;
  const ecs = getComputedStyle(el);
  const outline = term ? term.classList.contains('focus') : ecs.outlineStyle !== 'none' && parseFloat(ecs.outlineWidth) > 0;
  const labelled = (el.getAttribute('aria-labelledby') || '').split(/\s+/).map(id => document.getElementById(id)?.textContent || '').join(' ');
  const name = (el.getAttribute('aria-label') || labelled || [...(el.labels || [])].map(l => l.textContent).join(' ') || el.getAttribute('title') || el.textContent || el.getAttribute('placeholder') || '').trim();
  const desc = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') + (name ? ' "' + name.slice(0, 40) + '"' : '');
  const path = [];
  for (let a = el; a; a = a.parentElement) if (a.id) path.push(a.id);
  return { desc, visible, name, outline, seen, path: path.join(' ') };
})()`

// Keyboard only. With Tab moving focus (Ctrl+M, VS Code's Toggle
// Tab Key Moves Focus, so Tab can leave the terminal), Tab walks every
// control of the workbench; each focused one is visible, has an accessible
// name and a focus outline. The walk also reaches every visible control.
func TestKeyboardReachesEveryControl(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("owner")
	p.focusEmulated()
	p.open("/")
	id := p.newTerminal()
	p.newTerminal() // a second tab and sidebar row
	p.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
	textarea := fmt.Sprintf(`.terminal-view[data-terminal=%q] .xterm-helper-textarea`, id)
	p.do(chromedp.Focus(chromedp.CSS(textarea)))

	// Without the mode Tab is the shell's (completion); Ctrl+M hands it to the browser.
	p.do(chromedp.KeyEvent("m", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitJS("the Tab focus mode announced", `document.getElementById('a11y-announcer')?.textContent.includes('move focus')`, 5*time.Second)

	walked := p.tabWalk(t)
	if !slices.ContainsFunc(walked, func(s focusStep) bool { return strings.HasPrefix(s.Desc, "textarea") }) {
		t.Errorf("the tab walk never reached a terminal")
	}
	// Every visible control the walk should have met.
	var missed []string
	p.eval(`[...document.querySelectorAll(['button', 'input', 'select', 'a[href]', '[tabindex]:not([tabindex="-1"])', '[role=tab]', '[role=treeitem]', '[role=button]'].map(s => '#workbench ' + s).join(','))]
		.filter(el => el.getClientRects().length && !el.closest('[hidden]') && !el.disabled && !window.__tabSeen.has(window.__controlKey(el)))
		.map(el => el.outerHTML.slice(0, 120))`, &missed)
	for _, m := range missed {
		t.Errorf("a visible control the Tab walk never reached: %s", m)
	}

	t.Run("the Settings editor", func(t *testing.T) {
		p.t = t
		p.do(chromedp.KeyEvent(",", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
		p.waitJS("the Settings editor", `document.activeElement?.id === 'setting-fontSize'`, 5*time.Second)
		p.eval(`(window.__tabSeen = new Set([window.__controlKey(document.activeElement)]), true)`, nil)
		walked := p.tabWalk(t)
		if len(walked) < 10 {
			t.Errorf("Tab in the Settings editor met %d controls, want its 12 or so", len(walked))
		}
		for _, s := range walked {
			if !strings.Contains(s.Path, "settings-dialog") {
				t.Errorf("Tab left the Settings editor for %s", s.Desc)
			}
		}
		p.do(chromedp.KeyEvent(kb.Escape))
	})
}

// tabWalk presses Tab until the focus comes back to a control it met,
// checks each is visible, named and outlined, and returns them in order.
func (p *page) tabWalk(t *testing.T) []focusStep {
	t.Helper()
	p.eval(controlKey, nil)
	var walked []focusStep
	for range 120 {
		p.do(chromedp.KeyEvent(kb.Tab))
		var s focusStep
		p.eval(describeFocus, &s)
		if s.Body {
			continue // past the last control: the next Tab starts over
		}
		if s.Seen {
			break
		}
		walked = append(walked, s)
	}
	var descs []string
	for _, s := range walked {
		descs = append(descs, s.Desc)
		if !s.Visible {
			t.Errorf("Tab focused %s: not visible", s.Desc)
		}
		if s.Name == "" {
			t.Errorf("Tab focused %s: no accessible name", s.Desc)
		}
		if !s.Outline {
			t.Errorf("Tab focused %s: no focus outline (computed outline-style none or width 0)", s.Desc)
		}
	}
	t.Logf("tab order:\n  %s", strings.Join(descs, "\n  "))
	return walked
}

// TestRendererTiming measures a deep link (/t/ID) to visible content with the
// DOM and WebGL renderers in headless Chromium (SwiftShader): the median of 5
// runs each, alternated, after one warm-up. Only with -args -renderer-timing.
//
//	go test -tags e2e -count=1 -v -run TestRendererTiming ./e2e/ -args -renderer-timing
func TestRendererTiming(t *testing.T) {
	if !*rendererTiming {
		t.Skip("a measurement: run with -args -renderer-timing")
	}
	e := newEnv(t)
	setup := e.newPage("setup")
	setup.open("/")
	id := setup.newTerminal()
	setup.typeKeys(id, "seq 1 20; echo timing-$((40+2))"+kb.Enter)
	setup.waitLine(id, "timing-42", 10*time.Second)
	setup.do(chromedp.Navigate("about:blank"))

	const runs = 5
	times := map[string][]float64{}
	for i := range runs + 1 {
		for _, r := range []string{"dom", "webgl"} {
			ms := e.deepLinkMs(fmt.Sprintf("%s-%d", r, i), r, id, "timing-42")
			if i > 0 { // run 0 warms the caches
				times[r] = append(times[r], ms)
			}
		}
	}
	for _, r := range []string{"dom", "webgl"} {
		slices.Sort(times[r])
		t.Logf("deep link to visible content, %s renderer: median %.0f ms (runs: %.0f)", r, times[r][runs/2], times[r])
	}
}

// deepLinkMs opens /t/ID in a fresh tab with the renderer forced and returns
// the ms from navigation start to the frame after `marker` is in the buffer.
func (e *env) deepLinkMs(name, renderer, id, marker string) float64 {
	e.t.Helper()
	p := e.newPage(name)
	p.withSettings(fmt.Sprintf(`{"renderer":%q}`, renderer))
	p.do(chromedp.Navigate(e.URL + "/t/" + id))
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	raw, err := p.evalRaw(ctx, fmt.Sprintf(`new Promise(resolve => {
	  const tick = () => {
	    const h = window.__termhost;
	    const v = h && h.views().find(v => v.id === %[1]q && v.loaded);
	    if (v && (h.buffer(%[1]q) || '').includes(%[2]q)) requestAnimationFrame(() => resolve({ ms: performance.now(), renderer: v.renderer }));
	    else requestAnimationFrame(tick);
	  };
	  tick();
	})`, id, marker))
	if err != nil {
		p.fail("wait for the content: %v", err)
	}
	var got struct {
		Ms       float64 `json:"ms"`
		Renderer string  `json:"renderer"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		p.fail("decode %s: %v", raw, err)
	}
	if got.Renderer != renderer {
		p.fail("renderer %q, want %q", got.Renderer, renderer)
	}
	p.do(chromedp.Navigate("about:blank"))
	return got.Ms
}
