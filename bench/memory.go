package bench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// idle: memory per idle terminal (server process; shells are other processes).
func (rn *runner) idle(ctx context.Context, res *Result) error {
	rn.proc.settle()
	rss0, err := rn.proc.rss()
	if err != nil {
		return err
	}
	heap0 := rn.proc.heap()
	c, err := rn.dial(ctx, "bench-idle")
	if err != nil {
		return err
	}
	defer c.close()
	var uris []string
	defer func() {
		for _, uri := range uris {
			_ = c.dispose(context.Background(), uri)
		}
	}()
	prompted := map[string]bool{}
	onFrame := func(frame []byte) {
		if dataOf(frame) != nil {
			if ch := channelOf(frame); ch != "" {
				prompted[ch] = true
			}
		}
	}
	for _, count := range rn.o.Plan.IdleCounts {
		for len(uris) < count {
			uri := fmt.Sprintf("ahp-terminal:/idle-%d", len(uris))
			if _, err := c.call(ctx, "createTerminal", map[string]any{"channel": uri,
				"claim": map[string]any{"kind": "client", "clientId": c.id}}, onFrame); err != nil {
				return fmt.Errorf("createTerminal #%d: %w", len(uris)+1, err)
			}
			uris = append(uris, uri)
			res, err := c.call(ctx, "subscribe", map[string]any{"channel": uri}, onFrame)
			if err != nil {
				return err
			}
			if snapshotHasText(res) { // the prompt came before the subscription
				prompted[uri] = true
			}
		}
		// Wait for every prompt, then let the shells settle.
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		for len(prompted) < len(uris) {
			frame, err := c.read(wctx)
			if err != nil {
				cancel()
				return fmt.Errorf("waiting for %d prompts: %w", len(uris)-len(prompted), err)
			}
			onFrame(frame)
		}
		cancel()
		time.Sleep(300 * time.Millisecond)
		rn.proc.settle()
		rss, err := rn.proc.rss()
		if err != nil {
			return err
		}
		im := IdleMemory{Terminals: count, RSSPerTerminal: float64(rss-rss0) / float64(count), HeapPerTerminal: -1, Settled: rn.proc.self}
		if heap0 >= 0 {
			im.HeapPerTerminal = float64(rn.proc.heap()-heap0) / float64(count)
		}
		rn.logf("idle: %d terminals: %.1f KiB RSS, %.1f KiB heap per terminal", count, im.RSSPerTerminal/1024, im.HeapPerTerminal/1024)
		res.Idle = append(res.Idle, im)
	}
	return nil
}

// bounded: server RSS after a lot of output through one terminal.
func (rn *runner) bounded(ctx context.Context, res *Result) error {
	size := rn.o.Plan.BoundedSize
	times := rn.work.times(size)
	payload := rn.work.chunk * int64(times)
	c, uri, err := rn.newTerminal(ctx, "bounded")
	if err != nil {
		return err
	}
	defer rn.closeTerminal(c, uri)
	rn.proc.settle()
	start, err := rn.proc.rss()
	if err != nil {
		return err
	}
	b := &Bounded{Bytes: payload, StartRSS: start, Limit: start + 2*rn.o.Scrollback + TargetBoundExtraB}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if r, err := rn.proc.rss(); err == nil {
					mu.Lock()
					b.MaxRSS = max(b.MaxRSS, r)
					mu.Unlock()
				}
			}
		}
	}()
	m := newMarker()
	rctx, cancel := context.WithTimeout(ctx, timeoutFor(payload))
	defer cancel()
	t0 := time.Now()
	err = c.input(rctx, uri, m.catCommand(rn.work.path, times))
	if err == nil {
		err = c.readUntil(rctx, newScanner(m.text()), nil)
	}
	el := time.Since(t0)
	close(done)
	if err != nil {
		return err
	}
	b.EndRSS, _ = rn.proc.rss()
	mu.Lock()
	b.MaxRSS = max(b.MaxRSS, b.EndRSS)
	mu.Unlock()
	b.HeapEnd = rn.proc.heap()
	rn.logf("bounded: %d MiB in %.1fs (%.0f MB/s): RSS %d → %d MiB (max %d, limit %d)", payload>>20, el.Seconds(),
		mbps(payload, el), start>>20, b.EndRSS>>20, b.MaxRSS>>20, b.Limit>>20)
	res.Bounded = b
	return nil
}
