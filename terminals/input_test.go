package terminals

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
)

// TestKeystrokesKeepOrder: a keystroke goes straight to the pty only when
// nothing is queued before it, so keystrokes typed while a big paste is
// still queued arrive after the paste, and keystrokes alone arrive in the
// order typed.
func TestKeystrokesKeepOrder(t *testing.T) {
	m := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	uri := "ahp-terminal:/order"
	rec := claimedTerminal(t, m, uri)
	out := filepath.Join(t.TempDir(), "typed")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	seq := int64(0)
	send := func(data string) {
		seq++
		if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: seq}, uri, input(t, data), Policy{}); got != Accepted {
			t.Fatalf("input %d: %v, want accepted", seq, got)
		}
	}
	send("stty raw -echo; echo RE''ADY; head -c 262153 > " + out + "; echo TYPED''DONE\r")
	if err := rec.waitFor(ctx, "READY"); err != nil { // raw: no 4 KiB line limit
		t.Fatal(err)
	}
	paste := strings.Repeat("p", 64<<10)
	var want strings.Builder
	for range 4 {
		send(paste) // 256 KiB: far more than the pty takes at once
		want.WriteString(paste)
		send("k") // a keystroke typed meanwhile: after the paste
		want.WriteString("k")
	}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		send(k)
		want.WriteString(k)
	}
	if err := rec.waitFor(ctx, "TYPEDDONE"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		i := 0
		for i < len(got) && i < want.Len() && got[i] == want.String()[i] {
			i++
		}
		t.Errorf("the program read %d bytes, differing from what was typed at byte %d (got %q…, want %q…)",
			len(got), i, got[i:min(len(got), i+8)], want.String()[i:min(want.Len(), i+8)])
	}
	// With the queue empty the writer's goroutine ends: an idle terminal holds none.
	m.mu.Lock()
	term := m.terms[uri]
	m.mu.Unlock()
	for term.writer.Running() {
		select {
		case <-ctx.Done():
			t.Fatal("the input writer still runs with nothing queued")
		case <-time.After(time.Millisecond):
		}
	}
}
