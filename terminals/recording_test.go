package terminals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/recording"

	"github.com/termhost/termhost/internal/poll"
)

// stepClock is a fake clock that advances 10 ms at each reading.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(10 * time.Millisecond)
	return c.now
}

// outputOf is what a recorder saw of a terminal's output: the subscribe
// snapshot's content, then every terminal/data.
func outputOf(t *testing.T, rec *recorder) string {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out strings.Builder
	var snap struct {
		State ahp.TerminalState `json:"state"`
	}
	if err := json.Unmarshal([]byte(rec.frames[0]), &snap); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	for _, p := range snap.State.Content {
		out.WriteString(p.Text())
	}
	for _, f := range rec.frames[1:] {
		var msg struct {
			Params ahp.Envelope `json:"params"`
		}
		if err := json.Unmarshal([]byte(f), &msg); err != nil {
			t.Fatalf("frame %s: %v", f, err)
		}
		if env := msg.Params; env.Channel != ahp.RootURI && env.Action.Type == ahp.TerminalData {
			out.WriteString(env.Action.Data)
		}
	}
	return out.String()
}

// waitCount waits until the frames hold want n times.
func waitCount(ctx context.Context, rec *recorder, want string, n int) error {
	for {
		rec.mu.Lock()
		got := strings.Count(strings.Join(rec.frames, ""), want)
		rec.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-rec.changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d × %q (have %d): %w", n, want, got, ctx.Err())
		}
	}
}

func recordingMeta(m *Manager, uri string) string {
	for _, info := range m.Terminals() {
		if info.Resource == uri {
			var meta map[string]string
			_ = json.Unmarshal(info.Meta, &meta)
			return meta[MetaRecording]
		}
	}
	return "no terminal"
}

// TestRecordingRoundTrip: a terminal created with
// _meta termhost/record writes an asciicast v2 file that follows the
// format's rules, holds exactly the terminal's output, a marker per
// command with its command line, the resizes and the exit; it stays until
// the terminal is disposed.
func TestRecordingRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "recordings")
	clock := &stepClock{now: time.Unix(1_700_000_000, 0)}
	// No --norc: shell integration is an --init-file (HOME is empty).
	m := testManager(t, Config{Shell: "/bin/bash", ShellIntegration: true, RecordDir: dir, RecordClock: clock.Now, DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	uri := "ahp-terminal:/rec1"
	claim := ahp.ClientClaim("me")
	if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Meta: json.RawMessage(`{"termhost/record":true}`)}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder("me")
	snap, err := m.Subscribe(rec, uri)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(snap)
	rec.mu.Lock()
	rec.frames = append([]string{string(b)}, rec.frames...) // the snapshot comes first
	rec.mu.Unlock()
	if got := recordingMeta(m, uri); got != RecordingOn {
		t.Errorf("catalogue _meta %s = %q, want %q", MetaRecording, got, RecordingOn)
	}
	dispatch := func(seq int64, a ahp.Action) {
		if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: seq}, uri, a, Policy{}); got != Accepted {
			t.Fatalf("dispatch %+v = %v, want Accepted", a, got)
		}
	}
	// Shell integration is up: in the snapshot already, or announced later.
	if st := snap.State.(ahp.TerminalState); st.SupportsCommandDetection == nil || !*st.SupportsCommandDetection {
		if err := rec.waitFor(ctx, `"terminal/commandDetectionAvailable"`); err != nil {
			t.Fatal(err)
		}
	}
	commands := []string{`printf 'one\n\033[1mtwo\033[0m\n'`, "echo three"}
	for i, c := range commands {
		dispatch(int64(i+1), input(t, c+"\r"))
		if err := waitCount(ctx, rec, `"terminal/commandFinished"`, i+1); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.waitFor(ctx, "three"); err != nil {
		t.Fatal(err)
	}
	dispatch(10, ahp.Action{Type: ahp.TerminalResized, Cols: 100, Rows: 30})
	dispatch(11, input(t, "exit 0\r"))
	if err := rec.waitFor(ctx, `"terminal/exited"`); err != nil {
		t.Fatal(err)
	}
	if got := recordingMeta(m, uri); got != RecordingStopped {
		t.Errorf("catalogue _meta after the exit = %q, want %q", got, RecordingStopped)
	}

	path := m.RecordingPath(uri)
	if path != filepath.Join(dir, "rec1.cast") {
		t.Fatalf("RecordingPath = %q, want %q", path, filepath.Join(dir, "rec1.cast"))
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cast, err := recording.Parse(f)
	f.Close()
	if err != nil {
		t.Fatalf("the recording is not valid asciicast v2: %v", err)
	}
	if h := cast.Header; h.Width != 80 || h.Height != 24 || h.Env["TERM"] != "xterm-256color" || h.Env["SHELL"] != "/bin/bash" || h.Timestamp != 1_700_000_000 {
		t.Errorf("header = %+v, want 80x24, TERM, SHELL and the fake clock's time", h)
	}
	var markers []string
	sawResize := false
	for _, ev := range cast.Events {
		switch ev.Code {
		case "m":
			markers = append(markers, ev.Data)
		case "r":
			sawResize = sawResize || ev.Data == "100x30"
		case "i":
			t.Errorf("input recorded: %q", ev.Data)
		}
	}
	if want := append(slices.Clone(commands), "exit 0", "exited with code 0"); !slices.Equal(markers, want) {
		t.Errorf("markers = %q, want %q", markers, want)
	}
	if !sawResize {
		t.Errorf("no resize event 100x30 in %+v", cast.Events)
	}
	if got, want := cast.Output(), outputOf(t, rec); got != want {
		t.Errorf("recorded output differs from the terminal's:\ngot  %q\nwant %q", got, want)
	}
	if err := m.Dispose(uri); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("recording after Dispose: stat = %v, want it deleted", err)
	}
}

