//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals"
)

// TestFirstMinutes: closing the Share dialog gives the
// keyboard back to the terminal, not to the Share button; a terminal that
// `termhost run` started with a command does not blame shell integration for
// listing no commands; a phone's empty editor offers commands to tap, not
// desktop keys.
func TestFirstMinutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("owner")
	p.open("/")
	id := p.newTerminal()
	p.waitPrompt(id)

	p.run(t, "share dialog closes to the terminal", func(t *testing.T) {
		p.openShareDialog("tab", id)
		p.closeDialog()
		p.waitJS("the keyboard in the terminal", terminalFocused(id), 5*time.Second)
		p.typeHere(id, "after-share")
	})

	p.run(t, "a command run without a shell", func(t *testing.T) {
		const runID = "ranbash"
		claim := ahp.ClientClaim("e2e-run")
		meta, _ := json.Marshal(map[string]any{terminals.MetaCommand: []string{"/bin/bash", "-c", "echo ran-it; sleep 60"}})
		if err := e.m.Create(ahp.CreateTerminalParams{Channel: ahp.TerminalURIOf(runID), Claim: &claim, Cols: 80, Rows: 24, Meta: meta}); err != nil {
			t.Fatal(err)
		}
		p.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, runID), nil)
		p.waitLine(runID, "ran-it", 10*time.Second)
		p.eval(`(window.__termhost.run('view.commands'), true)`, nil)
		p.waitJS("the commands pane's note", `(document.querySelector('#commands-view .welcome-view')?.textContent || '').includes('runs a program directly')`, 5*time.Second)
		if s := p.evalString(`document.querySelector('#commands-view .welcome-view').textContent`); strings.Contains(s, "Shell integration") {
			t.Errorf("commands pane of a command run without a shell blames shell integration: %q", s)
		}
	})

	p.run(t, "phone empty state", func(t *testing.T) {
		phone := e.newPage("phone")
		phone.phone()
		phone.open("/")
		phone.waitJS("the empty editor's commands", `!!document.querySelector('#editor-empty .watermark-box')`, 5*time.Second)
		phone.shot("phone-empty-state")
		if n := phone.evalString(`String(document.querySelectorAll('#editor-empty .watermark kbd').length)`); n != "0" {
			t.Errorf("the phone's empty state shows %s keyboard shortcuts", n)
		}
		phone.do(chromedp.Tap(chromedp.CSS(`#editor-empty .watermark-tap`)))
		phone.waitJS("a new terminal from the tap", `window.__termhost.views().length > 0`, 10*time.Second)
	})

	p.run(t, "desktop empty state keeps its keys", func(t *testing.T) {
		desk := e.newPage("desktop")
		desk.open("/")
		desk.waitJS("the empty editor's keys", `document.querySelectorAll('#editor-empty .watermark kbd').length > 0`, 5*time.Second)
	})
}
