package screen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// saveRestore saves m, passes the state through JSON (as a hand-over
// does) and starts the model restored from it.
func saveRestore(t *testing.T, m *Model) *Model {
	t.Helper()
	s, ok := m.Save(t.Context())
	if !ok {
		t.Fatal("no saved state")
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Saved
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	r := Restore(back)
	run(t, r)
	return r
}

// sameState fails unless a and b give the same screen: text, redraw, the
// redraw at the last command start, exactness and position in the stream.
func sameState(t *testing.T, when string, a, b State) {
	t.Helper()
	if strings.Join(a.Lines, "\n") != strings.Join(b.Lines, "\n") || !bytes.Equal(a.Redraw, b.Redraw) || !bytes.Equal(a.Start, b.Start) ||
		a.AltScreen != b.AltScreen || a.Exact != b.Exact || a.Fed != b.Fed || a.SinceStart != b.SinceStart || a.Cols != b.Cols || a.Rows != b.Rows {
		t.Fatalf("%s: restored model differs:\n%+v\nwant\n%+v", when, b, a)
	}
}

// TestSaveRestore: a model restored from Save (in another process after an
// upgrade) answers as the original does, then and after more output and
// resizes: the same screen, redraw, command-start redraw and exactness.
func TestSaveRestore(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
	}{
		{"main screen", "\x1b]2;the title\x07\x1b[?2004h\x1b[31mred\x1b[0m line one\r\n" + strings.Repeat("a wrapped line that is longer than the screen ", 3) + "\r\n$ "},
		{"alternate screen", "before\r\n\x1b[?1049h\x1b[2J\x1b[H\x1b[1;3r\x1b[44mfull screen\x1b[0m\x1b[5;10Hcell\x1b[?25l"},
		{"unfinished sequence", "text \x1b[3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(30, 8)
			run(t, m)
			m.Feed(tc.stream)
			m.CommandStart()
			m.Feed("out\r\n")
			r := saveRestore(t, m)
			sameState(t, "after the restore", wait(t, m), wait(t, r))
			for _, step := range []func(*Model){
				func(x *Model) { x.Feed("\x1b[1mmore\x1b[0m output\r\n") },
				func(x *Model) { x.Resize(20, 6) },
				func(x *Model) { x.Feed("\x1b[?1049l after\r\n") },
				func(x *Model) { x.Resize(40, 10) },
			} {
				step(m)
				step(r)
				sameState(t, "after more", wait(t, m), wait(t, r))
			}
			if p, ok := r.Peek().Wait(t.Context()); !ok || !p.Exact {
				t.Fatalf("restored preview: %+v, want exact", p)
			}
		})
	}
}

// TestSaveRestoreBehind: a model that fell behind stays behind (joiners
// get the history alone), where it was in the stream.
func TestSaveRestoreBehind(t *testing.T) {
	m := New(20, 3)
	chunk := strings.Repeat("x", 1<<20)
	for range MaxLag>>20 + 1 {
		m.Feed(chunk)
	}
	run(t, m)
	r := saveRestore(t, m)
	a, b := wait(t, m), wait(t, r)
	if b.Exact || b.Fed != a.Fed {
		t.Fatalf("restored: exact %v fed %d, want false and %d", b.Exact, b.Fed, a.Fed)
	}
}

// TestSaveClosed: an exited terminal's model (closed) is saved too.
func TestSaveClosed(t *testing.T) {
	m := New(20, 3)
	m.Start()
	m.Feed("last words")
	m.Close()
	r := saveRestore(t, m)
	if s := wait(t, r); s.Lines[0] != "last words" || !s.Exact {
		t.Fatalf("restored: %+v", s)
	}
}
