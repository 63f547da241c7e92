package content

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
)

func intp(v int) *int     { return &v }
func i64p(v int64) *int64 { return &v }
func partsText(p []ahp.Part) string {
	var b strings.Builder
	for _, x := range p {
		b.WriteString(x.Text())
	}
	return b.String()
}

// TestContentMatchesReducer: without trimming, the chunked store gives
// exactly the state the AHP reducer gives, for random action sequences.
func TestContentMatchesReducer(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		store := New(0)
		var st ahp.TerminalState
		var log []string
		next := 1
		for range 60 {
			var a ahp.Action
			switch rng.IntN(6) {
			case 0, 1, 2:
				a = ahp.Action{Type: ahp.TerminalData, Data: strings.Repeat("x", rng.IntN(5)) + "\r\n"}
			case 3:
				a = ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: fmt.Sprint("cmd-", next), CommandLine: "ls", Timestamp: 5}
				next++
			case 4:
				a = ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: fmt.Sprint("cmd-", rng.IntN(next+1)), ExitCode: intp(rng.IntN(3)), DurationMs: i64p(7)}
			case 5:
				if rng.IntN(8) == 0 {
					a = ahp.Action{Type: ahp.TerminalCleared}
				} else {
					a = ahp.Action{Type: ahp.TerminalData, Data: ""}
				}
			}
			log = append(log, a.Type)
			store.Apply(a)
			st = ahp.ReduceTerminal(st, a)
			if got, want := mustJSON(t, store.Snapshot()), mustJSON(t, nonNil(st.Content)); got != want {
				t.Fatalf("seed %d after %v:\n store   %s\n reducer %s", seed, log, got, want)
			}
		}
	}
}

func nonNil(p []ahp.Part) []ahp.Part {
	if p == nil {
		return []ahp.Part{}
	}
	return p
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := ahp.Marshal(v, ahp.Current)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestContentTrim: the text stays within budget, is cut just after a
// newline when one is near, and never inside a UTF-8 character or an escape
// sequence; the kept text is a suffix of what was written.
func TestContentTrim(t *testing.T) {
	cases := []struct {
		name  string
		chunk string
	}{
		{"lines", "0123456789 some text\r\n"},
		{"utf8 no newline", "ü€漢字😀"},
		{"escapes no newline", "\x1b[1;31mred\x1b[0m\x1b]8;;http://x\x07link\x1b]8;;\x07"},
		{"mixed", "\x1b[38;5;208mü€ orange\x1b[0m text\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const budget = 10000
			c := New(budget)
			var all strings.Builder
			for i := 0; all.Len() < 10*budget; i++ {
				s := tc.chunk
				if i%7 == 0 {
					c.Apply(ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: fmt.Sprint("cmd-", i)})
				}
				c.Apply(ahp.Action{Type: ahp.TerminalData, Data: s})
				all.WriteString(s)
				if i%7 == 3 {
					c.Apply(ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: fmt.Sprint("cmd-", i-3), ExitCode: intp(0)})
				}
			}
			kept := partsText(c.Snapshot())
			if len(kept) > budget || c.size != len(kept) {
				t.Fatalf("kept %d bytes (size %d), budget %d", len(kept), c.size, budget)
			}
			if !strings.HasSuffix(all.String(), kept) {
				t.Fatal("kept text is not a suffix of the output")
			}
			head := c.parts[0].str()
			if !utf8.ValidString(kept) {
				t.Error("kept text is not valid UTF-8")
			}
			if strings.Contains(tc.chunk, "\n") && !strings.HasSuffix(all.String()[:all.Len()-len(kept)], "\n") && len(c.parts) == 1 {
				t.Errorf("cut not after a newline: head starts %q", head[:min(20, len(head))])
			}
			if strings.HasPrefix(tc.chunk, "\x1b") && !strings.HasPrefix(head, "\x1b") && !strings.HasPrefix(head, "red") &&
				!strings.HasPrefix(head, "link") {
				t.Errorf("head starts inside an escape sequence: %q", head[:min(20, len(head))])
			}
		})
	}
}

func TestSafeCut(t *testing.T) {
	cases := []struct {
		s    string
		at   int
		want int
	}{
		{"abc\ndef", 1, 4},
		{"ü", 1, 2},
		{"a\x1b[31mb", 3, 6},
		{"a\x1b]0;title\x07b", 4, 11},
		{"a\x1b]0;title\x1b\\b", 4, 12},
		{"abc", 0, 0},
		{"abc", 5, 3},
	}
	for _, tc := range cases {
		if got := safeCut(tc.s, tc.at); got != tc.want {
			t.Errorf("safeCut(%q, %d) = %d, want %d", tc.s, tc.at, got, tc.want)
		}
	}
}
