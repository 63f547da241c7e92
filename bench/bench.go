// Package bench measures a termhost server against the raw pty on the same
// machine, in one run: throughput, keystroke echo latency, idle memory per
// terminal, fan-out to many subscribers, start-up time and memory bounds
// under sustained output. `termhost bench` is its command-line front end.
//
// Every server figure has a baseline measured in the same run (the same
// shell and workload in a pty read directly by this process), so results
// are comparable as ratios on a noisy machine.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/terminals"
	"github.com/termhost/termhost/terminals/shellint"
)

// Options configure Run.
type Options struct {
	// Server is the base URL of a running server (http://127.0.0.1:7681);
	// empty starts one in this process on a loopback port.
	Server string
	Token  string // owner token for Server
	PID    int    // the Server's process; 0 = find it by its port
	// ShellIntegration is the in-process server's --shell-integration.
	ShellIntegration bool
	// Scrollback of the server's terminals (default 1 MiB, the product
	// default), for the memory bound.
	Scrollback int64
	Plan       Plan
	Progress   io.Writer // one line per step; nil = quiet
}

// Plan sizes each measurement.
type Plan struct {
	Size         int64 // throughput payload
	Reps         int   // throughput runs per side, alternating; the best of each counts
	EchoSamples  int
	IdleCounts   []int // terminals held idle, ascending
	Subscribers  int   // fan-out subscribers
	FanoutSize   int64
	StartSamples int
	BoundedSize  int64 // output through one terminal for the memory bound
	Chunk        int   // size of the workload file the shells cat
}

// FullPlan is the default plan; size is the throughput payload.
func FullPlan(size int64) Plan {
	return Plan{Size: size, Reps: 5, EchoSamples: 500, IdleCounts: []int{50, 200}, Subscribers: 10,
		FanoutSize: size / 2, StartSamples: 20, BoundedSize: 1 << 30, Chunk: 16 << 20}
}

// QuickPlan is a smoke run of a few seconds.
func QuickPlan(size int64) Plan {
	return Plan{Size: min(size, 8<<20), Reps: 1, EchoSamples: 100, IdleCounts: []int{10, 40}, Subscribers: 10,
		FanoutSize: min(size, 4<<20), StartSamples: 5, BoundedSize: 64 << 20, Chunk: 4 << 20}
}

// Targets of the issue "Speed and staying power".
const (
	TargetThroughput  = 0.85     // of raw
	TargetEchoP99     = 0.3      // ms over raw p99
	TargetStartP50    = 5.0      // ms over raw p50
	TargetIdle        = 64 << 10 // bytes per idle terminal
	TargetFanout      = 0.80     // slowest of N vs single
	TargetBoundExtraB = 16 << 20 // RSS after BoundedSize ≤ start + 2×scrollback + this
)

// env is everything a run shares.
type env struct {
	o       Options
	base    string // server base URL
	proc    process
	raw     shellSpec
	work    *workload
	dir     string
	started time.Time
}

func (e *env) logf(format string, args ...any) {
	if e.o.Progress != nil {
		fmt.Fprintf(e.o.Progress, "[%5.1fs] %s\n", time.Since(e.started).Seconds(), fmt.Sprintf(format, args...))
	}
}

