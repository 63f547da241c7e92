package client

import (
	"context"
	"fmt"
	"time"

	"github.com/coder/websocket"
)

// watchdog checks that one socket still carries traffic. TCP notices a path
// that silently stopped forwarding (a frozen proxy, a laptop that lost its
// Wi-Fi) only after minutes; a ping unanswered within PingTimeout, with no
// other frame received meanwhile, declares it dead at once.
type watchdog struct {
	stop chan struct{}
	done chan struct{}
	err  error // set before done is closed when the watchdog dropped the socket
}

// watch starts the watchdog of ws; halt stops it.
func (c *Client) watch(ws *websocket.Conn) *watchdog {
	w := &watchdog{stop: make(chan struct{}), done: make(chan struct{})}
	if c.opts.PingInterval < 0 {
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		w.err = c.pingUntilDead(ws, w.stop)
		if w.err != nil {
			_ = ws.CloseNow() // the reader's Read fails: it reconnects
		}
	}()
	return w
}

// halt stops the watchdog and returns why it dropped the socket (nil if it
// did not).
func (w *watchdog) halt() error {
	close(w.stop)
	<-w.done
	return w.err
}

// pingUntilDead pings ws every PingInterval until stop is closed (nil) or a
// ping finds the link dead (the error says why).
func (c *Client) pingUntilDead(ws *websocket.Conn, stop <-chan struct{}) error {
	tick := time.NewTicker(c.opts.PingInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-c.ctx.Done():
			return nil
		case <-tick.C:
		}
		// The pong is read by the reader: while it holds (Next is behind) a
		// missing pong proves nothing.
		before := c.progress.Load()
		if c.holding.Load() {
			continue
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.PingTimeout)
		err := ws.Ping(ctx)
		cancel()
		if err == nil || c.ctx.Err() != nil {
			continue
		}
		select {
		case <-stop: // the socket ended anyway: the reader knows why
			return nil
		default:
		}
		if c.progress.Load() != before || c.holding.Load() {
			continue // frames arrived (the pong is queued behind them) or the reader held
		}
		return fmt.Errorf("%w: no answer within %s", ErrDeadLink, c.opts.PingTimeout)
	}
}
