//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestReplayPlayer: a terminal recorded from its start,
// as `termhost run --record` creates it (_meta termhost/record), runs two
// commands with shell integration and exits with code 3. Its share link,
// opened by a viewer after the exit, still shows it; the Replay button opens
// the player with the exit status, the duration and a tick per command;
// clicking the second tick moves the player to that command's marker;
// the speed changes without losing the position; Escape closes it.
func TestReplayPlayer(t *testing.T) {
	t.Parallel()
	const id = "replayme"
	e, owner := recordedTerminal(t, id, 80, 24)
	// `exit 3` is a command line too: shell integration marks it.
	commands := []string{"echo first-step", "sleep 0.5; echo second-step", "exit 3"}
	owner.typeKeys(id, commands[0]+kb.Enter)
	owner.waitLine(id, "first-step", 10*time.Second)
	owner.typeKeys(id, commands[1]+kb.Enter)
	owner.waitLine(id, "second-step", 10*time.Second)
	owner.typeKeys(id, commands[2]+kb.Enter)
	owner.waitJS("the exit", fmt.Sprintf(`window.__termhost.view(%q)?.exited === true`, id), 10*time.Second)
	owner.openShareDialog("palette", id)
	link := owner.createShare("viewer", 3600)
	owner.closeDialog()

	viewer := e.openShare("viewer", link, "viewer", id, "dark")
	viewer.run(t, "the exited terminal offers a replay", func(t *testing.T) {
		viewer.click("the Replay button", fmt.Sprintf(`.terminal-view[data-terminal=%q] .terminal-infobar .replay-open`, id))
		viewer.waitJS("the player", `window.__termhost.replay()?.ready === true && !!document.querySelector('.replay-panel .ap-player')`, 15*time.Second)
	})
	viewer.run(t, "exit status and duration", func(t *testing.T) {
		summary := viewer.evalString(`document.querySelector('.replay-summary').textContent`)
		if !regexp.MustCompile(`^Exited with code 3 · [0-9.]+ (ms|s)$|^Exited with code 3 · \d+m \d+s$`).MatchString(summary) {
			t.Errorf("summary %q, want \"Exited with code 3 · <duration>\"", summary)
		}
	})
	var ticks []struct {
		Label string  `json:"label"`
		Index int     `json:"index"`
		Time  float64 `json:"time"`
	}
	viewer.run(t, "a tick per command", func(t *testing.T) {
		viewer.eval(`[...document.querySelectorAll('.replay-tick.command')].map(b => ({label: b.querySelector('.replay-tick-label').textContent, index: +b.dataset.index, time: +b.dataset.time}))`, &ticks)
		var labels []string
		for _, tick := range ticks {
			labels = append(labels, tick.Label)
		}
		if !slices.Equal(labels, commands) {
			t.Fatalf("command ticks %+v, want %q", ticks, commands)
		}
		if ticks[1].Time <= ticks[0].Time {
			t.Errorf("tick times %v then %v, want increasing", ticks[0].Time, ticks[1].Time)
		}
		if note := viewer.evalString(`document.querySelector('.replay-tick.note:last-of-type .replay-tick-label, li:last-child > .replay-tick.note .replay-tick-label')?.textContent`); note != "exited with code 3" {
			t.Errorf("last tick %q, want the note \"exited with code 3\"", note)
		}
	})
	near := func(js string, want float64) string {
		return fmt.Sprintf(`Math.abs((%s) - %v) < 0.05`, js, want)
	}
	viewer.run(t, "clicking a tick jumps to its command", func(t *testing.T) {
		if len(ticks) != len(commands) {
			t.Skip("no ticks")
		}
		viewer.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`.replay-tick[data-index="%d"]`, ticks[1].Index))))
		viewer.waitJS(fmt.Sprintf("the player at %.3f s", ticks[1].Time), near(`window.__termhost.replay().time`, ticks[1].Time), 5*time.Second)
		viewer.shot("replay-at-second-command")
		// The recorded output up to that point is on the player's screen.
		viewer.waitJS("the first command's output in the player", `(document.querySelector('.replay-player .ap-term')?.textContent || '').includes('first-step')`, 5*time.Second)
	})
	viewer.run(t, "speed", func(t *testing.T) {
		if len(ticks) != len(commands) {
			t.Skip("no ticks")
		}
		viewer.eval(`(s => (s.value = '4', s.dispatchEvent(new Event('change')), true))(document.querySelector('.replay-speed'))`, nil)
		viewer.waitJS("speed 4× at the same point", `window.__termhost.replay()?.speed === 4 && window.__termhost.replay().ready && `+
			near(`window.__termhost.replay().time`, ticks[1].Time), 10*time.Second)
		var time float64
		viewer.eval(`window.__termhost.replay().time`, &time)
		if math.Abs(time-ticks[1].Time) >= 0.05 {
			t.Errorf("after the speed change the player is at %v s, want %v", time, ticks[1].Time)
		}
	})
	viewer.run(t, "Escape closes the replay", func(t *testing.T) {
		viewer.do(chromedp.KeyEvent(kb.Escape))
		viewer.waitJS("no replay panel", `!document.querySelector('.replay-panel') && window.__termhost.replay() === undefined`, 5*time.Second)
	})
}

