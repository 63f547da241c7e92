package terminals

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/hub"
)

// stream is a Subscriber that keeps what a client would write into its
// terminal: the snapshot's content, then every terminal/data in order.
type stream struct {
	recorder
	mu      sync.Mutex
	out     strings.Builder
	changed chan struct{}
}

func newStream(clientID string) *stream {
	return &stream{recorder: recorder{clientID: clientID}, changed: make(chan struct{}, 1)}
}

func (s *stream) Deliver(f *hub.Frame) bool {
	if a := f.Envelope().Action; a.Type == ahp.TerminalData {
		s.mu.Lock()
		s.out.WriteString(a.Data)
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	return true
}

func (s *stream) snapshot(snap ahp.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range snap.State.(ahp.TerminalState).Content {
		s.out.WriteString(p.Text())
	}
}

func (s *stream) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func (s *stream) waitFor(ctx context.Context, want string) error {
	for !strings.Contains(s.text(), want) {
		select {
		case <-s.changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %q: %w", want, ctx.Err())
		}
	}
	return nil
}

// fullScreenScript enters the alternate screen, sets modes, a scroll
// region, colours and a title, redraws a box rounds times, scrolls inside
// the region and ends on a known screen, then waits for input.
const fullScreenScript = `
printf '\e[?1049h\e[?1h\e=\e[?2004h\e[?1000h\e[?1006h\e[?7l\e]2;build monitor\a\e[9;18r'
for i in $(seq 1 %d); do
  printf '\e[H\e[2J\e[1;38;5;196m+--------------------------+\e[0m'
  for r in 2 3 4 5 6; do
    printf '\e[%%d;1H\e[38;2;10;200;30;48;5;17m| round %%04d row %%d \e[3;4;7mstyled\e[0m |' $r $i $r
  done
  printf '\e[7;1H\e[1;38;5;196m+--------------------------+\e[0m'
done
printf '\e[18;1H'
for n in $(seq 1 30); do printf '\e[35mscrolled line %%d \xc3\xa9\xe2\x9c\x93 wide:\xe7\x95\x8c\e[0m\n' $n; done
printf '\e[20;3H\e[1;32mALL-''DRAWN\e[0m\e[12;7H\e[5 q\e]0;final''title\a'
read -r _
`

// TestJoinerGetsExactScreen: a client that subscribes
// after a full-screen program pushed more than twice the scrollback through
// the screen gets the screen a client that watched from the start has:
// every cell and its style, the cursor, the alternate screen, the modes and
// the scroll region (both rendered with charmbracelet/x/vt).
func TestJoinerGetsExactScreen(t *testing.T) {
	const scrollback = 16 << 10
	m := testManager(t, Config{Scrollback: scrollback})
	defer m.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const uri, cols, rows = "ahp-terminal:/full", 60, 22

	claim := ahp.ClientClaim("me")
	if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Cols: cols, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	watcher := newStream("me")
	snap, err := m.Subscribe(watcher, uri)
	if err != nil {
		t.Fatal(err)
	}
	watcher.snapshot(snap)

	script := filepath.Join(t.TempDir(), "full.sh")
	rounds := 2 * scrollback / 400 // each round prints about 600 bytes
	if err := os.WriteFile(script, fmt.Appendf(nil, fullScreenScript, rounds), 0o600); err != nil {
		t.Fatal(err)
	}
	m.Dispatch(watcher, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "bash "+script+"\r"), Policy{})
	if err := watcher.waitFor(ctx, "\x1b]0;finaltitle\a"); err != nil {
		t.Fatal(err)
	}
	if n := len(watcher.text()); n < 2*scrollback {
		t.Fatalf("the program printed %d bytes, want more than 2 × %d", n, scrollback)
	}

	joiner := newStream("other")
	snap, err = m.Subscribe(joiner, uri)
	if err != nil {
		t.Fatal(err)
	}
	joiner.snapshot(snap)

	// What a client had without the screen model: the history alone.
	plain := newStream("plain")
	plainSnap, err := m.hub.Subscribe(plain, uri)
	if err != nil {
		t.Fatal(err)
	}
	plain.snapshot(plainSnap)

	want := newVT(t, cols, rows, watcher.text())
	got := newVT(t, cols, rows, joiner.text())
	if diff := screenDiff(want, got); diff != "" {
		t.Fatalf("joined screen differs from the watcher's:\n%s", diff)
	}
	// The region and the modes show in what the next output does.
	probe := "\x1b[18;1Hnext\nnext line\n"
	want.write(probe)
	got.write(probe)
	if diff := screenDiff(want, got); diff != "" {
		t.Fatalf("after more output, joined screen differs from the watcher's:\n%s", diff)
	}
	// Without the model the test fails: the trimmed history alone does not
	// draw the screen.
	if diff := screenDiff(newVT(t, cols, rows, watcher.text()), newVT(t, cols, rows, plain.text())); diff == "" {
		t.Fatalf("the history alone already draws the screen: the test proves nothing")
	}
}

