package terminals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/proctest"
	"github.com/termhost/termhost/terminals/hub"
)

// recorder is a Subscriber that keeps every frame it is given, and the
// terminal's output decoded from them.
type recorder struct {
	clientID string
	mu       sync.Mutex
	frames   []string
	output   strings.Builder // the snapshot's content, then each terminal/data
	changed  chan struct{}
}

func newRecorder(clientID string) *recorder {
	return &recorder{clientID: clientID, changed: make(chan struct{}, 1)}
}

// claimedTerminal creates a terminal claimed by client "me" and returns a
// recorder for "me" subscribed to it.
func claimedTerminal(t *testing.T, m *Manager, uri string) *recorder {
	t.Helper()
	claim := ahp.ClientClaim("me")
	if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder("me")
	snap, err := m.Subscribe(rec, uri)
	if err != nil {
		t.Fatal(err)
	}
	// What the shell printed before the subscribe (its first prompt, on a
	// fast machine) is in the snapshot, not in a frame: record it too.
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.frames = append(rec.frames, string(b))
	for _, p := range snap.State.(ahp.TerminalState).Content {
		rec.output.WriteString(p.Text())
	}
	rec.mu.Unlock()
	return rec
}

func (r *recorder) Shape() ahp.Shape { return ahp.Current }
func (r *recorder) Scope() string    { return "" }
func (r *recorder) ClientID() string { return r.clientID }
func (r *recorder) ViewOnly() bool   { return false }
func (r *recorder) Backlog() int     { return 0 }
func (r *recorder) Hold()            {}
func (r *recorder) Drained() <-chan struct{} {
	return closed
}
func (r *recorder) Deliver(f *hub.Frame) bool {
	r.mu.Lock()
	r.frames = append(r.frames, string(f.Bytes(r.Shape())))
	if a := f.Envelope().Action; a.Type == ahp.TerminalData {
		r.output.WriteString(a.Data)
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	return true
}

// waitFor waits until the frames received (as JSON) or the output contain
// want, or ctx ends. The output is searched as one text: a marker printed
// at once can still come in two frames.
func (r *recorder) waitFor(ctx context.Context, want string) error {
	for {
		r.mu.Lock()
		out := r.output.String()
		found := strings.Contains(strings.Join(r.frames, ""), want) || strings.Contains(out, want)
		r.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-r.changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %q: %w; the output ends %q", want, ctx.Err(), out[max(0, len(out)-300):])
		}
	}
}

func testManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	if cfg.Shell == "" {
		cfg.Shell, cfg.ShellArgs = "/bin/bash", []string{"--norc", "--noprofile"}
	}
	cfg.Cwd = t.TempDir()
	cfg.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PS1=$ "}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func input(_ *testing.T, data string) ahp.Action {
	return ahp.Action{Type: ahp.TerminalInput, Data: data}
}

// stuckTerminal starts a terminal whose program never reads its input and
// queues a megabyte of input for it: the writer ends up parked in write(2).
func stuckTerminal(t *testing.T, m *Manager) string {
	t.Helper()
	uri := "ahp-terminal:/stuck"
	rec := claimedTerminal(t, m, uri)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "stty -icanon -echo; echo NOT''READING; sleep 600\r"), Policy{})
	if err := rec.waitFor(ctx, "NOTREADING"); err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("x", 64<<10)
	for i := range 16 { // 1 MiB: far more than the pty buffers
		m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: int64(2 + i)}, uri, input(t, chunk), Policy{})
	}
	return uri
}

// TestDisposeWithStuckInput: a program that never reads
// its stdin and a megabyte of queued input hang neither disposeTerminal nor
// Close (SIGTERM): the writer blocked in write(2) on the pty is woken.
func TestDisposeWithStuckInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(m *Manager, uri string)
	}{
		{"disposeTerminal then Close", func(m *Manager, uri string) { _ = m.Dispose(uri); m.Close() }},
		{"Close", func(m *Manager, _ string) { m.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
			uri := stuckTerminal(t, m)
			// Bounded by a deadline: before the fix this never returned.
			deadline, stop := context.WithTimeout(t.Context(), 3*time.Second)
			defer stop()
			done := make(chan struct{})
			go func() { defer close(done); tc.end(m, uri) }()
			select {
			case <-done:
			case <-deadline.Done():
				t.Fatal("did not return within 3 s with 1 MiB of input the program does not read")
			}
		})
	}
}

