package hub

import (
	"context"

	"github.com/termhost/termhost/ahp"
)

// A subscriber that falls behind on a terminal channel (its queue is over
// its bound: a phone on a train, many viewers on two busy cores) is not cut
// off: it skips ahead. It drops the channel's output it has not sent yet
// and is given, in its place, the redraw of the screen at the point where
// it skipped (a Redrawer tap, the screen model), then the live stream from
// there. Only a subscriber that cannot skip (no redraw to give, or not a
// Skipper) is dropped.

// Skipper is a Subscriber that can skip ahead on a terminal channel.
type Skipper interface {
	// SkipAhead is called, under the hub lock, when Deliver refused f, a
	// terminal/data frame of a terminal channel, for being over the
	// subscriber's bound. The subscriber drops the channel's output it has
	// queued, f included, and queues instead the redraw that r gives: the
	// screen just after f. r is nil when the channel has no redraw to give;
	// the subscriber then closes itself. It reports false when it did not
	// skip (the hub drops it).
	SkipAhead(f *Frame, r Redraw) bool
}

// Redraw waits (a bounded time) for the screen of a terminal at the point of
// its action stream where it was asked for, and returns the bytes that draw
// it on any terminal of that size; false when there is none to give (the
// model is behind, or the redraw over its budget). It may be called by
// several subscribers, from any goroutine, outside the hub lock.
type Redraw func(ctx context.Context) ([]byte, bool)

// Redrawer is a Tap that can redraw its channel's screen (the screen model).
type Redrawer interface {
	// Redraw marks the current point of the channel's stream; the hub calls
	// it under its lock, so it must only queue.
	Redraw() Redraw
}

// Skippable reports whether a Skipper that refused f is asked to skip
// ahead instead of being dropped: f is a terminal's output. A Skipper's
// Deliver may refuse such a frame without closing itself; any other frame
// it refuses, it closes itself for.
func (f *Frame) Skippable() bool {
	return f.raw == nil && f.env.Channel != ahp.RootURI && f.env.Action.Type == ahp.TerminalData && f.env.RejectionReason == ""
}

// redrawLocked asks ch's Redrawer tap for the screen at this point of the
// stream; nil when it has none.
func (ch *channel) redrawLocked() Redraw {
	for _, t := range ch.taps {
		if r, ok := t.(Redrawer); ok {
			return r.Redraw()
		}
	}
	return nil
}
