package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// readLoop is the reader goroutine: it reads the current socket until it fails,
// then reconnects within the window or finishes the client.
func (c *Client) readLoop(ws *websocket.Conn) {
	defer close(c.done)
	for {
		wd := c.watch(ws)
		err := c.readFrames(ws)
		if dead := wd.halt(); dead != nil {
			err = dead // the watchdog closed the socket: say why
		}
		c.mu.Lock()
		closed, fatal, handshaken := c.closed, c.fatal, c.handshaken
		c.mu.Unlock()
		c.retire(ws)
		switch {
		case closed:
			c.finish(ErrClosed)
			return
		case fatal != nil:
			c.finish(fatal)
			return
		case !handshaken || c.opts.ReconnectWindow < 0 || policyClose(err):
			c.finish(fmt.Errorf("%w: %v", ErrConnectionLost, err))
			return
		}
		c.mu.Lock()
		c.pushLocked(Event{Kind: EventDisconnected, Err: err}, 0)
		c.mu.Unlock()
		next, rerr := c.redial()
		if rerr != nil {
			c.finish(rerr)
			return
		}
		ws = next
	}
}

// policyClose reports a close the server means to be final.
func policyClose(err error) bool {
	code := websocket.CloseStatus(err)
	return code == websocket.StatusPolicyViolation
}

func (c *Client) readFrames(ws *websocket.Conn) error {
	for {
		// Not c.ctx: cancelling a Read closes the socket without a close frame.
		typ, data, err := ws.Read(context.Background())
		if err != nil {
			return err
		}
		c.progress.Add(1)
		if typ == websocket.MessageBinary {
			c.handleBinary(data)
		} else {
			c.handleFrame(ws, data)
		}
		if err := c.waitSpace(); err != nil {
			return err
		}
	}
}

// handleBinary mirrors a binary data message (terminal output, as termhost
// sends it to clients that ask); anything else binary is ignored.
func (c *Client) handleBinary(msg []byte) {
	env, err := ext.DecodeBinaryData(msg)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.envelopeLocked(env)
	c.mu.Unlock()
}

// handleFrame routes one frame: responses to their calls, action envelopes
// to the mirrors, other notifications to the events; anything else is
// ignored.
func (c *Client) handleFrame(ws *websocket.Conn, data []byte) {
	if env, ok := ahp.DecodeDataFrame(data); ok { // most frames: output, in one pass
		c.mu.Lock()
		c.envelopeLocked(env)
		c.mu.Unlock()
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *ahp.Error      `json:"error"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return
	}
	switch {
	case m.Method == "" && m.ID != nil:
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		cl := c.calls[id]
		c.mu.Unlock()
		if cl == nil {
			return
		}
		if m.Error != nil {
			c.complete(id, nil, fmt.Errorf("%s: %w", cl.method, m.Error))
			return
		}
		result := m.Result
		if result == nil {
			result = json.RawMessage("null")
		}
		c.complete(id, result, nil)
	case m.Method == ahp.MethodAction && m.ID == nil:
		var env ahp.Envelope
		if err := json.Unmarshal(m.Params, &env); err != nil {
			return // an action we cannot decode cannot be mirrored either
		}
		c.mu.Lock()
		c.envelopeLocked(env)
		c.mu.Unlock()
	case m.Method != "" && m.ID == nil:
		c.mu.Lock()
		c.pushLocked(Event{Kind: EventNotification, Method: m.Method, Params: m.Params}, len(m.Params))
		c.mu.Unlock()
	}
}

// retire gives up a broken socket: no more calls on it, pending calls fail,
// mirrors wait for the resync.
func (c *Client) retire(ws *websocket.Conn) {
	_ = ws.CloseNow()
	c.mu.Lock()
	if c.live == ws {
		c.live = nil
		c.ready = make(chan struct{})
	}
	type pending struct {
		id     int64
		method string
	}
	var fail []pending
	for id, cl := range c.calls {
		fail = append(fail, pending{id, cl.method})
	}
	c.mu.Unlock()
	for _, p := range fail {
		c.complete(p.id, nil, fmt.Errorf("%s: %w", p.method, ErrConnectionLost))
	}
}

// finish ends the client with err: queued events stay readable, then Next
// returns err.
func (c *Client) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	c.finished, c.err = true, err
	c.live = nil
	c.wakeLocked()
}