// Run measures and returns the result. Failed measurements are recorded in
// Result.Errors; Run itself fails only when nothing can be measured.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Scrollback == 0 {
		o.Scrollback = 1 << 20
	}
	e := &env{o: o, started: time.Now()}
	dir, err := os.MkdirTemp("", "termhost-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	e.dir = dir
	// In process, both sides run bash with an empty home (no rc files to
	// time). Against a running server, the raw side runs what a server
	// started by this user runs: $SHELL with the user's environment.
	shell := benchShell()
	envv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "PS1=$ ", "HISTFILE=/dev/null"}
	e.raw = shellSpec{argv: []string{shell}, env: append(slices.Clone(envv), "TERM=xterm-256color", "COLORTERM=truecolor"), dir: dir}
	if o.Server != "" {
		home, _ := os.UserHomeDir()
		e.raw = shellSpec{argv: []string{terminals.DefaultShell()}, dir: home,
			env: append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")}
	}

	res := &Result{Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(), Go: runtime.Version(),
		Plan: o.Plan, Scrollback: o.Scrollback}
	if o.Server == "" {
		stop, err := e.startServer(shell, envv)
		if err != nil {
			return nil, err
		}
		defer stop()
		e.proc = process{self: true}
		res.Server, res.ShellIntegration = "in-process", o.ShellIntegration
	} else {
		e.base = strings.TrimRight(o.Server, "/")
		res.Server = e.base
		pid := o.PID
		if pid == 0 {
			if !loopback(e.base) {
				return nil, fmt.Errorf("%s is not on this machine: the shells must read the workload file and CPU/RSS come from /proc", e.base)
			}
			if pid, err = findServer(e.base); err != nil {
				return nil, err
			}
		}
		e.proc = process{pid: pid}
		res.ServerPID = pid
	}
	if e.work, err = newWorkload(dir, o.Plan.Chunk); err != nil {
		return nil, err
	}
	// Check the server answers before measuring anything.
	c, err := dial(ctx, e.base, o.Token, "bench-probe")
	if err != nil {
		return nil, err
	}
	c.close()

	steps := []struct {
		name string
		run  func(context.Context, *Result) error
	}{
		{"throughput", e.throughput},
		{"echo", e.echo},
		{"startup", e.startup},
		{"fanout", e.fanout},
		{"idle", e.idle},
		{"bounded", e.bounded},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := s.run(ctx, res); err != nil {
			e.logf("%s: %v", s.name, err)
			res.Errors = append(res.Errors, s.name+": "+err.Error())
		}
	}
	res.Targets = res.evaluate()
	return res, nil
}

// benchShell is the shell both sides run: bash when present (the integration
// the product injects by default), else $SHELL.
func benchShell() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return terminals.DefaultShell()
}

