//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestPaletteNeverSignsOut: Ctrl+Shift+P then Enter
// must not sign the owner out. The palette lists recently used commands
// first, destructive ones (Sign Out, Kill) last, and Sign Out asks first;
// the sign-in page then takes a pasted login link.
func TestPaletteNeverSignsOut(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	p := e.newPage("owner")
	p.login()
	openPalette := func() {
		p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
		p.waitJS("the palette", `!document.querySelector('.quick-input-widget').hidden && document.querySelectorAll('.quick-input-list-entry').length > 0`, 5*time.Second)
	}
	labels := `[...document.querySelectorAll('.quick-input-list-entry .label-name')].map(e => e.textContent)`

	p.run(t, "destructive commands last", func(t *testing.T) {
		openPalette()
		var got []string
		p.eval(labels, &got)
		if len(got) < 3 || got[len(got)-1] != "Account: Sign Out" || got[0] == "Account: Sign Out" {
			t.Errorf("palette order %q: want Account: Sign Out last", got)
		}
		p.do(chromedp.KeyEvent(kb.Enter))
		p.waitJS("the palette closed", `document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
		if p.evalString(`window.__termhost.client.connection`) != "online" || p.evalString(`document.querySelector('.dialog-box') ? 'dialog' : 'none'`) != "none" {
			t.Errorf("Ctrl+Shift+P, Enter signed out or asked to")
		}
	})
	p.run(t, "recently used first", func(t *testing.T) {
		openPalette()
		p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "color theme"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the theme picker", `document.querySelector('.quick-input-box').placeholder === 'Select Color Theme'`, 5*time.Second)
		p.do(chromedp.KeyEvent(kb.Escape))
		openPalette()
		var got []string
		p.eval(labels, &got)
		if len(got) == 0 || got[0] != "Preferences: Color Theme" {
			t.Errorf("palette order %q: want the command just run first", got)
		}
		if sep := p.evalString(`document.querySelector('.quick-input-list-entry .quick-input-separator')?.textContent`); sep != "recently used" {
			t.Errorf("first separator %q, want \"recently used\"", sep)
		}
		p.do(chromedp.KeyEvent(kb.Escape))
	})
	p.run(t, "sign out asks first", func(t *testing.T) {
		openPalette()
		p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "sign out"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the confirmation", `document.querySelector('.dialog-box')?.textContent.includes('Sign out of termhost?')`, 5*time.Second)
		p.shot("sign-out-confirm")
		p.do(chromedp.KeyEvent(kb.Escape))
		p.waitJS("the dialog gone", `!document.querySelector('.dialog-box')`, 5*time.Second)
		if p.evalString(`window.__termhost.client.connection`) != "online" {
			t.Fatalf("cancelled sign-out signed out")
		}
		openPalette()
		p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "sign out"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the confirmation", `!!document.querySelector('.dialog-box')`, 5*time.Second)
		p.do(chromedp.Click(chromedp.CSS(`.dialog-box .button.primary`)))
		p.waitJS("the sign-in page", `!!document.querySelector('#login .login-paste input')`, 10*time.Second)
	})
	p.run(t, "sign in by pasting the login link", func(t *testing.T) {
		p.do(chromedp.SendKeys(chromedp.CSS(`.login-paste input`), "not a link at all"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the error", `document.querySelector('.login-paste-error').textContent !== ''`, 5*time.Second)
		p.eval(`(document.querySelector('.login-paste input').value = '', true)`, nil)
		p.do(chromedp.SendKeys(chromedp.CSS(`.login-paste input`), e.URL+"/#token="+e.token), chromedp.KeyEvent(kb.Enter))
		p.waitOnline()
	})
}