// recordedTerminal starts a server that records, creates terminal id of
// cols×rows recorded from its start (held by a CLI-like client, so the
// browser mirrors its size), and opens it in the owner's page.
func recordedTerminal(t *testing.T, id string, cols, rows int) (*env, *page) {
	token := "e2e-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	s := testserver.New(t, shellOptions(), testserver.NoAuth(), testserver.TestHooks(),
		testserver.Terminals(func(c *terminals.Config) { c.RecordDir = t.TempDir() }),
		testserver.Handlers(func(c *handlers.Config) { c.Version, c.NoAuth, c.OwnerToken = "e2e", false, token }))
	proxy := testserver.NewProxy(t, s.Listener.Addr().String())
	e := &env{t: t, m: s.Manager, hooks: s.Hooks, srv: s.Handler, backend: s.Server, proxy: proxy, URL: proxy.URL(), home: s.Home, token: token}
	t.Cleanup(e.startBrowser())

	uri := ahp.TerminalURIOf(id)
	claim := ahp.ClientClaim("e2e-run")
	meta, _ := json.Marshal(map[string]any{terminals.MetaRecord: true})
	if err := s.Manager.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Cols: cols, Rows: rows, Meta: meta}); err != nil {
		t.Fatalf("create the recorded terminal: %v", err)
	}
	owner := e.newPage("owner")
	owner.login()
	owner.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
	owner.waitJS("the terminal", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 10*time.Second)
	owner.waitPrompt(id)
	return e, owner
}

// TestReplayWideRecording: a 200-column recording
// replays at a legible size (the commands list makes room, the player
// scrolls instead of shrinking the text), starts by itself, and Escape
// closes it after a click in the player.
func TestReplayWideRecording(t *testing.T) {
	t.Parallel()
	const id = "widecast"
	_, owner := recordedTerminal(t, id, 200, 50)
	// Whoever types has control and sizes the pty to its pane: a pane wider
	// than 200 columns keeps the recording wide; the replay below is then
	// watched in an ordinary window (an exited terminal's size is only state).
	owner.do(chromedp.EmulateViewport(2600, 900))
	owner.typeKeys(id, "printf 'wide-%0190d|\\n' 7"+kb.Enter)
	owner.waitLine(id, "wide-"+strings.Repeat("0", 189)+"7|", 10*time.Second)
	owner.typeKeys(id, "exit 0"+kb.Enter)
	owner.waitJS("the exit", fmt.Sprintf(`window.__termhost.view(%q)?.exited === true`, id), 10*time.Second)
	owner.do(chromedp.EmulateViewport(1400, 900))
	// The info bar re-renders as the exit and the recording's end arrive.
	owner.click("the Replay button", `.terminal-infobar .replay-open`)
	owner.waitJS("the player", `window.__termhost.replay()?.ready === true && !!document.querySelector('.replay-panel .ap-term')`, 15*time.Second)

	owner.run(t, "starts by itself", func(t *testing.T) {
		owner.waitJS("the player playing or played", `window.__termhost.replay().playing || window.__termhost.replay().time > 0`, 10*time.Second)
	})
	owner.run(t, "legible text", func(t *testing.T) {
		owner.waitJS("the recording's text", `(document.querySelector('.replay-player .ap-term')?.textContent || '').includes('0007|')`, 15*time.Second)
		owner.shot("replay-wide")
		var font float64
		owner.eval(`parseFloat(getComputedStyle(document.querySelector('.replay-player .ap-term')).fontSize)`, &font)
		if font < 10 {
			t.Errorf("player font %.1f px, want at least 10 (fit %q)", font, owner.evalString(`window.__termhost.replay().fit`))
		}
		if owner.evalString(`(b => String(b.scrollWidth > b.clientWidth))(document.querySelector('.replay-player'))`) != "true" {
			t.Errorf("the player does not scroll sideways over the wide recording")
		}
		if owner.evalString(`String(document.querySelector('.replay-panel').classList.contains('ticks-hidden'))`) != "true" {
			t.Errorf("the commands list still takes room beside a recording too wide to fit")
		}
	})
	owner.run(t, "the commands list comes back on demand", func(t *testing.T) {
		owner.do(chromedp.Click(chromedp.CSS(`.replay-ticks-toggle`)))
		owner.waitJS("the list shown", `document.querySelector('.replay-ticks').offsetHeight > 0`, 5*time.Second)
		owner.do(chromedp.Click(chromedp.CSS(`.replay-ticks-toggle`)))
		owner.waitJS("the list hidden", `document.querySelector('.replay-ticks').offsetHeight === 0`, 5*time.Second)
	})
	owner.run(t, "Escape closes it after a click in the player", func(t *testing.T) {
		owner.do(chromedp.Click(chromedp.CSS(`.replay-player .ap-term`)))
		owner.do(chromedp.KeyEvent(kb.Escape))
		owner.waitJS("no replay panel", `!document.querySelector('.replay-panel') && window.__termhost.replay() === undefined`, 5*time.Second)
	})
}
