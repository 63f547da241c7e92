package terminals

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/lockrank"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/recording"
)

// MetaRecord is the createTerminal _meta key of termhost's extension that
// records the new terminal from its start: "_meta": {"termhost/record": true}.
const MetaRecord = ext.MetaRecord

// MetaRecording is the catalogue entry's _meta key of a terminal that has a
// recording: "_meta": {"termhost/recording": "recording"}, "paused", or
// "stopped" once the terminal exited.
const MetaRecording = ext.MetaRecording

// Values of MetaRecording.
const (
	RecordingOn      = ext.RecordingOn
	RecordingPaused  = ext.RecordingPaused
	RecordingStopped = ext.RecordingStopped
)

// ErrNoRecordings is wrapped when recording is asked of a manager that has
// no recordings directory (Config.RecordDir).
var ErrNoRecordings = errors.New("recording is not available on this server")

// recordTap is a terminal's recording, a tap on its hub channel
// (hub.Tap): started at most once, then paused and resumed; closed when
// the terminal exits or is disposed.
type recordTap struct {
	mu    lockrank.Mutex[lockrank.Terminal] // start, pause, resume, close
	cur   atomic.Pointer[recording.Recorder]
	ended bool // closed: never started again
	// owned is the file of an adopted terminal that had exited: no
	// recorder, but the file is the terminal's (downloadable, deleted
	// with it). Set once before serving (TidyRecordings).
	owned atomic.Pointer[string]
}

// Action feeds the recorder, if any (under the hub lock: it never waits
// for the disk): output, a marker per command (its command line) and
// accepted resizes. Input is never recorded (it is not published).
func (s *recordTap) Action(a ahp.Action) {
	r := s.cur.Load()
	if r == nil {
		return
	}
	switch a.Type {
	case ahp.TerminalData:
		r.Output(a.Data)
	case ahp.TerminalCommandExecuted:
		label := a.CommandLine
		if label == "" {
			label = "command"
		}
		if by, ok := RunByOf(a.Meta); ok { // the agent's commands are marked as such
			label = by.Name + ": " + label
		}
		r.Marker(label)
	case ahp.TerminalResized:
		r.Resize(a.Cols, a.Rows)
	}
}

// Snapshot leaves joiners' snapshots as they are.
func (s *recordTap) Snapshot() hub.Amend { return nil }

// close ends the recording with a final marker; the file stays. It
// reports whether there was a recording.
func (s *recordTap) close(final string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeLocked(final)
}

func (s *recordTap) closeLocked(final string) bool {
	s.ended = true
	r := s.cur.Load()
	if r != nil {
		r.Close(final)
	}
	return r != nil
}

// discard ends the recording and deletes its file (the terminal is gone).
func (s *recordTap) discard(log *slog.Logger) {
	s.close("")
	if path := s.path(); path != "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("remove recording", "err", err)
		}
	}
}

// path is the file of the recording, "" when there is none.
func (s *recordTap) path() string {
	if r := s.cur.Load(); r != nil {
		return r.Path()
	}
	if p := s.owned.Load(); p != nil {
		return *p
	}
	return ""
}

// recordingPath is where a terminal's recording is kept: its id when that
// is a plain file name, else a hash of its URI.
func (m *Manager) recordingPath(uri string) string {
	id := ahp.TerminalIDOf(uri)
	if !plainName.MatchString(id) {
		sum := sha256.Sum256([]byte(uri))
		id = "t-" + hex.EncodeToString(sum[:8])
	}
	return filepath.Join(m.cfg.RecordDir, id+".cast")
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// wantsRecording reads createTerminal's _meta "termhost/record".
func wantsRecording(meta json.RawMessage) bool {
	var m map[string]json.RawMessage
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return false
	}
	var on bool
	return json.Unmarshal(m[MetaRecord], &on) == nil && on
}

// SetRecording starts, pauses or resumes the recording of a running
// terminal. A recording toggled on again continues the same file (the
// gap is a marker).
func (m *Manager) SetRecording(uri string, on bool) error {
	if m.cfg.RecordDir == "" {
		return fmt.Errorf("%w: %w", ErrInvalid, ErrNoRecordings)
	}
	t := m.live(uri)
	if t == nil {
		return fmt.Errorf("%w: %s", ErrNotFound, uri)
	}
	st, _ := m.state(uri)
	if st.Lifecycle.Exited() {
		return fmt.Errorf("%w: the terminal has exited", ErrInvalid)
	}
	return t.setRecording(on, st)
}

// setRecording starts, pauses or resumes t's recorder.
func (t *terminal) setRecording(on bool, st ahp.TerminalState) error {
	s := t.rec
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.cur.Load()
	switch {
	case s.ended:
		return fmt.Errorf("%w: the terminal has exited", ErrInvalid)
	case r == nil && !on:
		return nil
	case r == nil:
		if err := t.startRecording(st); err != nil {
			return err
		}
	case on && r.Paused():
		r.Resume(st.Cols, st.Rows)
	case !on && !r.Paused():
		r.Pause()
	}
	// Under s.mu, so an exit's "stopped" is never overwritten.
	state := RecordingOn
	if !on {
		state = RecordingPaused
	}
	t.m.hub.SetInfoMeta(t.uri, MetaRecording, state)
	return nil
}