// TestSetRecording: the owner's toggle starts, pauses and resumes a
// recording; what it refuses.
func TestSetRecording(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m := testManager(t, Config{RecordDir: t.TempDir(), DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	uri := "ahp-terminal:/toggle"
	rec := promptTerminal(ctx, t, m, uri)
	if p := m.RecordingPath(uri); p != "" {
		t.Errorf("RecordingPath before recording = %q, want none", p)
	}
	for _, step := range []struct {
		on   bool
		want string
	}{{true, RecordingOn}, {false, RecordingPaused}, {false, RecordingPaused}, {true, RecordingOn}} {
		if err := m.SetRecording(uri, step.on); err != nil {
			t.Fatalf("SetRecording(%v): %v", step.on, err)
		}
		if got := recordingMeta(m, uri); got != step.want {
			t.Errorf("after SetRecording(%v): _meta = %q, want %q", step.on, got, step.want)
		}
	}
	if m.RecordingPath(uri) == "" {
		t.Errorf("RecordingPath while recording: none")
	}
	m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "exit\r"), Policy{})
	if err := rec.waitFor(ctx, `"terminal/exited"`); err != nil {
		t.Fatal(err)
	}
	bare := testManager(t, Config{})
	defer bare.Close()
	for _, tc := range []struct {
		name string
		m    *Manager
		uri  string
		want error
	}{
		{"exited", m, uri, ErrInvalid},
		{"unknown", m, "ahp-terminal:/nope", ErrNotFound},
		{"no recordings directory", bare, uri, ErrNoRecordings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.m.SetRecording(tc.uri, true); !errors.Is(err, tc.want) {
				t.Errorf("SetRecording = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRecordingsAcrossUpgradeAndCrash: recordings follow
// their terminal in every path. An adopted terminal (an upgrade) goes on
// recording into its file, which its disposal deletes; at start-up the
// recordings of terminals that are gone (a crash) are deleted.
func TestRecordingsAcrossUpgradeAndCrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "recordings")
	cfg := Config{RecordDir: dir, DisposeGrace: 100 * time.Millisecond}
	old := testManager(t, cfg)
	defer old.Close()
	uri := "ahp-terminal:/kept"
	rec := promptTerminal(ctx, t, old, uri)
	if err := old.SetRecording(uri, true); err != nil {
		t.Fatal(err)
	}
	old.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "echo be''fore\r"), Policy{})
	if err := rec.waitFor(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	path := old.RecordingPath(uri)
	stale := filepath.Join(dir, "crashed.cast") // a terminal of a server that crashed
	other := filepath.Join(dir, "notes.txt")    // not a recording: left alone
	for _, f := range []string{stale, other} {
		if err := os.WriteFile(f, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	p, err := old.Pause(nil)
	if err != nil {
		t.Fatal(err)
	}
	dups := make([]int, len(p.FDs))
	for i, fd := range p.FDs {
		if dups[i], err = unix.Dup(fd); err != nil {
			t.Fatal(err)
		}
	}
	m := testManager(t, cfg)
	defer m.Close()
	if _, err := m.Adopt(p.State, dups); err != nil {
		t.Fatal(err)
	}
	p.Commit()
	m.TidyRecordings()

	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the recording of a terminal that is gone is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file that is not a recording was removed: %v", err)
	}
	if got := m.RecordingPath(uri); got != path {
		t.Fatalf("adopted terminal's recording = %q, want %q", got, path)
	}
	if got := recordingMeta(m, uri); got != RecordingOn {
		t.Errorf("adopted terminal's %s = %q, want %q", MetaRecording, got, RecordingOn)
	}
	rec2 := newRecorder("me")
	if _, err := m.Subscribe(rec2, uri); err != nil {
		t.Fatal(err)
	}
	m.Dispatch(rec2, ahp.Origin{ClientID: "me", ClientSeq: 2}, uri, input(t, "echo af''ter\r"), Policy{})
	waitFile(t, path, "after")
	b, _ := os.ReadFile(path)
	for _, want := range []string{"before", "recording continues: the server was upgraded", "after"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the recording lacks %q:\n%s", want, b)
		}
	}
	if _, err := recording.Parse(strings.NewReader(string(b))); err != nil {
		t.Errorf("the continued recording is not asciicast v2: %v", err)
	}

	if err := m.Dispose(uri); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the adopted terminal's recording outlives its disposal: %v", err)
	}
}

// waitFile waits for path to contain want (the recorder writes in the background).
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	if b, ok := poll.Last(poll.Short, func() ([]byte, bool) { b, _ := os.ReadFile(path); return b, strings.Contains(string(b), want) }); !ok {
		t.Fatalf("%s never held %q:\n%s", path, want, b)
	}
}