// vtScreen is a vt emulator with what it does not expose (title, mode
// reports) captured.
type vtScreen struct {
	e     *vt.Emulator
	title string
	done  chan struct{}
	reply chan string
}

func newVT(t *testing.T, cols, rows int, data string) *vtScreen {
	s := &vtScreen{e: vt.NewEmulator(cols, rows), done: make(chan struct{}), reply: make(chan string, 16)}
	s.e.SetCallbacks(vt.Callbacks{Title: func(v string) { s.title = v }})
	go func() {
		defer close(s.done)
		buf := make([]byte, 256)
		for {
			n, err := s.e.Read(buf)
			if err != nil {
				return
			}
			s.reply <- string(buf[:n])
		}
	}()
	// Closing the pipe, not the emulator: vt's Close races with Read.
	t.Cleanup(func() { _ = s.e.InputPipe().(*io.PipeWriter).Close(); <-s.done })
	s.write(data)
	return s
}

func (s *vtScreen) write(data string) { _, _ = s.e.WriteString(data) }

// modes asks for the modes a joiner must get right (DECRQM).
func (s *vtScreen) modes() string {
	var out []string
	for _, m := range []int{1, 6, 7, 25, 66, 1000, 1002, 1003, 1006, 1049, 2004} {
		s.write(fmt.Sprintf("\x1b[?%d$p", m))
		out = append(out, strings.TrimPrefix(<-s.reply, "\x1b[?")) // DECRPM
	}
	return strings.Join(out, " ")
}

// screenDiff lists the differences between two screens, "" if none.
func screenDiff(want, got *vtScreen) string {
	var d []string
	add := func(what string, w, g any) {
		if fmt.Sprint(w) != fmt.Sprint(g) {
			d = append(d, fmt.Sprintf("%s: got %q, want %q", what, fmt.Sprint(g), fmt.Sprint(w)))
		}
	}
	add("alt screen", want.e.IsAltScreen(), got.e.IsAltScreen())
	add("cursor", want.e.CursorPosition(), got.e.CursorPosition())
	add("cursor hidden", want.e.CursorHidden(), got.e.CursorHidden())
	ws, wb := want.e.CursorStyle()
	gs, gb := got.e.CursorStyle()
	add("cursor style", fmt.Sprint(ws, wb), fmt.Sprint(gs, gb))
	add("title", want.title, got.title)
	add("modes", want.modes(), got.modes())
	for y := range want.e.Height() {
		for x := range want.e.Width() {
			w, g := want.e.CellAt(x, y), got.e.CellAt(x, y)
			if !w.Equal(g) {
				d = append(d, fmt.Sprintf("cell %d,%d: got %+v, want %+v", x, y, *g, *w))
				if len(d) > 20 {
					return strings.Join(d, "\n")
				}
			}
		}
	}
	return strings.Join(d, "\n")
}
