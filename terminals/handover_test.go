package terminals

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/ahp"
)

// promptTerminal creates a bash terminal claimed by "me" and a recorder
// subscribed to it that has seen its first prompt.
func promptTerminal(ctx context.Context, t *testing.T, m *Manager, uri string) *recorder {
	t.Helper()
	rec := claimedTerminal(t, m, uri)
	if err := rec.waitFor(ctx, "$ "); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestPauseResume (issue 13 point 3, a failed hand-over): a paused manager
// refuses Create and stops its writer; Resume carries on with the same
// shell, input queued during the pause included.
func TestPauseResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	uri := "ahp-terminal:/paused"
	rec := promptTerminal(ctx, t, m, uri)
	pid := m.live(uri).proc.Pid()

	p, err := m.Pause()
	if err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if len(p.FDs) != 2 || len(p.State.Terminals) != 1 || p.State.Terminals[0].Pid != pid {
		t.Fatalf("Pause handed %d descriptors and %+v, want 2 and the terminal of pid %d", len(p.FDs), p.State.Terminals, pid)
	}
	claim := ahp.ClientClaim("me")
	if err := m.Create(ahp.CreateTerminalParams{Channel: "ahp-terminal:/new", Claim: &claim}); !errors.Is(err, ErrLimit) {
		t.Fatalf("Create while paused = %v, want ErrLimit", err)
	}
	// Input dispatched while paused waits in the queue and is written after Resume.
	m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "echo re''sumed\r"), Policy{})
	p.Resume()
	if err := rec.waitFor(ctx, "resumed"); err != nil {
		t.Fatal(err)
	}
	if got := m.live(uri).proc.Pid(); got != pid {
		t.Fatalf("pid after Resume = %d, want %d", got, pid)
	}
}

// TestAdopt (issue 13 point 3): a second manager adopts a paused
// terminal from duplicated descriptors (as SCM_RIGHTS gives them): same
// serverSeq and content, input and output work, the exit code is read from
// the pidfd although this manager did not start the shell.
func TestAdopt(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	old := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
	defer old.Close()
	uri := "ahp-terminal:/adopted"
	rec := promptTerminal(ctx, t, old, uri)
	old.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "echo be''fore\r"), Policy{})
	if err := rec.waitFor(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	p, err := old.Pause()
	if err != nil {
		t.Fatalf("Pause: %v", err)
	}
	seq := old.ServerSeq()
	dups := make([]int, len(p.FDs))
	for i, fd := range p.FDs {
		if dups[i], err = unix.Dup(fd); err != nil {
			t.Fatal(err)
		}
	}

	m := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	if n, err := m.Adopt(p.State, dups); err != nil || n != 2 {
		t.Fatalf("Adopt = %d, %v; want 2 descriptors adopted", n, err)
	}
	p.Commit()
	if got := m.ServerSeq(); got != seq {
		t.Fatalf("serverSeq after Adopt = %d, want %d", got, seq)
	}
	rec2 := newRecorder("me")
	snap, err := m.Subscribe(rec2, uri)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, part := range snap.State.(ahp.TerminalState).Content {
		out.WriteString(part.Text())
	}
	if !strings.Contains(out.String(), "before") {
		t.Fatalf("adopted content = %q, want it to hold %q", out.String(), "before")
	}
	m.Dispatch(rec2, ahp.Origin{ClientID: "me", ClientSeq: 2}, uri, input(t, "echo af''ter; exit 4\r"), Policy{})
	for _, want := range []string{"after", `"terminal/exited"`, `"exitCode":4`} {
		if err := rec2.waitFor(ctx, want); err != nil {
			t.Fatal(err)
		}
	}
	if old.Exists(uri) {
		t.Fatal("the old manager still lists the terminal after Commit")
	}
}
