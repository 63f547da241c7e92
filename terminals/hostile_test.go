package terminals

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
)

// lockedBuffer is a log sink the test reads while the manager writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hostileLinksScript paints every cell of the screen with one of two
// 64 KiB OSC 8 links, alternating (139 KB of such output once made a
// 126 MB redraw and took the server down). Each link is set once;
// the cells are reached by cursor moves, so the output stays small.
const hostileLinksScript = `
a=$(head -c 65536 /dev/zero | tr '\0' a); b=$(head -c 65536 /dev/zero | tr '\0' b)
cols=$(tput cols); rows=$(tput lines)
for pass in 0 1; do
  if [ $pass = 0 ]; then printf '\e]8;;https://x/%s\e\\' "$a"; else printf '\e]8;;https://x/%s\e\\' "$b"; fi
  for r in $(seq 1 $rows); do
    for c in $(seq 1 $cols); do
      [ $(( (r + c) % 2 )) = $pass ] && printf '\e[%d;%dHx' $r $c
    done
  done
done
printf '\e]8;;\e\\\e]2;%s\a' "$(head -c 1048576 /dev/zero | tr '\0' t)"
printf '\e[H'; echo PAINT''ED; read -r _
`

// TestHostileOutputThroughAPty (end to end): a real shell
// on a real pty prints the output that took the server down (two 64 KiB
// links on alternating cells and a 1 MiB title, on a screen resized to
// 1000×1000 first); a joiner then gets a snapshot bounded by a small
// multiple of the screen's cells, the server logs that the redraw was over
// budget or keeps it within it, and another terminal goes on working.
func TestHostileOutputThroughAPty(t *testing.T) {
	logs := &lockedBuffer{}
	m := testManager(t, Config{Scrollback: 64 << 10, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	defer m.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	const uri, other = "ahp-terminal:/hostile", "ahp-terminal:/bystander"
	claim := ahp.ClientClaim("me")
	for _, u := range []string{uri, other} {
		if err := m.Create(ahp.CreateTerminalParams{Channel: u, Claim: &claim, Cols: 80, Rows: 24}); err != nil {
			t.Fatal(err)
		}
	}
	watcher := newStream("me")
	snap, err := m.Subscribe(watcher, uri)
	if err != nil {
		t.Fatal(err)
	}
	watcher.snapshot(snap)

	script := filepath.Join(t.TempDir(), "paint.sh")
	if err := os.WriteFile(script, []byte(hostileLinksScript), 0o600); err != nil {
		t.Fatal(err)
	}
	m.Dispatch(watcher, ahp.Origin{ClientID: "me", ClientSeq: 2}, uri, input(t, "bash "+script+"\r"), Policy{})
	if err := watcher.waitFor(ctx, "PAINTED"); err != nil {
		t.Fatal(err)
	}
	printed := len(watcher.text())
	// The model catches up first (on a loaded machine it may take longer
	// than a join waits): the join below then gets the redraw, or the
	// reason it did not, from the model itself.
	if _, ok := m.live(uri).scr.model.Peek().Wait(ctx); !ok {
		t.Fatal("the screen model did not catch up")
	}

	joiner := newStream("other")
	snap, err = m.Subscribe(joiner, uri)
	if err != nil {
		t.Fatal(err)
	}
	st := snap.State.(ahp.TerminalState)
	content, _ := json.Marshal(st.Content)
	plainSnap, err := m.hub.Subscribe(newStream("plain"), uri) // the history alone
	if err != nil {
		t.Fatal(err)
	}
	history, _ := json.Marshal(plainSnap.State.(ahp.TerminalState).Content)
	// Bound: the history the server keeps (its scrollback, as JSON) plus
	// the redraw's budget (README: ≤ 64 B per cell + 16 KiB, cells capped).
	const cellsCap = 65536
	bound := len(history) + 64*cellsCap + 16<<10
	if len(content) > bound || len(content) > maxWithRedraw {
		t.Fatalf("joiner's content is %d bytes as JSON after %d bytes of output; want ≤ %d and ≤ %d", len(content), printed, bound, maxWithRedraw)
	}
	if len(st.Title) > 1<<10+8 {
		t.Errorf("title kept at %d bytes, want it clipped to about 1 KiB", len(st.Title))
	}
	t.Logf("%d bytes printed; joiner's content %d bytes as JSON (history alone %d)", printed, len(content), len(history))
	if len(content) == len(history) && !strings.Contains(logs.String(), "screen redraw over budget") {
		t.Errorf("the joiner got the history alone, and the server did not say why:\n%s", logs.String())
	}

	// Another terminal was never disturbed.
	bystander := newStream("me")
	snap, err = m.Subscribe(bystander, other)
	if err != nil {
		t.Fatal(err)
	}
	bystander.snapshot(snap)
	m.Dispatch(bystander, ahp.Origin{ClientID: "me", ClientSeq: 3}, other, input(t, "echo still-$((40+2))\r"), Policy{})
	if err := bystander.waitFor(ctx, "still-42"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("errors logged:\n%s", logs.String())
	}
}
