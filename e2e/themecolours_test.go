//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// themeColours reads the computed colours of every element on the page: the
// palette as the user sees it, whatever way the stylesheets write it.
const themeColours = `(() => {
	const props = ['color', 'background-color', 'border-top-color', 'border-bottom-color',
		'border-left-color', 'border-right-color', 'outline-color', 'box-shadow', 'caret-color', 'fill', 'color-scheme'];
	const out = [];
	for (const el of document.querySelectorAll('*')) {
		const cs = getComputedStyle(el);
		const path = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '');
		out.push(path + ' ' + props.map((p) => p + ':' + cs.getPropertyValue(p)).join(';'));
	}
	return out.join('\n');
})()`

// The palettes (dark, light, high contrast) give every element the same
// colours however the theme is chosen: a theme setting ([data-theme]) or, with
// none, the system's prefers-color-scheme. Each mode's colours are written to
// $TMPDIR/termhost-shots/colours-<mode>.txt for comparing two builds.
func TestThemeColours(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.colorScheme("dark")
	p.open("/")
	// A fixed theme setting: the app then leaves <html> alone when the
	// system's scheme changes, and the test sets data-theme itself.
	p.eval(`localStorage.setItem('termhost.theme', 'dark'), true`, nil)
	p.open("/")
	p.waitPrompt(p.newTerminal()) // no output may add elements between two reads
	// No transition may show a colour half way, nor an animation (the
	// blinking cursor) a colour of the moment.
	p.eval(`(() => { const s = document.createElement('style'); s.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }'; document.head.append(s); return true; })()`, nil)

	// setTheme emulates the system's scheme and sets data-theme, or removes
	// it when theme is "", with none of the app's inline color-scheme.
	setTheme := func(system, theme string) {
		t.Helper()
		p.colorScheme(system)
		p.eval(`document.documentElement.style.colorScheme = '', true`, nil)
		if theme == "" {
			p.eval(`document.documentElement.removeAttribute('data-theme'), true`, nil)
		} else {
			p.eval(`document.documentElement.setAttribute('data-theme', '`+theme+`'), true`, nil)
		}
	}
	read := func(mode, system, theme string) string {
		t.Helper()
		setTheme(system, theme)
		got := p.evalString(themeColours)
		if err := os.MkdirAll(shotDir(), 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(shotDir(), "colours-"+mode+".txt"), []byte(got+"\n"), 0o644)
		}
		return got
	}
	modes := map[string]string{
		"dark":         read("dark", "light", "dark"),
		"light":        read("light", "dark", "light"),
		"hc-dark":      read("hc-dark", "light", "hc-dark"),
		"hc-light":     read("hc-light", "dark", "hc-light"),
		"system-light": read("system-light", "light", ""),
		"system-dark":  read("system-dark", "dark", ""),
	}
	if modes["system-light"] != modes["light"] {
		t.Errorf("prefers-color-scheme light without a theme setting differs from the light theme (see colours-*.txt in %s)", shotDir())
	}
	if modes["system-dark"] != modes["dark"] {
		t.Errorf("prefers-color-scheme dark without a theme setting differs from the dark theme (see colours-*.txt in %s)", shotDir())
	}
	seen := map[string]string{}
	for m, c := range modes {
		if m == "system-light" || m == "system-dark" {
			continue
		}
		if other, ok := seen[c]; ok {
			t.Errorf("themes %s and %s give the same colours", m, other)
		}
		seen[c] = m
	}
	// A few key colours, from VS Code's Dark Modern and Light Modern.
	for _, c := range []struct{ theme, js, want string }{
		{"dark", `getComputedStyle(document.querySelector('.editor')).backgroundColor`, "rgb(31, 31, 31)"},
		{"dark", `getComputedStyle(document.body).color`, "rgb(204, 204, 204)"},
		{"light", `getComputedStyle(document.querySelector('.editor')).backgroundColor`, "rgb(255, 255, 255)"},
		{"light", `getComputedStyle(document.body).color`, "rgb(59, 59, 59)"},
		{"", `getComputedStyle(document.querySelector('.editor')).backgroundColor`, "rgb(255, 255, 255)"},
	} {
		setTheme("light", c.theme)
		if got := p.evalString(c.js); got != c.want {
			t.Errorf("theme %q (system light): %s = %s, want %s", c.theme, c.js, got, c.want)
		}
	}
}