// TestCloseRacingCreate: a Create in flight while Close
// runs leaves no live shell behind.
func TestCloseRacingCreate(t *testing.T) {
	for round := range 40 {
		m := testManager(t, Config{Shell: "/bin/sleep", ShellArgs: []string{"600"}, DisposeGrace: 100 * time.Millisecond})
		start := make(chan struct{})
		created := make(chan error, 1)
		go func() {
			<-start
			claim := ahp.ClientClaim("me")
			created <- m.Create(ahp.CreateTerminalParams{Channel: "ahp-terminal:/race", Claim: &claim})
		}()
		close(start)
		// Close once Create has reserved the URI: it lands while the shell
		// spawns, or just after it was published.
		for !m.reserved("ahp-terminal:/race") {
			runtime.Gosched()
		}
		m.Close()
		err := <-created
		if kids := proctest.LiveChildren(t); len(kids) > 0 {
			for _, pid := range kids {
				if p, ferr := os.FindProcess(pid); ferr == nil {
					_ = p.Kill()
					_, _ = p.Wait()
				}
			}
			t.Fatalf("round %d: Create returned %v and Close returned, yet children %v are alive", round, err, kids)
		}
	}
}

// reserved reports whether Create has taken the URI (live or not yet).
func (m *Manager) reserved(uri string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.terms[uri] != nil
}

// TestProgramTitleBounded: a title a program sets with an
// OSC sequence stays within ahp.MaxTitle like a client's rename (the
// shell-integration processor keeps at most 256 characters).
func TestProgramTitleBounded(t *testing.T) {
	m := testManager(t, Config{})
	defer m.Close()
	uri := "ahp-terminal:/title"
	rec := claimedTerminal(t, m, uri)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// 2000 "é" (4000 bytes, under the scanner's 4096-byte title cap) in an
	// OSC 2 title, then a marker.
	cmd := `printf '\033]2;%s\007' "$(printf 'é%.0s' $(seq 2000))"; echo TITLE''SET` + "\r"
	m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, cmd), Policy{})
	if err := rec.waitFor(ctx, "TITLESET"); err != nil {
		t.Fatal(err)
	}
	for _, info := range m.Terminals() {
		if info.Resource != uri {
			continue
		}
		if len(info.Title) > ahp.MaxTitle || !strings.HasPrefix(info.Title, "éé") {
			t.Fatalf("catalogue title is %d bytes (%q…), want a title of é within %d bytes", len(info.Title), ahp.Truncate(info.Title, 20), ahp.MaxTitle)
		}
		return
	}
	t.Fatalf("terminal %s not in the catalogue", uri)
}

// TestNonceFileRemoved: the file that hands a shell its nonce (emptied by
// the shell's script, with a builtin) is deleted once the shell is up, and
// at once when the shell cannot start; no file of a terminal outlives it.
func TestNonceFileRemoved(t *testing.T) {
	nonceFiles := func(m *Manager) []string {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(m.scripts, "nonce-*"))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	t.Run("shell up", func(t *testing.T) {
		m := testManager(t, Config{Shell: "/bin/bash", ShellArgs: []string{}, ShellIntegration: true, DisposeGrace: 100 * time.Millisecond})
		defer m.Close()
		uri := "ahp-terminal:/nonce"
		rec := claimedTerminal(t, m, uri)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "echo UP''NOW\r"), Policy{})
		if err := rec.waitFor(ctx, "UPNOW"); err != nil {
			t.Fatal(err)
		}
		m.mu.Lock()
		integrated := m.terms[uri].integrated
		m.mu.Unlock()
		if !integrated {
			t.Fatal("the shell was not integrated: nothing handed it a nonce")
		}
		if files := nonceFiles(m); len(files) != 0 {
			t.Errorf("nonce files left with the shell up: %v", files)
		}
	})
	t.Run("spawn fails", func(t *testing.T) {
		m := testManager(t, Config{Shell: filepath.Join(t.TempDir(), "bash"), ShellArgs: []string{}, ShellIntegration: true})
		defer m.Close()
		var se *StartError
		claim := ahp.ClientClaim("me")
		if err := m.Create(ahp.CreateTerminalParams{Channel: "ahp-terminal:/nonce", Claim: &claim}); !errors.As(err, &se) {
			t.Fatalf("Create = %v, want a StartError", err)
		}
		if files := nonceFiles(m); len(files) != 0 {
			t.Errorf("nonce files left by a shell that did not start: %v", files)
		}
	})
}