// startServer runs a termhost server on a loopback port in this process.
func (e *env) startServer(shell string, envv []string) (func(), error) {
	m, err := terminals.NewManager(terminals.Config{Shell: shell, Cwd: e.dir, Env: envv,
		ShellIntegration: e.o.ShellIntegration, MaxTerminals: 512, Scrollback: int(e.o.Scrollback),
		DisposeGrace: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	srv, err := handlers.New(handlers.Config{Manager: m, NoAuth: true})
	if err != nil {
		m.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		m.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	e.base = "http://" + ln.Addr().String()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		srv.Close()
		m.Close()
	}, nil
}

// timeoutFor is a generous deadline for moving size bytes.
func timeoutFor(size int64) time.Duration {
	return 60*time.Second + time.Duration(size/(2<<20))*time.Second
}

// newTerminal dials a client that creates and subscribes to a terminal, and
// waits until its shell answers.
func (e *env) newTerminal(ctx context.Context, name string) (*client, string, error) {
	c, err := dial(ctx, e.base, e.o.Token, "bench-"+name)
	if err != nil {
		return nil, "", err
	}
	uri, err := c.createTerminal(ctx, name+"-"+strconv.FormatInt(time.Now().UnixNano()%1e9, 36))
	if err != nil {
		c.close()
		return nil, "", err
	}
	if err := e.syncServer(ctx, c, uri); err != nil {
		_ = c.dispose(ctx, uri)
		c.close()
		return nil, "", err
	}
	return c, uri, nil
}

// syncServer waits until the shell runs a command and prints its marker.
func (e *env) syncServer(ctx context.Context, c *client, uri string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	m := newMarker()
	if err := c.input(ctx, uri, m.command()); err != nil {
		return err
	}
	if err := c.readUntil(ctx, newScanner(m.text()), nil); err != nil {
		return fmt.Errorf("shell did not answer: %w", err)
	}
	return nil
}

func (e *env) closeTerminal(c *client, uri string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = c.dispose(ctx, uri)
	c.close()
}

// throughput: the workload through the server vs the raw pty.
func (e *env) throughput(ctx context.Context, res *Result) error {
	p := e.o.Plan
	times := e.work.times(p.Size)
	payload := e.work.chunk * int64(times)
	tp := &Throughput{Bytes: payload}
	for rep := 0; rep < max(1, p.Reps); rep++ {
		// Raw first, then the server, alternating, best of each.
		r, err := startRaw(e.raw)
		if err != nil {
			return err
		}
		if err := r.sync(20 * time.Second); err != nil {
			r.close()
			return err
		}
		m := newMarker()
		self := process{}
		rawCPU0, _ := self.cpu()
		t0 := time.Now()
		if err := r.write(m.catCommand(e.work.path, times)); err != nil {
			r.close()
			return err
		}
		n, err := r.readUntil(newScanner(m.text()), time.Now().Add(timeoutFor(payload)))
		el := time.Since(t0)
		rawCPU1, _ := self.cpu()
		r.close()
		if err != nil {
			return err
		}
		if s := mbps(payload, el); s > tp.RawMBps {
			tp.RawMBps = s
			tp.RawCPUPerGiB = (rawCPU1 - rawCPU0) / (float64(payload) / (1 << 30))
		}
		tp.PtyBytes = n

		c, uri, err := e.newTerminal(ctx, "throughput")
		if err != nil {
			return err
		}
		m = newMarker()
		var st streamStats
		rctx, cancel := context.WithTimeout(ctx, timeoutFor(payload))
		cpu0, _ := e.proc.cpu()
		t0 = time.Now()
		err = c.input(rctx, uri, m.catCommand(e.work.path, times))
		if err == nil {
			err = c.readUntil(rctx, newScanner(m.text()), &st)
		}
		el = time.Since(t0)
		cpu1, _ := e.proc.cpu()
		cancel()
		e.closeTerminal(c, uri)
		if err != nil {
			return err
		}
		if s := mbps(payload, el); s > tp.ServerMBps {
			tp.ServerMBps = s
			tp.CPUPerGiB = (cpu1 - cpu0) / (float64(payload) / (1 << 30))
			tp.Frames, tp.WireBytes, tp.DataBytes = st.frames, st.wireBytes, st.dataBytes
		}
		e.logf("throughput %d/%d: raw %.0f MB/s, server %.0f MB/s (%d frames)", rep+1, p.Reps, tp.RawMBps, mbps(payload, el), st.frames)
	}
	tp.Ratio = tp.ServerMBps / tp.RawMBps
	if tp.PtyBytes > 0 {
		tp.EscapeOverhead = float64(tp.DataBytes)/float64(tp.PtyBytes) - 1
		tp.WireOverhead = float64(tp.WireBytes)/float64(tp.PtyBytes) - 1
	}
	res.Throughput = tp
	return nil
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

const catRaw = "stty raw -echo; printf '%%s%%s\\n' %s %s; cat\r"

// echo: one byte at a time into `cat` on a raw-mode pty, each sent when the
// previous one came back. Raw and server samples alternate, so a burst of
// noise on the machine hits both sides alike.
func (e *env) echo(ctx context.Context, res *Result) error {
	n := e.o.Plan.EchoSamples
	warm := min(20, n/5)
	ec := &Echo{Samples: n}

	r, err := startRaw(e.raw)
	if err != nil {
		return err
	}
	defer r.close()
	if err := r.sync(20 * time.Second); err != nil {
		return err
	}
	m := newMarker()
	if err := r.write(fmt.Sprintf(catRaw, m.a, m.b)); err != nil {
		return err
	}
	if _, err := r.readUntil(newScanner(m.text()), time.Now().Add(20*time.Second)); err != nil {
		return err
	}

	c, uri, err := e.newTerminal(ctx, "echo")
	if err != nil {
		return err
	}
	defer e.closeTerminal(c, uri)
	m = newMarker()
	if err := c.input(ctx, uri, fmt.Sprintf(catRaw, m.a, m.b)); err != nil {
		return err
	}
	if err := c.readUntil(ctx, newScanner(m.text()), nil); err != nil {
		return err
	}

	var raw, srv []time.Duration
	e.proc.settle() // no garbage of earlier steps collected in the middle
	for i := 0; i < n+warm; i++ {
		b := byte('a' + i%26)
		t0 := time.Now()
		if err := r.echo(b, time.Now().Add(10*time.Second)); err != nil {
			return fmt.Errorf("raw echo: %w", err)
		}
		rawEl := time.Since(t0)

		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		t0 = time.Now()
		err := c.input(sctx, uri, string(b))
		for err == nil {
			var frame []byte
			if frame, err = c.read(sctx); err == nil {
				if d := dataOf(frame); d != nil && slices.Contains(d, b) {
					break
				}
			}
		}
		srvEl := time.Since(t0)
		cancel()
		if err != nil {
			return fmt.Errorf("server echo: %w", err)
		}
		if i >= warm {
			raw, srv = append(raw, rawEl), append(srv, srvEl)
		}
	}
	ec.Raw, ec.Server = percentiles(raw), percentiles(srv)
	ec.DeltaP99 = ec.Server.P99 - ec.Raw.P99
	e.logf("echo: raw p50 %.3f p99 %.3f ms, server p50 %.3f p99 %.3f ms", ec.Raw.P50, ec.Raw.P99, ec.Server.P50, ec.Server.P99)
	res.Echo = ec
	return nil
}

// startup: createTerminal to the first prompt byte vs spawning the same shell
// in a raw pty to its first byte. With shell integration (in process, where
// the injection is known) the raw side runs the injected shell too and
// strips its output with the same shellint.Processor, so both sides time the
// first visible byte; plain bash is reported beside it.
func (e *env) startup(ctx context.Context, res *Result) error {
	n := e.o.Plan.StartSamples
	c, err := dial(ctx, e.base, e.o.Token, "bench-startup")
	if err != nil {
		return err
	}
	defer c.close()
	same := func() (time.Duration, error) { return rawFirstByte(e.raw, nil) }
	integrated := false
	if e.proc.self && e.o.ShellIntegration {
		inj, err := shellint.Inject(e.dir, e.raw.argv[0], nil, e.raw.env)
		if err == nil && inj.Nonce != "" {
			integrated = true
			spec := shellSpec{argv: inj.Argv, env: inj.Env, dir: e.dir}
			same = func() (time.Duration, error) {
				return rawFirstByte(spec, shellint.NewProcessor(shellint.Options{Nonce: inj.Nonce, Mode: inj.Mode}))
			}
		}
	}
	var raw, plain, srv []time.Duration
	for i := 0; i < n; i++ {
		d, err := same()
		if err != nil {
			return err
		}
		raw = append(raw, d)
		if integrated {
			if d, err = rawFirstByte(e.raw, nil); err != nil {
				return err
			}
			plain = append(plain, d)
		}

		d, uri, err := e.firstPrompt(ctx, c, i)
		if err == nil {
			// A shell that is still starting up may sit on SIGHUP: let it
			// reach its prompt before disposing.
			err = e.syncServer(ctx, c, uri)
		}
		if uri != "" {
			_ = c.dispose(ctx, uri)
		}
		if err != nil {
			return err
		}
		srv = append(srv, d)
	}
	st := &Startup{Samples: n, RawP50: percentiles(raw).P50, ServerP50: percentiles(srv).P50, Integrated: integrated}
	st.Delta = st.ServerP50 - st.RawP50
	if integrated {
		st.PlainP50 = percentiles(plain).P50
	}
	e.logf("startup: raw p50 %.1f ms, server p50 %.1f ms (integration %s)", st.RawP50, st.ServerP50, onOff(integrated))
	res.Startup = st
	return nil
}

// rawFirstByte spawns a shell in a pty and times its first output byte, or
// with a Processor its first byte of data after stripping.
func rawFirstByte(spec shellSpec, proc *shellint.Processor) (time.Duration, error) {
	t0 := time.Now()
	r, err := startRaw(spec)
	if err != nil {
		return 0, err
	}
	defer r.close()
	_ = r.f.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		n, err := r.f.Read(r.buf)
		if n > 0 {
			if proc == nil {
				return time.Since(t0), nil
			}
			seen := false
			proc.Write(r.buf[:n], func(ev shellint.Event) { seen = seen || (ev.Kind == shellint.Data && ev.Text != "") })
			if seen {
				return time.Since(t0), nil
			}
		}
		if err != nil {
			return 0, fmt.Errorf("raw first byte: %w", err)
		}
	}
}

// firstPrompt creates a terminal and subscribes in one go (pipelined), and
// times until its first output: in the snapshot or in a terminal/data.
func (e *env) firstPrompt(ctx context.Context, c *client, i int) (time.Duration, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	uri := fmt.Sprintf("ahp-terminal:/start-%d-%d", time.Now().UnixNano()%1e6, i)
	t0 := time.Now()
	create, err := c.request(ctx, "createTerminal", map[string]any{"channel": uri,
		"claim": map[string]any{"kind": "client", "clientId": c.id}, "cols": 120, "rows": 40})
	if err != nil {
		return 0, "", err
	}
	sub, err := c.request(ctx, "subscribe", map[string]any{"channel": uri})
	if err != nil {
		return 0, "", err
	}
	if _, err := c.await(ctx, create, nil); err != nil {
		return 0, "", fmt.Errorf("createTerminal: %w", err)
	}
	var seen bool
	result, err := c.await(ctx, sub, func(frame []byte) { seen = seen || dataOf(frame) != nil })
	if err != nil {
		return 0, uri, fmt.Errorf("subscribe: %w", err)
	}
	if seen || snapshotHasText(result) {
		return time.Since(t0), uri, nil
	}
	for {
		frame, err := c.read(ctx)
		if err != nil {
			return 0, uri, err
		}
		if d := dataOf(frame); len(d) > 0 {
			return time.Since(t0), uri, nil
		}
	}
}

// fanout: the slowest of N subscribers of one terminal vs a lone subscriber.
func (e *env) fanout(ctx context.Context, res *Result) error {
	p := e.o.Plan
	times := e.work.times(p.FanoutSize)
	payload := e.work.chunk * int64(times)
	fo := &Fanout{Subscribers: p.Subscribers, Bytes: payload}

	run := func(subs int) (slowest time.Duration, evicted int, err error) {
		c, uri, err := e.newTerminal(ctx, fmt.Sprintf("fanout%d", subs))
		if err != nil {
			return 0, 0, err
		}
		defer e.closeTerminal(c, uri)
		all := []*client{c}
		for i := 1; i < subs; i++ {
			s, err := dial(ctx, e.base, e.o.Token, fmt.Sprintf("bench-sub-%d", i))
			if err != nil {
				return 0, 0, err
			}
			defer s.close()
			if err := s.subscribe(ctx, uri); err != nil {
				return 0, 0, err
			}
			all = append(all, s)
		}
		m := newMarker()
		rctx, cancel := context.WithTimeout(ctx, timeoutFor(payload*int64(subs)))
		defer cancel()
		var wg sync.WaitGroup
		ends := make([]time.Duration, len(all))
		errs := make([]error, len(all))
		t0 := time.Now()
		if err := c.input(rctx, uri, m.catCommand(e.work.path, times)); err != nil {
			return 0, 0, err
		}
		for i, s := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.readUntil(rctx, newScanner(m.text()), nil)
				ends[i] = time.Since(t0)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			switch {
			case errors.Is(err, errEvicted):
				evicted++
			case err != nil:
				return 0, evicted, err
			default:
				slowest = max(slowest, ends[i])
			}
		}
		return slowest, evicted, nil
	}
	single, _, err := run(1)
	if err != nil {
		return err
	}
	multi, evicted, err := run(p.Subscribers)
	if err != nil {
		return err
	}
	fo.SingleMBps, fo.SlowestMBps, fo.Evicted = mbps(payload, single), mbps(payload, multi), evicted
	fo.Ratio = fo.SlowestMBps / fo.SingleMBps
	if evicted > 0 {
		fo.Ratio = 0
	}
	e.logf("fanout: single %.0f MB/s, slowest of %d %.0f MB/s, %d evicted", fo.SingleMBps, p.Subscribers, fo.SlowestMBps, evicted)
	res.Fanout = fo
	return nil
}

// idle: memory per idle terminal (server process; shells are other processes).
func (e *env) idle(ctx context.Context, res *Result) error {
	e.proc.settle()
	rss0, err := e.proc.rss()
	if err != nil {
		return err
	}
	heap0 := e.proc.heap()
	c, err := dial(ctx, e.base, e.o.Token, "bench-idle")
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
	for _, count := range e.o.Plan.IdleCounts {
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
		e.proc.settle()
		rss, err := e.proc.rss()
		if err != nil {
			return err
		}
		im := IdleMemory{Terminals: count, RSSPerTerminal: float64(rss-rss0) / float64(count), HeapPerTerminal: -1, Settled: e.proc.self}
		if heap0 >= 0 {
			im.HeapPerTerminal = float64(e.proc.heap()-heap0) / float64(count)
		}
		e.logf("idle: %d terminals: %.1f KiB RSS, %.1f KiB heap per terminal", count, im.RSSPerTerminal/1024, im.HeapPerTerminal/1024)
		res.Idle = append(res.Idle, im)
	}
	return nil
}

// bounded: server RSS after a lot of output through one terminal.
func (e *env) bounded(ctx context.Context, res *Result) error {
	size := e.o.Plan.BoundedSize
	times := e.work.times(size)
	payload := e.work.chunk * int64(times)
	c, uri, err := e.newTerminal(ctx, "bounded")
	if err != nil {
		return err
	}
	defer e.closeTerminal(c, uri)
	e.proc.settle()
	start, err := e.proc.rss()
	if err != nil {
		return err
	}
	b := &Bounded{Bytes: payload, StartRSS: start, Limit: start + 2*e.o.Scrollback + TargetBoundExtraB}
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
				if r, err := e.proc.rss(); err == nil {
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
	err = c.input(rctx, uri, m.catCommand(e.work.path, times))
	if err == nil {
		err = c.readUntil(rctx, newScanner(m.text()), nil)
	}
	el := time.Since(t0)
	close(done)
	if err != nil {
		return err
	}
	b.EndRSS, _ = e.proc.rss()
	mu.Lock()
	b.MaxRSS = max(b.MaxRSS, b.EndRSS)
	mu.Unlock()
	b.HeapEnd = e.proc.heap()
	e.logf("bounded: %d MiB in %.1fs (%.0f MB/s): RSS %d → %d MiB (max %d, limit %d)", payload>>20, el.Seconds(),
		mbps(payload, el), start>>20, b.EndRSS>>20, b.MaxRSS>>20, b.Limit>>20)
	res.Bounded = b
	return nil
}

func percentiles(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	s := slices.Clone(d)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) float64 {
		i := min(len(s)-1, int(q*float64(len(s))))
		return ms(s[i])
	}
	return Latency{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(s[len(s)-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
