package bench

import (
	"context"
	"encoding/json"
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

// relay is the bench's peer when ttyd itself is not installed: the least a
// WebSocket terminal server can do, ttyd's design and ttyd's protocol
// (ttyd.go): the client's JSON hello spawns the shell at its size, each
// read of the pty goes out as one OUTPUT message, each INPUT message is
// typed into it; no shell integration, nothing kept. It runs on loopback,
// with the raw side's shell, in a process of its own when the bench has a
// RelayCommand (so that its CPU is measured as the server's is), else in
// this process. Its ratio to the raw pty is what moving output through any
// WebSocket server costs on this machine; the server's ratio is read
// against it. With ttyd installed, startTTYD returns ttyd as a relay.
type relay struct {
	sh       shellSpec
	name     string // what the report calls it
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

// relayName is the relay's name in the report.
const relayName = "the bare relay (ttyd's protocol)"

func startRelay(sh shellSpec) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &relay{sh: sh, url: "ws://" + ln.Addr().String() + ttydPath, name: relayName}
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
	return &relay{url: url, proc: &process{pid: pid}, stopProc: stop, name: relayName}, nil
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

// serve relays one connection to a shell of its own until either ends,
// as ttyd serves one: the shell starts at the size the client's first
// message names; each pty read is one OUTPUT message, written before the
// next read (ttyd pauses the pty until its write is done).
func (r *relay) serve(w http.ResponseWriter, req *http.Request) {
	if !r.enter() {
		return
	}
	defer r.wg.Done()
	if req.URL.Path != ttydPath {
		http.NotFound(w, req)
		return
	}
	c, err := websocket.Accept(w, req, &websocket.AcceptOptions{Subprotocols: []string{ttydSubprotocol}})
	if err != nil {
		return
	}
	defer c.CloseNow()
	if c.Subprotocol() != ttydSubprotocol {
		_ = c.Close(websocket.StatusPolicyViolation, "the subprotocol must be "+ttydSubprotocol)
		return
	}
	c.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	_, hello, err := c.Read(ctx)
	var size ttydSize
	if err == nil && (len(hello) == 0 || hello[0] != ttydHello || json.Unmarshal(hello, &size) != nil) {
		err = errTTYDHello
	}
	if err != nil {
		_ = c.Close(websocket.StatusPolicyViolation, errTTYDHello.Error())
		return
	}
	sh, err := startRawSized(r.sh, size.Columns, size.Rows)
	if err != nil {
		_ = c.Close(websocket.StatusInternalError, "could not start the shell")
		return
	}
	defer sh.close()
	// What ttyd sends first: the window title, then the preferences.
	if c.Write(ctx, websocket.MessageBinary, append([]byte{ttydTitle}, r.sh.argv[0]+" (bench relay)"...)) != nil ||
		c.Write(ctx, websocket.MessageBinary, []byte{ttydPrefs, '{', '}'}) != nil {
		return
	}
	var input sync.WaitGroup
	input.Go(func() {
		defer cancel()
		for {
			_, b, err := c.Read(ctx)
			if err != nil || len(b) == 0 {
				return
			}
			switch b[0] {
			case ttydInput:
				if _, err := sh.f.Write(b[1:]); err != nil {
					return
				}
			case ttydResize:
				var sz ttydSize
				if json.Unmarshal(b[1:], &sz) == nil && sz.Columns > 0 && sz.Rows > 0 {
					_ = sh.resize(sz.Columns, sz.Rows)
				}
			}
			// PAUSE and RESUME (ttyd's web client's flow control) and
			// anything else are ignored, as ttyd ignores unknown commands:
			// the bench's client reads everything at once.
		}
	})
	// The client leaving or the relay stopping ends the read below.
	stopWaking := context.AfterFunc(ctx, func() { _ = sh.f.SetReadDeadline(time.Now()) })
	sh.buf[0] = ttydOutput
	for {
		n, err := sh.f.Read(sh.buf[1:])
		if n > 0 && c.Write(ctx, websocket.MessageBinary, sh.buf[:1+n]) != nil {
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

// relayRun cats the workload through the relay (or ttyd) with a ttyd
// client; it returns the time and the peer process's CPU seconds (0 when
// it runs in this process).
func (rn *runner) relayRun(ctx context.Context, r *relay, times int, payload int64) (time.Duration, float64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeoutFor(payload))
	defer cancel()
	c, err := r.dial(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer c.close()
	m := newMarker()
	cpu0 := r.cpu()
	t0 := time.Now()
	if err := c.input(ctx, m.catCommand(rn.work.path, times)); err != nil {
		return 0, 0, err
	}
	err = c.until(ctx, newScanner(m.text()))
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%s: no end marker within %v", r.name, timeoutFor(payload))
	}
	return time.Since(t0), r.cpu() - cpu0, err
}

// dial connects a ttyd client to the relay (or ttyd) and waits until its
// shell is at a prompt and idle.
func (r *relay) dial(ctx context.Context) (*ttydClient, error) {
	c, err := dialTTYD(ctx, r.url, 120, 40)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.name, err)
	}
	sync := newMarker()
	err = c.input(ctx, sync.command())
	if err == nil {
		err = c.until(ctx, newScanner(sync.text()))
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("%s: the shell did not answer: %w", r.name, err)
	}
	return c, nil
}
