package handlers

import (
	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/terminals"
)

// skipAhead is a queued skip ahead on a terminal (hub.Skipper): the output
// of the channel this connection had not sent was dropped, and the redraw
// of the screen goes in its place. On the wire (docs/protocol.md, "Skipping
// ahead"): an x-termhost/skipped notice whose redrawSeq names it, then a
// terminal/data envelope at the serverSeq of the newest frame skipped
// whose data is the redraw (the envelope alone carries serverSeq). A
// client that knows nothing of skips writes the redraw like any output and
// ends on the live screen; its content differs from other clients' by the
// output it skipped, until a reconnect or subscribe gives it a snapshot.
type skipAhead struct {
	channel string
	seq     int64 // the serverSeq of the newest frame skipped
	bytes   int64 // the output skipped
	redraw  terminals.Redraw
}

// skipSize is what a queued skip counts for the queue bound before its
// redraw exists: a redraw is bounded by the screen's cells
// (screen.RedrawBudget), most are far smaller.
const skipSize = 64 << 10

// SkipAhead makes the connection skip ahead on f's terminal instead of
// falling further behind: the terminal's output still queued (f included,
// and an earlier skip not yet sent, which this one supersedes) is dropped
// and a skip is queued in its place, after what the queue keeps of other
// channels and of this one's other actions, all older than f. Called by
// the hub, under its lock, when Deliver refused f. Without a redraw, or if
// what the queue keeps is still over the bound, the connection is evicted.
func (c *conn) SkipAhead(f *terminals.Frame, redraw terminals.Redraw) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeCode != 0 {
		return false
	}
	if redraw == nil {
		c.evictLocked()
		return false
	}
	env := f.Envelope()
	skip := &skipAhead{channel: env.Channel, seq: env.ServerSeq, bytes: int64(len(env.Action.Data)), redraw: redraw}
	superseded := false
	kept := c.queue[:0]
	for _, q := range c.queue {
		switch {
		case q.skip != nil && q.skip.channel == skip.channel:
			skip.bytes += q.skip.bytes
			superseded = true
		case q.env != nil && q.env.Skippable() && q.env.Envelope().Channel == skip.channel:
			skip.bytes += int64(len(q.env.Envelope().Action.Data))
		default:
			kept = append(kept, q)
			continue
		}
		c.queued -= q.size
	}
	clear(c.queue[len(kept):])
	c.queue = kept
	if c.queued+skipSize > c.s.cfg.SendQueue {
		c.evictLocked()
		return false
	}
	c.queued += skipSize
	c.queue = append(c.queue, outFrame{skip: skip, size: skipSize})
	c.signal()
	c.s.metrics.skips.Inc()
	if !superseded { // a stalled reader supersedes its skip at every queue's worth: said once
		c.log.Info("slow subscriber skips ahead", "client", ahp.Clip(c.clientID), "terminal", skip.channel, "queued", c.queued)
	}
	return true
}

// skipFrames are the frames of a skip: the notice and the redraw, encoded
// for this connection. It waits for the screen model to reach the point of
// the skip; if there is no redraw to give, the connection is evicted as
// before skips existed (the client reconnects and gets a snapshot).
func (c *conn) skipFrames(s *skipAhead) [][]byte {
	redraw, ok := s.redraw(c.ctx)
	if !ok && c.ctx.Err() != nil {
		return nil // closing anyway
	}
	if !ok {
		c.log.Info("no screen to skip ahead to (the screen model is behind, or its redraw over budget)", "terminal", s.channel)
		c.mu.Lock()
		c.evictLocked()
		c.mu.Unlock()
		return nil
	}
	c.s.metrics.skippedBytes.Add(float64(s.bytes))
	notice, err := ahp.EncodeNotification(ext.NotifySkipped, ext.SkipNotice{Channel: s.channel, Bytes: s.bytes, RedrawSeq: s.seq}, c.shape)
	if err != nil {
		panic("handlers: encode skip notice: " + err.Error()) // our own type always encodes
	}
	env := ahp.Envelope{Channel: s.channel, ServerSeq: s.seq, Action: ahp.Action{Type: ahp.TerminalData, Data: string(redraw)}}
	data, err := ahp.AppendEnvelope(nil, env, c.shape)
	if err != nil {
		panic("handlers: encode skip redraw: " + err.Error())
	}
	return [][]byte{notice, data}
}
