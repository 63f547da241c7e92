package hub

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// TestBinaryFrame: a frame's binary data message, built with one copy of
// its data, is byte for byte what ext.AppendBinaryData makes of the whole
// envelope, invalid UTF-8 included; other frames have none.
func TestBinaryFrame(t *testing.T) {
	for _, data := range []string{"", "a", "\x1b[1;32mok\x1b[0m ü 漢字\r\n", "bad \xff\xfe utf-8 \xe2\x82"} {
		env := ahp.Envelope{Channel: "ahp-terminal:/t1", ServerSeq: 7,
			Action: ahp.Action{Type: ahp.TerminalData, Data: data}}
		want, err := ext.AppendBinaryData(nil, env, ahp.Current)
		if err != nil {
			t.Fatal(err)
		}
		// Valid data (all a terminal publishes) fills an exactly sized buffer.
		got := newFrame(env).Binary()
		if !bytes.Equal(got, want) || (utf8.ValidString(data) && cap(got) != len(got)) {
			t.Errorf("data %q: binary message %q (cap %d), want %q", data, got, cap(got), want)
		}
	}
	title := ahp.Envelope{Channel: "ahp-terminal:/t1", ServerSeq: 8, Action: ahp.Action{Type: ahp.TerminalTitleChanged, Title: "x"}}
	if got := newFrame(title).Binary(); got != nil {
		t.Errorf("a title change as a binary data message: %q", got)
	}
}
