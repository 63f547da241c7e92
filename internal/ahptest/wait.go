package ahptest

import (
	"fmt"
	"strings"
	"time"

	"github.com/termhost/termhost/ahp"
)

// WaitFrame waits for a frame (from the first) for which pred, given the
// frame and its index, is true. pred runs with the client's lock held.
func (c *Client) WaitFrame(what string, pred func(*ahp.Message, int) bool) {
	c.t.Helper()
	bound := c.waitBound()
	deadline := time.Now().Add(bound)
	timer := time.AfterFunc(bound, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; ; {
		for ; i < len(c.msgs); i++ {
			if pred(c.msgs[i], i) {
				return
			}
		}
		if c.closed != nil || time.Now().After(deadline) {
			c.t.Fatalf("waiting for %s: connection closed=%v, %d frames received", what, c.closed, len(c.frames))
		}
		c.cond.Wait()
	}
}

// NextFrame waits for the next frame after the cursor (shared with
// WaitAction) matching pred, and moves the cursor past it.
func (c *Client) NextFrame(what string, pred func(*ahp.Message) bool) *ahp.Message {
	c.t.Helper()
	var found *ahp.Message
	c.WaitFrame(what, func(m *ahp.Message, i int) bool {
		if i >= c.cursor && pred(m) {
			found, c.cursor = m, i+1
			return true
		}
		return false
	})
	return found
}

// WaitAction waits for the next action envelope after the cursor matching
// pred, and moves the cursor past it.
func (c *Client) WaitAction(what string, pred func(ahp.Envelope) bool) ahp.Envelope {
	c.t.Helper()
	var env ahp.Envelope
	c.WaitFrame(what, func(m *ahp.Message, i int) bool {
		if i < c.cursor || m.Method != "action" {
			return false
		}
		if e := c.envs[i]; pred(e) {
			env, c.cursor = e, i+1
			return true
		}
		return false
	})
	return env
}

// Envelopes returns every action envelope received so far.
func (c *Client) Envelopes() []ahp.Envelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ahp.Envelope
	for i := range c.msgs {
		if e, ok := c.envs[i]; ok {
			out = append(out, e)
		}
	}
	return out
}

// LastSeq is the highest serverSeq the client has seen.
func (c *Client) LastSeq() int64 {
	var last int64
	for _, e := range c.Envelopes() {
		last = max(last, e.ServerSeq)
	}
	return last
}

// Frames returns every frame received so far, as sent (a binary data
// message as the JSON frame it stands for).
func (c *Client) Frames() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.frames...)
}

// RawFrames returns every frame received so far, one a line.
func (c *Client) RawFrames() string {
	var b strings.Builder
	for _, f := range c.Frames() {
		b.Write(f)
		b.WriteByte('\n')
	}
	return b.String()
}

// Output is the terminal/data received on channel so far.
func (c *Client) Output(channel string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.outputs[channel]; b != nil {
		return b.String()
	}
	return ""
}

// WaitOutput waits until the channel's output contains want.
func (c *Client) WaitOutput(channel, want string) {
	c.t.Helper()
	c.WaitOutputFunc(fmt.Sprintf("output %q", want), channel, func(out string) bool {
		return strings.Contains(out[max(0, len(out)-len(want)-64<<10):], want)
	})
}

// WaitOutputFunc waits until ok accepts the channel's output so far (it is
// called with the client's lock held).
func (c *Client) WaitOutputFunc(what, channel string, ok func(output string) bool) {
	c.t.Helper()
	c.WaitFrame(what, func(*ahp.Message, int) bool {
		b := c.outputs[channel]
		return b != nil && ok(b.String())
	})
}

// WaitClosed waits until the connection ends and returns why.
func (c *Client) WaitClosed() error {
	c.t.Helper()
	timer := time.AfterFunc(waitTimeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer timer.Stop()
	deadline := time.Now().Add(waitTimeout)
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.closed == nil {
		if time.Now().After(deadline) {
			c.t.Fatalf("connection still open after %v", waitTimeout)
		}
		c.cond.Wait()
	}
	return c.closed
}
