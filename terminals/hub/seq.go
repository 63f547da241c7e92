package hub

import "time"

// serverSeq is a hybrid logical clock: the microseconds since the Unix
// epoch (read from the monotonic clock), raised to the previous value + 1
// when two values fall in the same microsecond. It is the one monotonic
// counter AHP asks for (gaps are allowed), but its value tells the
// time, not how many actions the server has sequenced: a connection that
// sees only one terminal (a share link) cannot count keystrokes, output or
// joins on the others from the gaps between the values it sees. Only a
// server sequencing more than a million actions a second would run ahead of
// the clock (docs/protocol.md, "serverSeq").

// Clock returns the current time in microseconds since the Unix epoch.
type Clock func() int64

// SystemClock is the wall clock at its first reading, advanced by the
// monotonic clock (a wall-clock step does not move serverSeq).
func SystemClock() Clock {
	start := time.Now()
	base := start.UnixMicro()
	return func() int64 { return base + time.Since(start).Microseconds() }
}

// SetClock replaces the hub's clock (tests).
func (h *Hub) SetClock(c Clock) {
	h.mu.Lock()
	defer h.unlock()
	h.clock = c
}

// nextLocked advances serverSeq and returns it.
func (h *Hub) nextLocked() int64 {
	h.seq = max(h.seq+1, h.clock())
	return h.seq
}
