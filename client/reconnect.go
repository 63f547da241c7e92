package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
)

// Reconnect backoff.
const (
	firstRetry  = 50 * time.Millisecond
	maxRetry    = 2 * time.Second
	dialTimeout = 10 * time.Second
)

// redial gets a new socket within the reconnect window and sends the resume
// request on it; the reader then handles its answer like any other.
func (c *Client) redial() (*websocket.Conn, error) {
	deadline := time.Now().Add(c.opts.ReconnectWindow)
	delay := firstRetry
	for {
		t := time.NewTimer(delay)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return nil, ErrClosed
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, dialTimeout)
		ws, err := c.dial(ctx)
		cancel()
		switch {
		case err == nil:
			c.mu.Lock()
			if c.closed {
				c.mu.Unlock()
				_ = ws.CloseNow()
				return nil, ErrClosed
			}
			c.sock = ws
			c.mu.Unlock()
			c.resume(ws)
			return ws, nil
		case c.ctx.Err() != nil:
			return nil, ErrClosed
		case errors.Is(err, ErrUnauthorized):
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: gave up reconnecting after %s: %v", ErrConnectionLost, c.opts.ReconnectWindow, err)
		}
		delay = min(delay*2, maxRetry)
	}
}

// resume sends the legacy reconnect for every mirrored channel (or, before
// any serverSeq was seen, a fresh initialize). A server that no longer knows
// this clientId answers with an error; the client then initializes again
// with the same clientId and resets its mirrors from the snapshots.
func (c *Client) resume(ws *websocket.Conn) {
	c.mu.Lock()
	subs := make([]string, 0, len(c.mirrors))
	for ch, m := range c.mirrors {
		if m.state == nil {
			continue // a Subscribe still waiting to be sent: it brings its own snapshot
		}
		subs = append(subs, ch)
		m.pending, m.buf = true, nil
	}
	slices.Sort(subs)
	last := c.lastSeq
	c.mu.Unlock()
	if last == 0 {
		c.initialize(ws, subs)
		return
	}
	params := struct {
		Channel           string   `json:"channel"`
		ClientID          string   `json:"clientId"`
		LastSeenServerSeq int64    `json:"lastSeenServerSeq"`
		Subscriptions     []string `json:"subscriptions"`
	}{ahp.RootURI, c.opts.ClientID, last, subs}
	c.start(ws, ahp.MethodReconnect, params, func(raw json.RawMessage, err error) (any, error) {
		var rpcErr *ahp.Error
		if errors.As(err, &rpcErr) {
			c.initialize(ws, subs)
			return nil, nil
		}
		if err != nil {
			return nil, err // the socket failed too: the reader redials
		}
		var r struct {
			Type      string         `json:"type"`
			Actions   []ahp.Envelope `json:"actions"`
			Missing   []string       `json:"missing"`
			Snapshots []ahp.Snapshot `json:"snapshots"`
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if derr := json.Unmarshal(raw, &r); derr != nil || (r.Type != "replay" && r.Type != "snapshot") {
			c.fatal = fmt.Errorf("reconnect: unexpected result %.200s", raw)
			_ = ws.CloseNow()
			return nil, c.fatal
		}
		if r.Type == "snapshot" {
			c.resyncLocked(r.Snapshots, subs, true)
		} else {
			for _, env := range r.Actions {
				if m := c.mirrors[env.Channel]; m != nil {
					c.applyLocked(m, env, true)
				}
			}
			keep := map[string]bool{}
			for _, ch := range subs {
				keep[ch] = !slices.Contains(r.Missing, ch)
			}
			c.goneLocked(subs, keep, true)
			for _, ch := range subs {
				if m := c.mirrors[ch]; m != nil && m.pending {
					buf := m.buf
					m.pending, m.buf = false, nil
					for _, env := range buf {
						c.applyLocked(m, env, false)
					}
				}
			}
		}
		c.pushLocked(Event{Kind: EventReconnected}, 0)
		c.goLiveLocked(ws)
		return nil, nil
	})
}
