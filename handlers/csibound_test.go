package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestCostlyCountsBounded: what a program prints with a huge count
// (ESC[2147483647b asks for two billion repetitions, and froze browser
// tabs) reaches a subscriber, and a later joiner's snapshot, with the
// count bounded by the terminal's size, which follows its resizes.
func TestCostlyCountsBounded(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("costly", "owner", map[string]any{"cols": 80, "rows": 24})

	// Every bounded sequence at 2^31-1, a position left alone, split
	// across the program's writes too (printf writes each argument).
	const worst = `A\e[2147483647bB\e[2147483647LC\e[2147483647MD\e[2147483647SE\e[2147483647T` +
		`F\e[2147483647IG\e[2147483647ZH\e[2147483647@I\e[2147483647PJ\e[2147483647X` +
		`K\e[2147483647 @L\e[2147483647 AM\e[2147483647\x27}N\e[2147483647\x27~O\e[99999;99999H`
	print := func(marker string) {
		owner.Dispatch(uri, map[string]any{"type": "terminal/input",
			"data": fmt.Sprintf("printf '%s'; printf '\\e[21474'; printf '83647LP'; echo; echo %s-$((40+2))\r", worst, marker)})
		owner.WaitOutput(uri, marker+"-42")
	}
	check := func(t *testing.T, what, out string, limit, cells int) {
		t.Helper()
		cols := limit
		rep := cells + (2147483647-cells)%cols // the screen full, the cursor where it would be
		if strings.Contains(out, "\x1b[2147483647") || strings.Contains(out, "\x1b[21474\x1b") {
			t.Fatalf("%s carries an unbounded count: %q", what, out)
		}
		for _, s := range []string{
			fmt.Sprintf("A\x1b[%dbB", rep),
			fmt.Sprintf("B\x1b[%[1]dLC\x1b[%[1]dMD\x1b[%[1]dSE\x1b[%[1]dTF\x1b[%[1]dIG\x1b[%[1]dZH", limit),
			fmt.Sprintf("H\x1b[%[1]d@I\x1b[%[1]dPJ\x1b[%[1]dXK\x1b[%[1]d @L\x1b[%[1]d AM", limit),
			fmt.Sprintf("M\x1b[%[1]d'}N\x1b[%[1]d'~O\x1b[99999;99999H", limit),
			fmt.Sprintf("\x1b[%dLP", limit),
		} {
			if !strings.Contains(out, s) {
				t.Fatalf("%s lacks %q: %q", what, s, out)
			}
		}
	}

	print("first")
	check(t, "the subscriber's output", owner.Output(uri), 80, 80*24)

	late := ts.dial(t)
	late.Initialize("1.0.0", "late")
	snap := late.Subscribe(uri)
	var content strings.Builder
	for _, p := range snap.State.(ahp.TerminalState).Content {
		content.WriteString(p.Text())
	}
	check(t, "a late joiner's snapshot", content.String(), 80, 80*24)

	// Resized to 100×30: the bound follows (the size before it counts too,
	// for output still on its way, so a smaller one would not show).
	owner.Dispatch(uri, map[string]any{"type": "terminal/resized", "cols": 100, "rows": 30})
	owner.WaitAction("the resize", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalResized })
	print("second")
	out := owner.Output(uri)
	check(t, "the output after a resize", out[strings.Index(out, "first-42"):], 100, 100*30)
}
