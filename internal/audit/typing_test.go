package audit

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/poll"
)

// TestAuditInputSummed: keys typed one at a time make one input line per
// person and terminal, with the bytes summed: at Enter, before the
// person's next other event, and at Close.
func TestAuditInputSummed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.typing.window = time.Hour // only the other reasons write
	alice := Event{Who: "alice@corp.com", Name: "Alice", Terminal: "terminal:/t1", Title: "build"}
	at := time.Date(2026, 12, 7, 14, 3, 0, 0, time.UTC)
	key := func(e Event, data string) {
		at = at.Add(time.Millisecond)
		e.Bytes, e.Time = len(data), at
		l.Input(e, data == "\r")
	}
	for _, k := range "echo one" {
		key(alice, string(k))
	}
	key(alice, "\r") // a line: 9 bytes
	bob := Event{Who: "bob@corp.com", Terminal: "terminal:/t1"}
	for _, k := range "ls" {
		key(bob, string(k))
	}
	other := alice
	other.Terminal = "terminal:/t2"
	for _, k := range "vi" {
		key(alice, string(k)) // t1
		key(other, string(k)) // t2
	}
	l.Record(Event{Event: ControlTaken, Who: "alice@corp.com", Terminal: "terminal:/t1"}) // writes alice's 2+2 first
	key(bob, "x")
	if err := l.Close(); err != nil { // writes bob's 3
		t.Fatal(err)
	}
	var got []string
	for _, e := range readAll(t, path, Filter{}) {
		got = append(got, e.Event+" "+e.Who+" "+e.Terminal+" "+strconv.Itoa(e.Bytes))
	}
	want := []string{
		"input alice@corp.com terminal:/t1 9",
		"input alice@corp.com terminal:/t1 2",
		"input alice@corp.com terminal:/t2 2",
		"control-taken alice@corp.com terminal:/t1 0",
		"input bob@corp.com terminal:/t1 3",
	}
	if len(got) != len(want) {
		t.Fatalf("trail = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestAuditInputWindowEnds: input with no Enter is written once its window
// has passed, without Sync or Close.
func TestAuditInputWindowEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.typing.window = 50 * time.Millisecond
	for range 5 {
		l.Input(Event{Who: "alice@corp.com", Terminal: "terminal:/t1", Bytes: 1}, false)
	}
	var got []Event
	poll.Until(t, 10*time.Second, "the typed input's line at its window's end", func() bool {
		got = readAll(t, path, Filter{})
		return len(got) > 0
	})
	if len(got) != 1 || got[0].Bytes != 5 || got[0].Event != Input {
		t.Errorf("trail = %+v, want one input line of 5 bytes", got)
	}
}
