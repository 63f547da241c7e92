package terminals

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/terminals/screen"
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

// TestPauseResume (a failed hand-over): a paused manager
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

	p, err := m.Pause(nil)
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

// TestAdopt: a second manager adopts a paused
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
	p, err := old.Pause(nil)
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

// handOver pauses old, telling it who was connected, and adopts its
// terminals into a new manager of cfg (edit may change the state first, as
// another version would send it).
func handOver(t *testing.T, old *Manager, connected []string, cfg Config, edit func(*Handover)) *Manager {
	t.Helper()
	p, err := old.Pause(connected)
	if err != nil {
		t.Fatalf("Pause: %v", err)
	}
	dups := make([]int, len(p.FDs))
	for i, fd := range p.FDs {
		if dups[i], err = unix.Dup(fd); err != nil {
			t.Fatal(err)
		}
	}
	st := p.State
	if edit != nil {
		edit(&st)
	}
	m := testManager(t, cfg)
	t.Cleanup(m.Close)
	if _, err := m.Adopt(st, dups); err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	p.Commit()
	return m
}

// TestAdoptKeepsScreen: the screen model goes across a hand-over: a
// full-screen program's screen is, for a preview and for a joiner's
// snapshot (its redraw), the same after it as before.
func TestAdoptKeepsScreen(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	old := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
	defer old.Close()
	uri := "ahp-terminal:/screen"
	rec := promptTerminal(ctx, t, old, uri)
	old.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri,
		input(t, `printf '\e[?1049h\e[2J\e[H\e[1;33mfull-%s\e[0m\e[5;10Hcell\e[3;1H' screen; read x`+"\r"), Policy{})
	if err := rec.waitFor(ctx, "full-screen"); err != nil {
		t.Fatal(err)
	}
	look := func(m *Manager) (screen.State, string) {
		t.Helper()
		j := newRecorder("joiner")
		snap, err := m.Subscribe(j, uri)
		if err != nil {
			t.Fatal(err)
		}
		m.UnsubscribeAll(j)
		scr, err := m.Screen(ctx, rec, uri)
		if err != nil {
			t.Fatalf("Screen: %v", err)
		}
		var b strings.Builder
		for _, part := range snap.State.(ahp.TerminalState).Content {
			b.WriteString(part.Text())
		}
		return scr, b.String()
	}
	poll.Until(t, 20*time.Second, "the screen", func() bool {
		scr, _ := look(old)
		return scr.AltScreen && len(scr.Lines) > 4 && scr.Lines[4] == "         cell"
	})
	before, joinedBefore := look(old)
	if !strings.Contains(joinedBefore, "\x1b[?1049h") {
		t.Fatalf("a joiner's content before = %q, want the screen's redraw", joinedBefore)
	}
	m := handOver(t, old, []string{"me"}, Config{DisposeGrace: 100 * time.Millisecond}, nil)
	after, joinedAfter := look(m)
	if strings.Join(after.Lines, "\n") != strings.Join(before.Lines, "\n") || after.AltScreen != before.AltScreen || !after.Exact {
		t.Fatalf("preview after the hand-over:\n%+v\nwant\n%+v", after, before)
	}
	if joinedAfter != joinedBefore {
		t.Fatalf("a joiner's content after the hand-over:\n%q\nwant\n%q", joinedAfter, joinedBefore)
	}
}

// TestNoScreenSaysWhy: a terminal without a screen model says why, and
// blames --screen-model=false only when the server was started so.
func TestNoScreenSaysWhy(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name      string
		cfg       Config
		edit      func(*Handover)
		want, not string
	}{
		{"started without models", Config{NoScreenModel: true}, nil, "--screen-model=false", "upgrade"},
		{"adopted from a version that hands no model over", Config{}, func(h *Handover) {
			for i := range h.Terminals {
				h.Terminals[i].Screen = nil // as an older version sends it
			}
		}, "carried over by an upgrade from a termhost version that did not hand screen models over", "--screen-model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
			defer old.Close()
			uri := "ahp-terminal:/noscreen"
			rec := promptTerminal(ctx, t, old, uri)
			tc.cfg.DisposeGrace = 100 * time.Millisecond
			m := handOver(t, old, nil, tc.cfg, tc.edit)
			_, err := m.Screen(ctx, rec, uri)
			if !errors.Is(err, ErrNoScreen) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
				t.Fatalf("Screen: %v; want ErrNoScreen saying %q, not %q", err, tc.want, tc.not)
			}
		})
	}
}

// TestAdoptKeepsClaimsOfConnected: across a hand-over, a claim whose
// holder was connected stays held for the grace (it reconnects); one whose
// holder had already left is nobody's at once: another client types and
// gets it.
func TestAdoptKeepsClaimsOfConnected(t *testing.T) {
	old := testManager(t, Config{DisposeGrace: 100 * time.Millisecond, ClaimGrace: time.Hour})
	defer old.Close()
	here, gone := "ahp-terminal:/here", "ahp-terminal:/gone"
	for uri, holder := range map[string]string{here: "stays", gone: "left"} {
		claim := ahp.ClientClaim(holder)
		if err := old.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim}); err != nil {
			t.Fatal(err)
		}
		old.Connected(holder)
	}
	old.ConnectionLost("left") // gone before the hand-over: its grace had no end yet
	connected := old.ConnectedClients()
	old.ConnectionLost("stays") // closed by the hand-over
	m := handOver(t, old, connected, Config{DisposeGrace: 100 * time.Millisecond, ClaimGrace: time.Hour}, nil)

	other := &member{id: "other", kind: KindOwner}
	m.Connected(other.id)
	for uri, want := range map[string]Outcome{here: Rejected, gone: Accepted} {
		if _, err := m.Subscribe(other, uri); err != nil {
			t.Fatal(err)
		}
		if got := m.Dispatch(other, ahp.Origin{ClientID: other.id, ClientSeq: 1}, uri, input(t, "echo hi\r"), Policy{}); got != want {
			t.Errorf("%s: input by another client = %v, want %v", uri, got, want)
		}
	}
	if c, _ := m.Claim(gone); c != ahp.ClientClaim(other.id) {
		t.Errorf("claim of %s = %+v, want the client that typed", gone, c)
	}
	if c, _ := m.Claim(here); c != ahp.ClientClaim("stays") {
		t.Errorf("claim of %s = %+v, want still its holder's", here, c)
	}
}
