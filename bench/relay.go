package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// relay is the throughput run's second baseline: the least a WebSocket
// terminal server can do, ttyd's design (each read of the pty sent as one
// binary message, each message received typed into it), with no protocol,
// no shell integration and nothing kept. It runs in this process, on
// loopback, with the raw side's shell. Its ratio to the raw pty is what
// moving output through any WebSocket server costs on this machine; the
// server's ratio is read against it.
type relay struct {
	sh       shellSpec
	url      string
	srv      *http.Server
	wg       sync.WaitGroup // the serving goroutine and every connection's
	mu       sync.Mutex
	stopping bool
	ctx      context.Context
	close    context.CancelFunc
}

func startRelay(sh shellSpec) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &relay{sh: sh, url: "ws://" + ln.Addr().String() + "/"}
	r.ctx, r.close = context.WithCancel(context.Background())
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	r.wg.Go(func() { _ = r.srv.Serve(ln) })
	return r, nil
}

// stop ends the relay and its connections and waits for them.
func (r *relay) stop() {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.close()
	_ = r.srv.Close()
	r.wg.Wait()
}

// serve relays one connection to a shell of its own until either ends.
func (r *relay) serve(w http.ResponseWriter, req *http.Request) {
	if !r.enter() {
		return
	}
	defer r.wg.Done()
	c, err := websocket.Accept(w, req, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	sh, err := startRaw(r.sh)
	if err != nil {
		return
	}
	defer sh.close()
	ctx, cancel := context.WithCancel(r.ctx)
	var input sync.WaitGroup
	input.Go(func() {
		defer cancel()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			if _, err := sh.f.Write(b); err != nil {
				return
			}
		}
	})
	// The client leaving or the relay stopping ends the read below.
	stopWaking := context.AfterFunc(ctx, func() { _ = sh.f.SetReadDeadline(time.Now()) })
	for {
		n, err := sh.f.Read(sh.buf)
		if n > 0 && c.Write(ctx, websocket.MessageBinary, sh.buf[:n]) != nil {
			break
		}
		if err != nil {
			break
		}
	}
	cancel()
	input.Wait()
	stopWaking()
}

// enter counts a connection in, unless the relay is stopping.
func (r *relay) enter() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return false
	}
	r.wg.Add(1)
	return true
}

// relayRun cats the workload through the relay; it returns the time.
func (rn *runner) relayRun(ctx context.Context, r *relay, times int, payload int64) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeoutFor(payload))
	defer cancel()
	c, _, err := websocket.Dial(ctx, r.url, nil)
	if err != nil {
		return 0, fmt.Errorf("relay: %w", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	var buf bytes.Buffer
	until := func(m marker) error {
		sc := newScanner(m.text())
		for {
			_, rd, err := c.Reader(ctx)
			if err != nil {
				return err
			}
			buf.Reset()
			if _, err := buf.ReadFrom(rd); err != nil {
				return err
			}
			if sc.feed(buf.Bytes()) {
				return nil
			}
		}
	}
	sync := newMarker() // the shell is at a prompt and idle
	if err := c.Write(ctx, websocket.MessageBinary, []byte(sync.command())); err != nil {
		return 0, err
	}
	if err := until(sync); err != nil {
		return 0, fmt.Errorf("relay shell did not answer: %w", err)
	}
	m := newMarker()
	t0 := time.Now()
	if err := c.Write(ctx, websocket.MessageBinary, []byte(m.catCommand(rn.work.path, times))); err != nil {
		return 0, err
	}
	err = until(m)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("relay: no end marker within %v", timeoutFor(payload))
	}
	return time.Since(t0), err
}
