package handlers

import (
	"encoding/binary"
	"sync"

	"github.com/termhost/termhost/terminals"
)

// maxJoined bounds the data of one binary data message that joins several
// queued output envelopes (joinOutput): large enough that a viewer behind
// by many small chunks catches up in few writes, small enough that a
// client's read limit and the pooled buffers stay modest. A single
// envelope larger than this is written alone, as ever.
const maxJoined = 256 << 10

// joinedBufs are the buffers joined messages are built in: the writer
// builds, writes and returns one, so there are about as many as writers
// writing at once, not one per connection.
var joinedBufs = sync.Pool{New: func() any { return new([]byte) }}

// binaryParts splits a binary data message into its header (length field
// included) and its data.
func binaryParts(msg []byte) (header, data []byte) {
	n := 4 + int(binary.BigEndian.Uint32(msg))
	return msg[:n], msg[n:]
}

// joinOutput takes from the front of the queue the output envelopes that
// directly follow first (a binary data message of this connection's, of
// f's channel) while their data fits maxJoined with first's, and returns
// them with the bytes they count in the queue. The writer then sends them
// with first as one binary data message (joinedMessage): a viewer whose
// queue holds many small chunks (it fell behind under load) gets them in
// one write instead of one each. Nothing is reordered: the run stops at
// the first frame that is not such output (an answer, a notification,
// another channel's output, a skip).
func (c *conn) joinOutput(f *terminals.Frame, first []byte) (more []*terminals.Frame, size int) {
	channel := f.Envelope().Channel
	_, data := binaryParts(first)
	total := len(data)
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.queue) > 0 {
		g := c.queue[0]
		if g.env == nil || g.skip != nil || g.answer || g.env.Envelope().Channel != channel {
			break
		}
		bin := g.env.Binary()
		if bin == nil {
			break
		}
		_, d := binaryParts(bin)
		if total+len(d) > maxJoined {
			break
		}
		total += len(d)
		more = append(more, g.env)
		size += g.size
		c.queue[0] = outFrame{}
		c.queue = c.queue[1:]
	}
	return more, size
}

// joinedMessage is first and more as one binary data message: the header
// of the last (its serverSeq: the client's cursor moves to the newest
// output it holds), then every envelope's data in order. The data of each
// is valid UTF-8 on its own, so the joined data is what a client that
// received them one by one holds. put returns the buffer once it is
// written.
func joinedMessage(first []byte, more []*terminals.Frame) (msg []byte, put func()) {
	buf := joinedBufs.Get().(*[]byte)
	last, _ := binaryParts(more[len(more)-1].Binary())
	b := append((*buf)[:0], last...)
	_, d := binaryParts(first)
	b = append(b, d...)
	for _, g := range more {
		_, d := binaryParts(g.Binary())
		b = append(b, d...)
	}
	return b, func() {
		if cap(b) <= 2*maxJoined {
			*buf = b[:0]
			joinedBufs.Put(buf)
		}
	}
}

// DeliverPaced and Flush make conn a hub.Paced: a crowd's viewer-link
// connection gets terminal output without its writer waking for each
// frame; the terminal's crowd ticker wakes it once a cycle, and the
// writer sends what waited as one message (joinOutput). Any frame Deliver
// queues meanwhile wakes the writer at once, for everything before it too.
func (c *conn) DeliverPaced(f *terminals.Frame) bool { return c.deliver(f, false) }

// enqueuePacedLocked is enqueueLocked for a frame whose writer waits for
// Flush.
func (c *conn) enqueuePacedLocked(f outFrame) bool {
	if !c.enqueueLocked(f, false) {
		return false
	}
	c.queue = append(c.queue, f)
	c.pacedWaiting = true
	return true
}

// Flush wakes the writer for what DeliverPaced left waiting.
func (c *conn) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pacedWaiting {
		c.pacedWaiting = false
		c.signal()
	}
}
