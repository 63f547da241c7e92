package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// relay is the throughput run's second baseline: the least a WebSocket
// terminal server can do, ttyd's design (each read of the pty sent as one
// binary message, each message received typed into it), with no protocol,
// no shell integration and nothing kept. It runs on loopback, with the raw
// side's shell, in a process of its own when the
// bench has a RelayCommand (so that its CPU is measured as the server's
// is), else in this process. Its ratio to the raw pty is what moving output
// through any WebSocket server costs on this machine; the server's ratio is
// read against it.
type relay struct {
	sh       shellSpec
	url      string
	proc     *process // the relay's own process, or nil when it runs in this one
	stopProc func()
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

// RelayEnv set to 1 makes the process the bench starts from RelayCommand
// serve the relay: termhost's main calls RelayMain then.
const RelayEnv = "TERMHOST_BENCH_RELAY"

// relayShellEnv names the shell the relay process runs.
const relayShellEnv = "TERMHOST_BENCH_RELAY_SHELL"

// relayListening is the line RelayMain prints once it listens.
var relayListening = regexp.MustCompile(`^bench relay listening at (ws://\S+)$`)

// RelayMain serves the relay in this process until SIGTERM or SIGINT: the
// shell named by $TERMHOST_BENCH_RELAY_SHELL, in the current directory and
// environment (without the relay's own variables).
func RelayMain(stdout io.Writer) int {
	var envv []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, RelayEnv+"=") && !strings.HasPrefix(kv, relayShellEnv+"=") {
			envv = append(envv, kv)
		}
	}
	dir, _ := os.Getwd()
	stopped := make(chan os.Signal, 1)
	signal.Notify(stopped, syscall.SIGTERM, syscall.SIGINT)
	r, err := startRelay(shellSpec{argv: []string{os.Getenv(relayShellEnv)}, env: envv, dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "bench relay listening at %s\n", r.url)
	<-stopped
	r.stop()
	return 0
}

// startRelayProcess runs the relay as command (RelayMain in another process).
func startRelayProcess(ctx context.Context, command []string, sh shellSpec, stderr io.Writer) (*relay, error) {
	envv := append(slices.Clone(sh.env), RelayEnv+"=1", relayShellEnv+"="+sh.argv[0])
	url, pid, stop, err := startListening(ctx, command, envv, sh.dir, stderr, relayListening)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	return &relay{url: url, proc: &process{pid: pid}, stopProc: stop}, nil
}

// stop ends the relay and its connections and waits for them.
func (r *relay) stop() {
	if r.stopProc != nil {
		r.stopProc()
		return
	}
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

// cpu is the relay process's CPU seconds so far (0 when it runs in this
// process: the bench's clients would be counted with it).
func (r *relay) cpu() float64 {
	if r.proc == nil {
		return 0
	}
	c, _ := r.proc.cpu()
	return c
}

// relayRun cats the workload through the relay; it returns the time and
// the relay process's CPU seconds (0 when it runs in this process).
func (rn *runner) relayRun(ctx context.Context, r *relay, times int, payload int64) (time.Duration, float64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeoutFor(payload))
	defer cancel()
	c, _, err := websocket.Dial(ctx, r.url, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("relay: %w", err)
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
		return 0, 0, err
	}
	if err := until(sync); err != nil {
		return 0, 0, fmt.Errorf("relay shell did not answer: %w", err)
	}
	m := newMarker()
	cpu0 := r.cpu()
	t0 := time.Now()
	if err := c.Write(ctx, websocket.MessageBinary, []byte(m.catCommand(rn.work.path, times))); err != nil {
		return 0, 0, err
	}
	err = until(m)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("relay: no end marker within %v", timeoutFor(payload))
	}
	return time.Since(t0), r.cpu() - cpu0, err
}
