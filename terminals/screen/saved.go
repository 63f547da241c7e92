package screen

import (
	"context"
	"time"
)

// Saved is a model's state at one point of the stream, for a model in
// another process to go on from there (an upgrade in place): Restore
// builds a model that answers as this one would, exact where it was exact.
// It holds no emulator: the screen is its checkpoint (the redraw of the
// screen, as an idle model keeps it), so it costs what an idle model does,
// plus the output kept for a resize (at most maxReplay bytes).
type Saved struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
	// Fed is the output bytes the screen reflects (State.Fed).
	Fed int64 `json:"fed"`
	// Behind: the screen is not exact for good (see MaxLag); nothing else
	// is kept.
	Behind bool `json:"behind,omitempty"`
	// Checkpoint redraws the screen on a fresh terminal (nil: blank).
	Checkpoint []byte `json:"checkpoint,omitempty"`
	// Rebuild: the checkpoint would be over budget; the screen is rebuilt
	// from Replay instead, after Preamble (the modes and title a replay that
	// starts at a clear takes from before it).
	Rebuild  bool   `json:"rebuild,omitempty"`
	Preamble []byte `json:"preamble,omitempty"`
	Alt      bool   `json:"alt,omitempty"`
	Tail     []byte `json:"tail,omitempty"`
	// The output kept for a resize and its flags (reflow.go).
	Replay   []byte `json:"replay,omitempty"`
	NoReplay bool   `json:"noReplay,omitempty"`
	Stale    bool   `json:"stale,omitempty"`
	Unflowed bool   `json:"unflowed,omitempty"`
	Cut      bool   `json:"cut,omitempty"`
	// Start and StartFed: State.Start and where it was taken.
	Start    []byte `json:"start,omitempty"`
	StartFed int64  `json:"startFed,omitempty"`
}

// Save returns the model's state once it has applied everything fed so
// far (like Mark), or false when ctx ends first. The model goes on as
// before: a hand-over that fails keeps using it.
func (m *Model) Save(ctx context.Context) (Saved, bool) {
	reply := make(chan Saved, 1)
	m.enqueue(op{save: reply})
	select {
	case s := <-reply:
		return s, true
	case <-m.halted: // see Pending.Wait
		m.catchUp()
		return <-reply, true
	case <-ctx.Done():
		return Saved{}, false
	}
}

// save is Save's answer, taken by the model's goroutine (or a catch-up)
// at its place in the queue.
func (m *Model) save(behind bool) Saved {
	s := Saved{Cols: m.cols, Rows: m.rows, Fed: m.applied}
	if behind || m.gaveUp {
		s.Behind = true
		return s
	}
	s.Tail, s.Replay, s.NoReplay, s.Stale, s.Unflowed, s.Cut = clone(m.tail), clone(m.replay), m.noReplay, m.stale, m.unflowed, m.cut
	s.Start, s.StartFed = clone(m.start), m.startFed
	if m.emu == nil {
		s.Checkpoint = clone(m.checkpoint)
		s.Alt = m.alt
		return s
	}
	s.Alt = m.emu.vt.IsAltScreen()
	if checkpoint, ok := m.emu.snapshot(nil); ok {
		s.Checkpoint = checkpoint
		return s
	}
	if m.noReplay || s.Alt || m.stale || m.unflowed {
		// No checkpoint and no output that rebuilds this screen.
		return Saved{Cols: m.cols, Rows: m.rows, Fed: m.applied, Behind: true}
	}
	s.Rebuild = true
	if m.cut {
		s.Preamble = m.emu.preamble()
	}
	return s
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// Restore returns a model that goes on from s, not started (Start). A
// screen that cannot be rebuilt in time makes it behind, as when output
// costs the emulator too much.
func Restore(s Saved) *Model {
	m := New(s.Cols, s.Rows)
	m.fed, m.applied = s.Fed, s.Fed
	if s.Behind {
		m.behind = true
		return m
	}
	m.tail, m.replay, m.noReplay, m.stale, m.unflowed, m.cut = s.Tail, s.Replay, s.NoReplay, s.Stale, s.Unflowed, s.Cut
	m.start, m.startFed = s.Start, s.StartFed
	m.checkpoint, m.alt = s.Checkpoint, s.Alt
	if s.Rebuild {
		n := newEmulator(m.cols, m.rows)
		n.write(s.Preamble)
		n.deadline = feedDeadline(m.now(), len(m.replay))
		n.feed(m.replay)
		n.deadline = time.Time{}
		if n.overrun {
			m.behind, m.gaveUp = true, true
			m.replay, m.tail, m.start = nil, nil, nil
			return m
		}
		m.emu = n // over budget: kept, as dropEmulator keeps it
	}
	return m
}
