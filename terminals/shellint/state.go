package shellint

import "time"

// State is what a Processor has learnt of its shell besides the bytes it
// passed on: an upgraded server carries it to its successor, so that
// command ids go on (a reused id would leave a command "running" for good)
// and a command running across the upgrade finishes. Bytes the decoder or
// scanner held at the pause (a split rune or escape) are not part of it.
type State struct {
	Mode     Mode   `json:"mode"`
	NextID   int    `json:"nextId"`
	Detected bool   `json:"detected,omitempty"`
	Saw633   bool   `json:"saw633,omitempty"`
	Depth    int    `json:"depth,omitempty"`
	Cwd      string `json:"cwd,omitempty"`
	Title    string `json:"title,omitempty"`
	Pinned   bool   `json:"pinned,omitempty"`
	// Pending (an E command line) and Hint (a server-typed command) wait
	// for the next C; nil = none.
	Pending *string `json:"pending,omitempty"`
	Hint    *string `json:"hint,omitempty"`
	// Spawned is when a Pending terminal started (unix ms).
	Spawned int64     `json:"spawned,omitempty"`
	Run     *RunState `json:"run,omitempty"`
}

// RunState is the command running at the hand-over.
type RunState struct {
	ID        string `json:"id,omitempty"` // empty until announced
	Line      string `json:"line"`
	Emitted   bool   `json:"emitted,omitempty"`
	SawOutput bool   `json:"sawOutput,omitempty"`
	Start     int64  `json:"start"` // unix ms
}

// State reports what Resume needs to go on where p stands.
func (p *Processor) State() State {
	st := State{Mode: p.mode, NextID: p.nextID, Detected: p.detected, Saw633: p.saw633, Depth: p.depth,
		Cwd: p.cwd, Title: p.title, Pinned: p.pinned}
	if p.pendingSet {
		st.Pending = &p.pending
	}
	if p.hintSet {
		st.Hint = &p.hint
	}
	if p.mode == Pending {
		st.Spawned = p.spawned.UnixMilli()
	}
	if r := p.run; r.active {
		st.Run = &RunState{ID: r.id, Line: r.line, Emitted: r.emitted, SawOutput: r.sawOutput, Start: r.startWall}
	}
	return st
}

// Resume returns a Processor that goes on from st (opts.Mode is ignored).
// Times taken in another process are wall-clock times, turned into this
// clock's readings.
func Resume(opts Options, st State) *Processor {
	opts.Mode = st.Mode
	p := NewProcessor(opts)
	now := p.clock.Now()
	ago := func(ms int64) time.Time { return now.Add(-time.Duration(now.UnixMilli()-ms) * time.Millisecond) }
	p.nextID = max(st.NextID, 1)
	p.detected, p.saw633, p.depth = st.Detected, st.Saw633, st.Depth
	p.cwd, p.title, p.pinned = st.Cwd, st.Title, st.Pinned
	if st.Pending != nil {
		p.pending, p.pendingSet = *st.Pending, true
	}
	if st.Hint != nil {
		p.hint, p.hintSet = *st.Hint, true
	}
	if p.mode == Pending && st.Spawned != 0 {
		p.spawned = ago(st.Spawned)
	}
	if r := st.Run; r != nil {
		p.run = command{active: true, emitted: r.Emitted, sawOutput: r.SawOutput, id: r.ID, line: r.Line,
			start: ago(r.Start), startWall: r.Start}
	}
	return p
}