// startRecording creates the recorder (under t.rec.mu, or before the
// terminal's reader starts).
func (t *terminal) startRecording(st ahp.TerminalState) error {
	m := t.m
	r, err := recording.Start(recording.Options{Path: m.recordingPath(t.uri), Cols: st.Cols, Rows: st.Rows,
		Title: st.Title, Env: map[string]string{"TERM": "xterm-256color", "SHELL": m.cfg.Shell},
		Max: m.cfg.RecordMax, Clock: m.cfg.RecordClock, Logger: t.log})
	if err != nil {
		t.log.Warn("recording", "err", err)
		return fmt.Errorf("cannot record: %w", err)
	}
	t.rec.cur.Store(r)
	return nil
}

// RecordingPath is the file of a terminal's recording, "" when it has none.
func (m *Manager) RecordingPath(uri string) string {
	m.mu.Lock()
	t := m.terms[uri]
	m.mu.Unlock()
	if t == nil || !t.live {
		return ""
	}
	return t.rec.path()
}

// Content is a terminal's current content (its scrollback) as text with
// escape sequences; false for an unknown terminal.
func (m *Manager) Content(uri string) (string, bool) {
	var parts []ahp.Part
	ok := false
	m.hub.Do(func(tx hub.Tx) {
		_, ok = tx.Terminal(uri)
		parts = tx.Content(uri)
	})
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String(), ok
}

// state is a terminal's state without its content.
func (m *Manager) state(uri string) (st ahp.TerminalState, ok bool) {
	m.hub.Do(func(tx hub.Tx) { st, ok = tx.Terminal(uri) })
	return st, ok
}

// recordFromStart starts recording a new terminal when the server records
// every terminal or its createTerminal asked for it, and reports whether it
// does. Called before the terminal's reader publishes, and not under m.mu
// (it creates a file): a failure is logged, the terminal runs unrecorded.
func (m *Manager) recordFromStart(t *terminal, st ahp.TerminalState, meta json.RawMessage) bool {
	if m.cfg.RecordDir == "" || (!m.cfg.RecordAll && !wantsRecording(meta)) {
		return false
	}
	return t.startRecording(st) == nil
}

// endRecording closes the recording of a terminal that exited; it stays
// downloadable until the terminal is disposed.
func (t *terminal) endRecording(code *int) {
	t.rec.mu.Lock()
	defer t.rec.mu.Unlock()
	if t.rec.closeLocked(exitMarker(code)) {
		t.m.hub.SetInfoMeta(t.uri, MetaRecording, RecordingStopped)
	}
}

// exitMarker is the last marker of a recording whose terminal exited.
func exitMarker(code *int) string {
	if code == nil {
		return "exited"
	}
	return fmt.Sprintf("exited with code %d", *code)
}

// TidyRecordings is called once at start-up, after any adoption (an
// upgrade) and before serving. An adopted terminal whose recording file is
// there takes it back: a running one goes on recording into it (paused if
// it was paused), one that had exited owns it, to be downloaded and deleted
// with it. Every other recording is stale, left by a crash or a killed
// server whose terminals are gone: it is deleted, as its terminal would
// have deleted it.
func (m *Manager) TidyRecordings() {
	if m.cfg.RecordDir == "" {
		return
	}
	entries, err := os.ReadDir(m.cfg.RecordDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			m.log.Warn("recordings directory", "err", err)
		}
		return
	}
	m.mu.Lock()
	terms := make([]*terminal, 0, len(m.terms))
	for _, t := range m.terms {
		if t.live {
			terms = append(terms, t)
		}
	}
	m.mu.Unlock()
	owned := map[string]bool{}
	for _, t := range terms {
		if path := t.adoptRecording(); path != "" {
			owned[filepath.Base(path)] = true
		}
	}
	removed := 0
	for _, e := range entries {
		if owned[e.Name()] || !e.Type().IsRegular() || filepath.Ext(e.Name()) != ".cast" {
			continue
		}
		if err := os.Remove(filepath.Join(m.cfg.RecordDir, e.Name())); err != nil {
			m.log.Warn("remove a stale recording", "err", err)
			continue
		}
		removed++
	}
	if removed > 0 {
		m.log.Info("removed recordings whose terminals are gone (a crash or a kill)", "count", removed)
	}
}

// adoptRecording takes back t's recording file, if there is one, and
// returns its path.
func (t *terminal) adoptRecording() string {
	s := t.rec
	if p := s.path(); p != "" {
		return p
	}
	path := t.m.recordingPath(t.uri)
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	st, _ := t.m.state(t.uri)
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Lifecycle.Exited() || s.ended {
		s.owned.Store(&path)
		t.m.hub.SetInfoMeta(t.uri, MetaRecording, RecordingStopped)
		return path
	}
	m := t.m
	r, err := recording.Continue(recording.Options{Path: path, Env: nil, Max: m.cfg.RecordMax, Clock: m.cfg.RecordClock, Logger: t.log},
		"recording continues: the server was upgraded", st.Cols, st.Rows)
	if err != nil {
		t.log.Warn("continue the recording: kept as it is", "err", err)
		s.owned.Store(&path)
		t.m.hub.SetInfoMeta(t.uri, MetaRecording, RecordingStopped)
		return path
	}
	s.cur.Store(r)
	state := RecordingOn
	if r.Paused() {
		state = RecordingPaused
	}
	t.m.hub.SetInfoMeta(t.uri, MetaRecording, state)
	return path
}
