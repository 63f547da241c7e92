package bench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// idle: server RSS per idle terminal as browsers hold them: one WebSocket
// per terminal, with a browser's headers and deflate offered, each with a
// reader that takes what the server sends (binary output, as the workbench
// asks); the growth from one open tab on, at rest (see restRSS) and just
// after the tabs opened. The shells are other processes and not counted;
// the bench forces no collection (termhost runs one itself at rest).
func (rn *runner) idle(ctx context.Context, res *Result) error {
	ctl, err := rn.dial(ctx, "bench-idle")
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	var tabs []*idleTab
	defer func() {
		cancel() // ends every tab's reader, which closes its connection
		for _, t := range tabs {
			<-t.done
			dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = ctl.dispose(dctx, t.uri)
			dcancel()
		}
		ctl.close()
	}()
	// A first tab, not counted, so that what a server sets up once (its
	// first terminal, connection, schema, pools) is not spread over the
	// terminals measured.
	warm, err := rn.openTab(ctx, rctx, 0)
	if err != nil {
		return fmt.Errorf("first terminal: %w", err)
	}
	tabs = append(tabs, warm)
	select {
	case <-warm.prompted:
	case <-time.After(60 * time.Second):
		return fmt.Errorf("the first terminal showed no prompt within 60 s")
	case <-ctx.Done():
		return ctx.Err()
	}
	rss0, err := rn.restRSS(ctx)
	if err != nil {
		return err
	}
	for _, count := range rn.o.Plan.IdleCounts {
		for len(tabs) < count+1 {
			t, err := rn.openTab(ctx, rctx, len(tabs))
			if err != nil {
				return fmt.Errorf("terminal #%d: %w", len(tabs), err)
			}
			tabs = append(tabs, t)
		}
		wait := time.NewTimer(60 * time.Second)
		for i, t := range tabs {
			select {
			case <-t.prompted:
			case <-wait.C:
				return fmt.Errorf("terminal #%d showed no prompt within 60 s", i)
			case <-ctx.Done():
				wait.Stop()
				return ctx.Err()
			}
		}
		wait.Stop()
		time.Sleep(300 * time.Millisecond) // let the shells' prompts settle (a measurement pause, not a sync)
		opened, err := rn.proc.rss()
		if err != nil {
			return err
		}
		rss, err := rn.restRSS(ctx)
		if err != nil {
			return err
		}
		im := IdleMemory{Terminals: count, RSSPerTerminal: float64(rss-rss0) / float64(count),
			OpenedRSSPerTerminal: float64(opened-rss0) / float64(count), InProcess: rn.inProc}
		rn.logf("idle: %d terminals, one WebSocket each: %.1f KiB RSS per terminal at rest, %.1f just after they opened",
			count, im.RSSPerTerminal/1024, im.OpenedRSSPerTerminal/1024)
		res.Idle = append(res.Idle, im)
	}
	return nil
}

// restRSS is the server's RSS after Plan.RestWait: in the full plan past
// idlemem.Quiet after the last tab came, when termhost gives back the memory
// the burst left (a measurement pause, not a sync: any server is measured
// the same way).
func (rn *runner) restRSS(ctx context.Context) (int64, error) {
	select {
	case <-time.After(rn.o.Plan.RestWait):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return rn.proc.rss()
}

// idleTab is one browser tab: a connection, its terminal and its reader.
type idleTab struct {
	uri      string
	prompted chan struct{} // closed at the first output
	done     chan struct{} // closed when the reader has ended and closed the connection
}

// openTab connects, creates and subscribes to terminal i, and starts a
// reader that runs until rctx ends.
func (rn *runner) openTab(ctx, rctx context.Context, i int) (*idleTab, error) {
	// As a browser's tab: its headers, deflate offered (the server decides).
	c, err := dial(ctx, rn.wsURL, rn.o.Token, fmt.Sprintf("bench-tab-%d", i), wireMode{compress: true, browser: true})
	if err != nil {
		return nil, err
	}
	uri := fmt.Sprintf("ahp-terminal:/idle-%d-%d", i, time.Now().UnixNano()%1e9)
	t := &idleTab{uri: uri, prompted: make(chan struct{}), done: make(chan struct{})}
	prompted := sync.OnceFunc(func() { close(t.prompted) })
	onFrame := func(frame []byte) {
		if c.dataOf(frame) != nil {
			prompted()
		}
	}
	if _, err := c.call(ctx, "createTerminal", map[string]any{"channel": uri,
		"claim": map[string]any{"kind": "client", "clientId": c.id}, "cols": 120, "rows": 40}, onFrame); err != nil {
		c.close()
		return nil, err
	}
	result, err := c.call(ctx, "subscribe", map[string]any{"channel": uri}, onFrame)
	if err != nil {
		c.close()
		return nil, err
	}
	if snapshotHasText(result) { // the prompt came before the subscription
		prompted()
	}
	go func() {
		defer close(t.done)
		defer c.close()
		for {
			frame, err := c.read(rctx)
			if err != nil {
				return
			}
			onFrame(frame)
		}
	}()
	return t, nil
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
	start, err := rn.proc.rss()
	if err != nil {
		return err
	}
	b := &Bounded{Bytes: payload, StartRSS: start, Limit: start + 2*rn.o.Scrollback + TargetBoundExtraB}
	var mu sync.Mutex
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
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
	<-sampled // the sampler writes b.MaxRSS: it must be gone before b is read
	if err != nil {
		return err
	}
	b.EndRSS, _ = rn.proc.rss()
	mu.Lock()
	b.MaxRSS = max(b.MaxRSS, b.EndRSS)
	mu.Unlock()
	rn.logf("bounded: %d MiB in %.1fs (%.0f MB/s): RSS %d → %d MiB (max %d, limit %d)", payload>>20, el.Seconds(),
		mbps(payload, el), start>>20, b.EndRSS>>20, b.MaxRSS>>20, b.Limit>>20)
	res.Bounded = b
	return nil
}
