package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
)

// pendingCall is a request waiting for its response. hook, when set, runs in
// the reader goroutine before the caller wakes, so that state changes it
// makes are ordered with the envelopes around the response.
type pendingCall struct {
	method string
	hook   func(result json.RawMessage, err error) (any, error)
	done   chan struct{}
	result json.RawMessage
	value  any
	err    error
}

// start registers a call on ws and writes its request. A write failure fails
// the call (the reader notices the broken socket on its own).
func (c *Client) start(ws *websocket.Conn, method string, params any, hook func(json.RawMessage, error) (any, error)) *pendingCall {
	cl := &pendingCall{method: method, hook: hook, done: make(chan struct{})}
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		cl.err = fmt.Errorf("%s: %w", method, c.err)
		close(cl.done)
		return cl
	}
	c.nextID++
	id := c.nextID
	c.calls[id] = cl
	shape := c.shape
	c.mu.Unlock()
	frame, err := encodeRequest(id, method, params, shape)
	if err == nil {
		err = c.write(ws, frame)
	}
	if err != nil {
		c.complete(id, nil, fmt.Errorf("%s: %w", method, err))
	}
	return cl
}

func encodeRequest(id int64, method string, params any, shape ahp.Shape) ([]byte, error) {
	m := ahp.Message{JSONRPC: ahp.JSONRPCVersion, ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method}
	if params != nil {
		raw, err := ahp.Marshal(params, shape)
		if err != nil {
			return nil, fmt.Errorf("encode params: %w", err)
		}
		m.Params = raw
	}
	return ahp.Marshal(m, shape)
}

// write sends one frame. It is bounded by the client's life and a timeout,
// never by a caller's context: cancelling a write would close the socket.
func (c *Client) write(ws *websocket.Conn, frame []byte) error {
	ctx, cancel := context.WithTimeout(c.ctx, writeTimeout)
	defer cancel()
	return ws.Write(ctx, websocket.MessageText, frame)
}

const writeTimeout = 30 * time.Second

// complete finishes call id with a result or an error, running its hook.
func (c *Client) complete(id int64, result json.RawMessage, err error) {
	c.mu.Lock()
	cl := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	if cl == nil {
		return
	}
	cl.result, cl.err = result, err
	if cl.hook != nil {
		cl.value, cl.err = cl.hook(result, err)
	}
	close(cl.done)
}

// connected waits until a live connection exists.
func (c *Client) connected(ctx context.Context) (*websocket.Conn, error) {
	for {
		c.mu.Lock()
		live, ready, finished, err := c.live, c.ready, c.finished, c.err
		c.mu.Unlock()
		switch {
		case finished:
			return nil, err
		case live != nil:
			return live, nil
		}
		select {
		case <-ready:
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Call sends a request and waits for its result. A JSON-RPC error comes back
// as an *ahp.Error (use errors.As); every error is wrapped with the method.
// While the client reconnects, Call waits for the connection to return.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	cl, err := c.call(ctx, method, params, nil)
	if err != nil {
		return nil, err
	}
	return cl.result, nil
}

func (c *Client) call(ctx context.Context, method string, params any, hook func(json.RawMessage, error) (any, error)) (*pendingCall, error) {
	ws, err := c.connected(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	cl := c.start(ws, method, params, hook)
	select {
	case <-cl.done:
	case <-ctx.Done():
		c.mu.Lock()
		for id, pending := range c.calls {
			if pending == cl {
				delete(c.calls, id)
			}
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
	return cl, cl.err
}

// Notify sends a notification (no answer comes back).
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	ws, err := c.connected(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	c.mu.Lock()
	shape := c.shape
	c.mu.Unlock()
	raw, err := ahp.Marshal(params, shape)
	if err != nil {
		return fmt.Errorf("%s: encode params: %w", method, err)
	}
	frame, err := ahp.Marshal(ahp.Message{JSONRPC: ahp.JSONRPCVersion, Method: method, Params: raw}, shape)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.write(ws, frame); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// Dispatch sends a dispatchAction and returns its clientSeq. The outcome
// arrives as an EventAction on the channel: the echo with Origin set to this
// client and clientSeq, carrying a RejectionReason when the server refused it.
func (c *Client) Dispatch(ctx context.Context, channel string, a ahp.Action) (int64, error) {
	ws, err := c.connected(ctx)
	if err != nil {
		return 0, fmt.Errorf("dispatch %s: %w", a.Type, err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	c.clientSeq++
	seq, shape := c.clientSeq, c.shape
	c.mu.Unlock()
	action, err := ahp.Marshal(a, shape)
	if err != nil {
		return 0, fmt.Errorf("dispatch %s: %w", a.Type, err)
	}
	params, err := ahp.Marshal(struct {
		Channel   string          `json:"channel"`
		ClientSeq int64           `json:"clientSeq"`
		Action    json.RawMessage `json:"action"`
	}{channel, seq, action}, shape)
	if err != nil {
		return 0, fmt.Errorf("dispatch %s: %w", a.Type, err)
	}
	frame, err := ahp.Marshal(ahp.Message{JSONRPC: ahp.JSONRPCVersion, Method: ahp.MethodDispatchAction, Params: params}, shape)
	if err == nil {
		err = c.write(ws, frame)
	}
	if err != nil {
		return 0, fmt.Errorf("dispatch %s: %w", a.Type, err)
	}
	return seq, nil
}
