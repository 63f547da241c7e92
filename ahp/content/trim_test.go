package content

import (
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestTrim: a snapshot's content loaded into a store is cut like the
// store's own output (the Go client's mirror uses it).
func TestTrim(t *testing.T) {
	u := func(s string) ahp.Part { return ahp.Part{Type: ahp.PartUnclassified, Value: s} }
	cmd := func(s string) ahp.Part { return ahp.Part{Type: ahp.PartCommand, CommandID: "c", Output: s} }
	cases := []struct {
		name   string
		parts  []ahp.Part
		budget int
		want   string
	}{
		{"under", []ahp.Part{u("abc")}, 10, "abc"},
		{"unbounded", []ahp.Part{u("abc")}, 0, "abc"},
		{"drop head parts", []ahp.Part{u("aaaa"), cmd("bb"), u("cc")}, 4, "bbcc"},
		{"cut at newline", []ahp.Part{u("line1\nline2\nend")}, 9, "end"},
		{"cut at rune", []ahp.Part{u("ééé")}, 3, "é"},
		{"command head", []ahp.Part{cmd("xxxx\nyy")}, 4, "yy"},
		{"not inside an escape", []ahp.Part{u("abcdefgh\x1b[31mred")}, 6, "red"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]ahp.Part(nil), tc.parts...)
			got := Trim(tc.parts, tc.budget)
			if partsText(got) != tc.want {
				t.Errorf("Trim(%q, %d) = %q, want %q", partsText(tc.parts), tc.budget, partsText(got), tc.want)
			}
			if partsText(in) != partsText(tc.parts) {
				t.Errorf("Trim modified its input")
			}
		})
	}
}

// TestReduce: the store's Reduce gives the state ahp.ReduceTerminal gives,
// with the content in the store.
func TestReduce(t *testing.T) {
	actions := []ahp.Action{
		{Type: ahp.TerminalData, Data: "hi\r\n"},
		{Type: ahp.TerminalCommandExecuted, CommandID: "c1", CommandLine: "ls"},
		{Type: ahp.TerminalData, Data: "out"},
		{Type: ahp.TerminalCommandFinished, CommandID: "c1", ExitCode: intp(0)},
		{Type: ahp.TerminalTitleChanged, Title: "t"},
		{Type: ahp.TerminalResized, Cols: 100, Rows: 30},
	}
	store := New(0)
	var got, want ahp.TerminalState
	for _, a := range actions {
		got = store.Reduce(got, a)
		want = ahp.ReduceTerminal(want, a)
	}
	got.Content = store.Snapshot()
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("Reduce gave\n %s\nwant\n %s", g, w)
	}
	if store.Size() != len("hi\r\nout") {
		t.Errorf("Size() = %d, want %d", store.Size(), len("hi\r\nout"))
	}
}
