package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	ahpclient "github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/terminals"
)

// The hostile row: the owner's keystroke echo (one byte at a time into `cat`
// on a raw-mode pty, as the echo step) while hostile participants attack the
// server, against the same owner, terminal and server just before the
// attack starts. Each attack is a sub-row with its own quiet samples, so a
// server left worse off by one attack does not flatter the next.
//
// The attackers are real clients on loopback (this package's client,
// coder/websocket; net/http for downloads), viewers as share links and,
// when the server signs people in by --auth proxy, as people. Every one of
// them stops when its attack's context ends; the programs the attacks run
// in terminals are bounded loops, and their terminals are disposed.

// HostileIdentityHeader is the identity header of the server the hostile
// row starts (--auth proxy, with this process as the trusted proxy), and
// hostileDomain the domain of the people it signs in as viewers.
const (
	HostileIdentityHeader = "X-Bench-Identity"
	hostileDomain         = "hostile.bench.invalid"
)

// Hostile is the hostile row.
type Hostile struct {
	// Participants is N, the hostile participants of each attack that has
	// many (see each attack's What).
	Participants int `json:"participants"`
	// Server is the server measured: the bench starts one of its own for
	// this row (--auth proxy, so that share links and people are viewers,
	// not owners), else the one given by --server.
	Server    string          `json:"server"`
	InProcess bool            `json:"inProcess"` // its RSS includes the bench's clients
	Attacks   []HostileAttack `json:"attacks"`
}

// HostileAttack is one attack: the owner's echo latency quiet and under
// attack, in ms, and the server's RSS.
type HostileAttack struct {
	Name string `json:"name"`
	What string `json:"what"` // who attacks, in words
	// Skipped says why the attack did not run (no recordings, no --auth
	// proxy); the figures are then zero.
	Skipped         string  `json:"skipped,omitempty"`
	Quiet           Latency `json:"quiet"`
	Attacked        Latency `json:"attacked"`
	QuietSamples    int     `json:"quietSamples"`
	AttackedSamples int     `json:"attackedSamples"`
	// RatioP50 and RatioP99 are attacked ÷ quiet.
	RatioP50 float64 `json:"ratioP50"`
	RatioP99 float64 `json:"ratioP99"`
	// Timeouts counts echoes that did not come back within the bound of a
	// sample (then counted at the bound, and the sampling ends: the bound
	// closed the owner's socket).
	Timeouts int `json:"timeouts"`
	// OwnerFrames is what the owner's socket read per echo sample besides
	// its echo (catalogue changes, presence…), quiet and under attack.
	QuietFramesPerEcho    float64 `json:"quietFramesPerEcho"`
	AttackedFramesPerEcho float64 `json:"attackedFramesPerEcho"`
	// Ops counts the attack's operations (subscriptions, previews,
	// connections, frames read, downloads…); Refused those the server
	// refused or cut off (4029, 503, a closed socket), after which the
	// attacker goes on.
	Ops     int64 `json:"ops"`
	Refused int64 `json:"refused"`
	// RSSBefore is the server's RSS just before the attack, RSSPeak its
	// highest from then until the attack ended (sampled every 20 ms).
	RSSBefore int64 `json:"rssBefore"`
	RSSPeak   int64 `json:"rssPeak"`
	// ServerCores and BenchCores are the CPU the server and the bench's
	// process (the owner and the attackers, and the server too when it runs
	// in process) used while the attack ran, in cores (CPU seconds per
	// second): on 2 cores, attackers that take one leave the server and the
	// owner less, which the ratios include.
	ServerCores float64 `json:"serverCores"`
	BenchCores  float64 `json:"benchCores"`
	Error       string  `json:"error,omitempty"`
}

// Attacks are the hostile row's attacks, in the order they run.
var Attacks = []string{"output", "resubscribe", "previews", "presence", "titles", "unread-links", "unread-persons", "downloads"}

// hostileEchoBound is the longest one echo sample may take under attack.
const hostileEchoBound = 5 * time.Second

// hostileReady bounds how long an attack may take to get going.
const hostileReady = 15 * time.Second

// hostileFill is the output the owner's terminal holds before it runs cat:
// a terminal in use, whose snapshots and previews are not empty.
const hostileFill = 256 << 10

// worstEscapes are the sequences that cost an emulator the most per byte:
// REP, SU, SD, IL, DL, ECH, ICH and DCH with the largest count a parameter
// can hold, after one printable character for REP to repeat.
func worstEscapes(n int) []byte {
	var b []byte
	for range n {
		b = append(b, 'x')
		for _, final := range "bSTLMX@P" {
			b = append(b, "\x1b[2147483647"...)
			b = append(b, byte(final))
		}
	}
	return b
}

// hostileRun is one run of the hostile row.
type hostileRun struct {
	rn      *runner
	wsURL   string // the server's AHP endpoint
	base    string // its base URL
	token   string // owner token
	proc    process
	persons bool // the server signs people in by HostileIdentityHeader
	n       int
	names   atomic.Int64
}

func (h *hostileRun) name(what string) string {
	return fmt.Sprintf("hostile-%s-%d", what, h.names.Add(1))
}

// hostile runs the row.
func (rn *runner) hostile(ctx context.Context, res *Result) error {
	n := max(1, rn.o.Plan.HostileN)
	hr := &Hostile{Participants: n}
	h := &hostileRun{rn: rn, n: n}
	if rn.o.Server == "" {
		stop, desc, err := h.startServer(ctx)
		if err != nil {
			return err
		}
		defer stop()
		hr.Server, hr.InProcess = desc, rn.inProc
	} else {
		u, err := ahpclient.ParseServer(rn.base)
		if err != nil {
			return err
		}
		if !ahpclient.IsLoopback(u) {
			return fmt.Errorf("%s is not on loopback: the hostile row attacks only a server on this machine's loopback", rn.base)
		}
		h.wsURL, h.base, h.token, h.proc = rn.wsURL, rn.base, rn.o.Token, rn.proc
		hr.Server = rn.base
	}
	res.Hostile = hr
	for _, name := range Attacks {
		if err := ctx.Err(); err != nil {
			return err
		}
		a := h.attack(ctx, name)
		hr.Attacks = append(hr.Attacks, a)
		if a.Skipped == "" && a.QuietSamples == 0 { // nothing measured: the bench failed, not the server
			res.Errors = append(res.Errors, "hostile "+name+": "+a.Error)
		}
		switch {
		case a.Skipped != "":
			rn.logf("hostile %s: skipped: %s", name, a.Skipped)
		case a.Error != "":
			rn.logf("hostile %s: %s", name, a.Error)
		default:
			rn.logf("hostile %s: echo p50 %.3f → %.3f ms, p99 %.3f → %.3f ms; RSS %s → %s; %d ops, %d refused", name,
				a.Quiet.P50, a.Attacked.P50, a.Quiet.P99, a.Attacked.P99, human(a.RSSBefore), human(a.RSSPeak), a.Ops, a.Refused)
		}
	}
	return nil
}

// HostileServeFlags are the flags of the `termhost serve` the hostile row
// starts: ServeFlags' loopback port, shell and sizes, but with the owner
// token in tokenFile and --auth proxy trusting loopback, so that share links
// and people named by HostileIdentityHeader at hostileDomain are viewers.
func HostileServeFlags(shell, dir string, integration bool, scrollback int64, tokenFile string) []string {
	return []string{"--listen=127.0.0.1:0", "--auth=proxy", "--token-file=" + tokenFile,
		"--trusted-proxy=127.0.0.1/32", "--trusted-proxy=::1/128", "--identity-header=" + HostileIdentityHeader,
		"--viewers=*@" + hostileDomain, "--shell=" + shell, "--cwd=" + dir,
		"--shell-integration=" + onOff(integration), "--scrollback=" + strconv.FormatInt(scrollback, 10),
		"--max-terminals=64", "--state-dir=" + dir + "/state", "--log-level=warn"}
}

// loginURL finds the server's URL in the login link `termhost serve`
// prints when it listens with a token.
var loginURL = regexp.MustCompile(`^\s*(https?://\S+?)/?#token=`)

// startServer starts the row's own server as the bench started its own
// (a process, or in this process), in a directory of its own.
func (h *hostileRun) startServer(ctx context.Context) (stop func(), desc string, err error) {
	rn := h.rn
	dir := filepath.Join(rn.dir, "hostile")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	h.token, h.persons = hex.EncodeToString(tok[:]), true
	shell := rn.raw.argv[0]
	envv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "PS1=$ ", "HISTFILE=/dev/null"}
	var u *url.URL
	if len(rn.o.ServerCommand) == 0 {
		u, stop, err = serveHostileLoopback(shell, dir, envv, rn.o.ShellIntegration, rn.o.Scrollback, h.token)
		if err != nil {
			return nil, "", err
		}
		h.proc, desc = process{}, "in-process, --auth proxy"
	} else {
		tokenFile := filepath.Join(dir, "token")
		if err := os.WriteFile(tokenFile, []byte(h.token+"\n"), 0o600); err != nil {
			return nil, "", err
		}
		argv := append(slices.Clone(rn.o.ServerCommand), HostileServeFlags(shell, dir, rn.o.ShellIntegration, rn.o.Scrollback, tokenFile)...)
		raw, pid, stopProc, err := startListening(ctx, argv, envv, dir, rn.o.Progress, loginURL)
		if err != nil {
			return nil, "", err
		}
		if u, err = ahpclient.ParseServer(raw); err != nil {
			stopProc()
			return nil, "", err
		}
		h.proc, stop = process{pid: pid}, stopProc
		desc = fmt.Sprintf("termhost serve --auth proxy (pid %d)", pid)
	}
	h.base, h.wsURL = u.String(), ahpclient.WebSocketURL(u)
	return stop, desc, nil
}

// serveHostileLoopback is serveLoopback configured as HostileServeFlags
// configures `termhost serve`: owner token, --auth proxy trusting
// loopback, recordings in dir/state/recordings.
func serveHostileLoopback(shell, dir string, envv []string, integration bool, scrollback int64, token string) (*url.URL, func(), error) {
	var hooks handlers.Hooks
	m, err := terminals.NewManager(terminals.Config{Shell: shell, Cwd: dir, Env: envv,
		ShellIntegration: integration, MaxTerminals: 64, Scrollback: int(scrollback),
		RecordDir: filepath.Join(dir, "state", "recordings"), DisposeGrace: time.Second, Logger: slog.New(slog.DiscardHandler),
		Hooks: hooks.Manager()})
	if err != nil {
		return nil, nil, err
	}
	roles, err := sso.NewDirectory(sso.Roles{Viewers: []string{"*@" + hostileDomain}}, "", nil)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
	srv, err := handlers.New(handlers.Config{Manager: m, Hooks: &hooks, OwnerToken: token, TrustedProxies: loopback,
		SSO: &sso.Proxy{Header: HostileIdentityHeader, Trusted: loopback}, Roles: roles,
		StateDir: filepath.Join(dir, "state"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		m.Close()
		return nil, nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); _ = hs.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-served
		srv.Close()
		m.Close()
	}
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}, stop, nil
}

// hostileOwner is the owner whose echo the row measures: one socket, as a
// workbench tab has it, subscribed to the catalogue and to its terminal,
// which holds some output and runs `cat` on a raw-mode pty.
type hostileOwner struct {
	c      *client
	uri    string
	frames int // frames read besides the echoes
}

func (h *hostileRun) newOwner(ctx context.Context) (*hostileOwner, error) {
	c, err := dial(ctx, h.wsURL, h.token, h.name("owner"), wireMode{})
	if err != nil {
		return nil, err
	}
	o := &hostileOwner{c: c}
	if err := c.subscribe(ctx, ahp.RootURI); err != nil {
		c.close()
		return nil, err
	}
	if o.uri, err = c.createTerminal(ctx, h.name("echo")); err != nil {
		c.close()
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m := newMarker()
	fill := fmt.Sprintf("head -c %d '%s'; printf '\\n%%s%%s\\n' %s %s\r", min(hostileFill, h.rn.work.chunk), h.rn.work.path, m.a, m.b)
	if err = c.input(sctx, o.uri, fill); err == nil {
		err = c.readUntil(sctx, newScanner(m.text()), nil)
	}
	if err == nil {
		m = newMarker()
		if err = c.input(sctx, o.uri, fmt.Sprintf(catRaw, m.a, m.b)); err == nil {
			err = c.readUntil(sctx, newScanner(m.text()), nil)
		}
	}
	if err != nil {
		o.close(h)
		return nil, fmt.Errorf("the owner's terminal: %w", err)
	}
	return o, nil
}

// close disposes of the owner's terminal and closes its socket, on a
// socket of its own: the owner's may have been closed by a timed-out echo.
func (o *hostileOwner) close(h *hostileRun) {
	h.dispose(o.uri)
	o.c.ws.CloseNow()
}

// dispose disposes of a terminal on a socket of its own.
func (h *hostileRun) dispose(uri string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dial(ctx, h.wsURL, h.token, h.name("dispose"), wireMode{})
	if err != nil {
		return
	}
	defer c.ws.CloseNow()
	_ = c.dispose(ctx, uri)
}

// echo times one byte through the owner's `cat`; past bound it reports a
// time-out (the bound closed the socket).
func (o *hostileOwner) echo(ctx context.Context, b byte, bound time.Duration) (time.Duration, bool, error) {
	sctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	t0 := time.Now()
	err := o.c.input(sctx, o.uri, string(b))
	for err == nil {
		var frame []byte
		if frame, err = o.c.read(sctx); err == nil {
			if d := o.c.dataOf(frame); d != nil && slices.Contains(d, b) {
				return time.Since(t0), false, nil
			}
			o.frames++
		}
	}
	if ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return bound, true, nil
	}
	return 0, false, err
}

// sample takes n echo samples spread over d, one every d/n as a typist
// types (after warm ones, not kept, at once); an echo slower than that
// delays the next, so fewer fit. It reports the frames read besides the
// echoes, per sample.
func (o *hostileOwner) sample(ctx context.Context, warm, n int, d time.Duration) (s []time.Duration, timeouts int, framesPer float64, err error) {
	for i := range warm {
		if _, to, err := o.echo(ctx, byte('a'+i%26), hostileEchoBound); err != nil || to {
			return nil, 0, 0, fmt.Errorf("warm-up echo: timed out %v, %w", to, err)
		}
	}
	f0, start, every := o.frames, time.Now(), d/time.Duration(n)
	wait := time.NewTimer(0)
	defer wait.Stop()
	for i := 0; len(s) < n && (len(s) == 0 || time.Since(start) < d); i++ {
		if next := time.Until(start.Add(time.Duration(i) * every)); next > 0 {
			wait.Reset(next)
			select {
			case <-wait.C:
			case <-ctx.Done():
				return s, timeouts, 0, ctx.Err()
			}
		}
		el, to, err := o.echo(ctx, byte('a'+i%26), hostileEchoBound)
		if err != nil {
			return s, timeouts, 0, fmt.Errorf("echo: %w", err)
		}
		s = append(s, el)
		if to {
			timeouts++
			break
		}
	}
	return s, timeouts, float64(o.frames-f0) / float64(max(1, len(s))), nil
}

// swarm runs an attack's attackers: each until the attack's context ends.
type swarm struct {
	wg      sync.WaitGroup
	ops     atomic.Int64
	refused atomic.Int64
	ready   chan struct{} // closed once launched and every attacker settled
	mu      sync.Mutex
	want    int  // attackers started
	settled int  // attackers that did their first operation or gave up
	all     bool // the attack started all of its attackers
	closed  bool // ready is closed
	errs    []string
}

func newSwarm() *swarm { return &swarm{ready: make(chan struct{})} }

// settleLocked closes ready once every attacker of the attack settled.
func (s *swarm) settleLocked() {
	if s.all && s.settled == s.want && !s.closed {
		s.closed = true
		close(s.ready)
	}
}

// launched says the attack started all of its attackers.
func (s *swarm) launched() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = true
	s.settleLocked()
}

// goAttack starts one attacker. It calls op after each operation; an
// error it returns before the context ends is recorded.
func (s *swarm) goAttack(ctx context.Context, f func(ctx context.Context, op func()) error) {
	s.mu.Lock()
	s.want++
	s.mu.Unlock()
	settle := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.settled++
		s.settleLocked()
	}
	s.wg.Go(func() {
		var once sync.Once
		op := func() {
			s.ops.Add(1)
			once.Do(settle)
		}
		if err := f(ctx, op); err != nil && ctx.Err() == nil { // recorded before it settles
			s.mu.Lock()
			if len(s.errs) < 3 {
				s.errs = append(s.errs, err.Error())
			}
			s.mu.Unlock()
		}
		once.Do(settle)
	})
}

// refuse counts a refusal, unless the attack is over (which ends whatever
// an attacker was doing).
func (s *swarm) refuse(ctx context.Context) {
	if ctx.Err() == nil {
		s.refused.Add(1)
	}
}

// attackPlan is what one attack set up around the owner's terminal.
type attackPlan struct {
	what    string
	launch  func(ctx context.Context, s *swarm) // starts the attackers
	cleanup func()
	skipped string
}

// attack runs one attack: a fresh owner, the attack's set-up, quiet
// samples, then samples under attack with the server's RSS sampled.
func (h *hostileRun) attack(ctx context.Context, name string) HostileAttack {
	a := HostileAttack{Name: name}
	fail := func(err error) HostileAttack { a.Error = err.Error(); return a }
	o, err := h.newOwner(ctx)
	if err != nil {
		return fail(err)
	}
	defer o.close(h)
	p, err := h.prepare(ctx, name, o)
	if p.cleanup != nil {
		defer p.cleanup()
	}
	if err != nil {
		return fail(fmt.Errorf("set-up: %w", err))
	}
	a.What, a.Skipped = p.what, p.skipped
	if p.skipped != "" {
		return a
	}
	plan := h.rn.o.Plan
	samples, d := max(10, plan.HostileSamples), max(100*time.Millisecond, plan.HostileTime)
	h.settle(ctx)
	quiet, _, qf, err := o.sample(ctx, 10, samples, d)
	if err != nil {
		return fail(fmt.Errorf("quiet: %w", err))
	}
	a.Quiet, a.QuietSamples, a.QuietFramesPerEcho = percentiles(quiet), len(quiet), qf
	a.RSSBefore, _ = h.proc.rss()
	peak := sampleRSS(h.proc)
	serverCPU, _ := h.proc.cpu()
	benchCPU, _ := process{}.cpu()
	t0 := time.Now()

	actx, cancel := context.WithCancel(ctx)
	s := newSwarm()
	p.launch(actx, s)
	s.launched()
	ready := time.NewTimer(hostileReady)
	var attacked []time.Duration
	select {
	case <-s.ready:
		attacked, a.Timeouts, a.AttackedFramesPerEcho, err = o.sample(actx, 0, samples, d)
	case <-ready.C:
		err = fmt.Errorf("the attackers did not get going within %v", hostileReady)
	case <-ctx.Done():
		err = ctx.Err()
	}
	ready.Stop()
	cancel()
	s.wg.Wait()
	a.RSSPeak = max(a.RSSBefore, peak())
	if el := time.Since(t0).Seconds(); el > 0 {
		now, err1 := h.proc.cpu()
		self, err2 := process{}.cpu()
		if err1 == nil && err2 == nil {
			a.ServerCores, a.BenchCores = (now-serverCPU)/el, (self-benchCPU)/el
		}
	}
	a.Attacked, a.AttackedSamples = percentiles(attacked), len(attacked)
	a.Ops, a.Refused = s.ops.Load(), s.refused.Load()
	if a.Quiet.P50 > 0 {
		a.RatioP50, a.RatioP99 = a.Attacked.P50/a.Quiet.P50, a.Attacked.P99/a.Quiet.P99
	}
	var errs []string
	if err != nil {
		errs = append(errs, err.Error())
	}
	if len(s.errs) > 0 { // every attacker ended: s.wg.Wait above
		errs = append(errs, "attackers: "+strings.Join(s.errs, "; "))
	}
	a.Error = strings.Join(errs, "; ")
	return a
}

// settle waits, at most hostileSettle, until the server is at rest: it
// used less than a tenth of a core over the last 100 ms (what an attack
// before left it to do, say a backlog of answers, is not this attack's
// quiet side).
func (h *hostileRun) settle(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last, err := h.proc.cpu()
	for deadline := time.Now().Add(hostileSettle); err == nil && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now, err := h.proc.cpu()
		if err != nil || now-last < 0.01 {
			return
		}
		last = now
	}
}

// hostileSettle bounds how long an attack waits for the server to be at rest.
const hostileSettle = 5 * time.Second

// sampleRSS samples a process's RSS every 20 ms until the returned peak is
// called, which returns the highest.
func sampleRSS(p process) (peak func() int64) {
	var high int64
	stop := sampling(func() {
		if rss, err := p.rss(); err == nil {
			high = max(high, rss)
		}
	})
	return func() int64 {
		stop()
		return high
	}
}

// sampling calls sample now and every 20 ms on a goroutine until the
// returned stop is called; stop waits for that goroutine and calls sample
// once more, on the caller's.
func sampling(sample func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		sample()
	}
}

// share makes a viewer link of a terminal and returns its token.
func (h *hostileRun) share(ctx context.Context, o *hostileOwner, uri string) (string, error) {
	raw, err := o.c.call(ctx, ext.MethodShareCreate, map[string]any{"terminal": uri, "role": "viewer", "label": "hostile bench"}, nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ext.MethodShareCreate, err)
	}
	var info ext.ShareInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return "", err
	}
	_, tok, ok := strings.Cut(info.URL, "#share=")
	if !ok || tok == "" {
		return "", fmt.Errorf("%s: no token in %q", ext.MethodShareCreate, info.URL)
	}
	return tok, nil
}

// terminal creates a terminal claimed by the owner's socket without
// subscribing it.
func (h *hostileRun) terminal(ctx context.Context, o *hostileOwner, name string) (string, error) {
	uri := ahp.TerminalURI(h.name(name))
	params := map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": o.c.id}, "cols": 120, "rows": 40}
	if _, err := o.c.call(ctx, ahp.MethodCreateTerminal, params, nil); err != nil {
		return "", fmt.Errorf("createTerminal: %w", err)
	}
	return uri, nil
}

// prepare sets up an attack around the owner's terminal.
func (h *hostileRun) prepare(ctx context.Context, name string, o *hostileOwner) (attackPlan, error) {
	n := h.n
	switch name {
	case "output":
		return h.program(ctx, o, "output", "a program in another terminal printing REP, SU, SD, IL, DL, ECH, ICH, DCH of count 2^31-1 in a loop, 1 viewer link watching it",
			func(dir string) (string, error) {
				path := filepath.Join(dir, "hostile-escapes")
				if err := os.WriteFile(path, worstEscapes(256), 0o644); err != nil {
					return "", err
				}
				return fmt.Sprintf("s=$(cat '%s'); i=0; while [ $i -lt 200000 ]; do printf '%%s' \"$s\"; i=$((i+1)); done; exit\r", path), nil
			}, false)
	case "titles":
		return h.program(ctx, o, "titles", "a program in another terminal printing OSC 0 titles in a loop, 1 viewer link of it on the catalogue",
			func(string) (string, error) {
				return "i=0; while [ $i -lt 2000000 ]; do printf '\\033]0;hostile title %d\\007' $i; i=$((i+1)); done; exit\r", nil
			}, true)
	case "resubscribe":
		tok, err := h.share(ctx, o, o.uri)
		return attackPlan{what: fmt.Sprintf("%d viewer-link sockets subscribing to and unsubscribing from the owner's terminal in a loop", n),
			launch: func(ctx context.Context, s *swarm) {
				for i := range n {
					s.goAttack(ctx, h.loop(tok, fmt.Sprintf("resub%d", i), s, func(ctx context.Context, c *client, op func()) error {
						if err := c.subscribe(ctx, o.uri); err != nil {
							return err
						}
						op()
						return c.send(ctx, 0, ahp.MethodUnsubscribe, map[string]any{"channel": o.uri})
					}))
				}
			}}, err
	case "previews":
		tok, err := h.share(ctx, o, o.uri)
		return attackPlan{what: fmt.Sprintf("%d viewer-link sockets asking for the owner's screen (%s) in a loop", n, ext.MethodScreen),
			launch: func(ctx context.Context, s *swarm) {
				for i := range n {
					s.goAttack(ctx, h.loop(tok, fmt.Sprintf("preview%d", i), s, func(ctx context.Context, c *client, op func()) error {
						if _, err := c.call(ctx, ext.MethodScreen, map[string]any{"channel": o.uri}, nil); err != nil {
							return err
						}
						op()
						return nil
					}))
				}
			}}, err
	case "presence":
		tok, err := h.share(ctx, o, o.uri)
		return attackPlan{what: fmt.Sprintf("1 viewer link opening a socket, joining the owner's terminal and closing, on %d sockets in a loop", n),
			launch: func(ctx context.Context, s *swarm) {
				for i := range n {
					s.goAttack(ctx, func(ctx context.Context, op func()) error {
						for k := 0; ctx.Err() == nil; k++ {
							c, err := dial(ctx, h.wsURL, tok, h.name(fmt.Sprintf("presence%d-%d", i, k)), wireMode{})
							if err != nil {
								s.refuse(ctx)
								continue
							}
							err = c.subscribe(ctx, o.uri)
							c.close()
							if err != nil {
								s.refuse(ctx)
								continue
							}
							op()
						}
						return nil
					})
				}
			}}, err
	case "unread-links", "unread-persons":
		what, tok, person := "viewer-link", "", false
		if name == "unread-persons" {
			if !h.persons {
				return attackPlan{skipped: "the server does not sign people in by --auth proxy (with --server)"}, nil
			}
			what, person = "SSO people's (viewers by --auth proxy)", true
		} else {
			var err error
			if tok, err = h.share(ctx, o, o.uri); err != nil {
				return attackPlan{}, err
			}
		}
		return attackPlan{what: fmt.Sprintf("%d %s sockets subscribing to the owner's terminal again and again, never reading", n, what),
			launch: func(ctx context.Context, s *swarm) {
				for i := range n {
					s.goAttack(ctx, func(ctx context.Context, op func()) error { return h.unread(ctx, s, tok, person, i, o.uri, op) })
				}
			}}, nil
	case "downloads":
		return h.downloads(ctx, o)
	}
	return attackPlan{}, fmt.Errorf("no attack %q", name)
}

// program sets up a terminal of its own for a program the attack types
// into it when it starts, and a viewer link of that terminal that watches
// it (its output, or with onRoot its entry in the catalogue).
func (h *hostileRun) program(ctx context.Context, o *hostileOwner, name, what string, script func(dir string) (string, error), onRoot bool) (attackPlan, error) {
	cmd, err := script(h.rn.dir)
	if err != nil {
		return attackPlan{}, err
	}
	uri, err := h.terminal(ctx, o, name)
	if err != nil {
		return attackPlan{}, err
	}
	p := attackPlan{what: what, cleanup: func() { h.dispose(uri) }}
	tok, err := h.share(ctx, o, uri)
	if err != nil {
		return p, err
	}
	p.launch = func(ctx context.Context, s *swarm) {
		c, err := dial(ctx, h.wsURL, tok, h.name(name+"-viewer"), wireMode{})
		if err == nil {
			channel := uri
			if onRoot {
				channel = ahp.RootURI
			}
			if err = c.subscribe(ctx, channel); err != nil {
				c.ws.CloseNow()
			}
		}
		if err != nil {
			s.goAttack(ctx, func(context.Context, func()) error { return fmt.Errorf("viewer: %w", err) })
			return
		}
		// Typed by the owner, who holds the terminal's claim.
		if err := o.c.input(ctx, uri, cmd); err != nil {
			c.ws.CloseNow()
			s.goAttack(ctx, func(context.Context, func()) error { return fmt.Errorf("type the program: %w", err) })
			return
		}
		// The attack is going once the viewer saw the program's output
		// (64 KiB of it) or its titles (3 changes): it counts from there.
		s.goAttack(ctx, func(ctx context.Context, op func()) error {
			defer c.ws.CloseNow()
			var seen int
			for {
				frame, err := c.read(ctx)
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return fmt.Errorf("viewer: %w", err)
				}
				switch {
				case onRoot && strings.Contains(string(frame[:min(len(frame), 128)]), ahp.RootURI):
					seen++
				case !onRoot:
					seen += len(c.dataOf(frame))
				default:
					continue
				}
				if onRoot && seen >= 3 || !onRoot && seen >= 64<<10 {
					op()
				}
			}
		})
	}
	return p, nil
}

// loop runs one viewer link's socket doing body in a loop; a socket the
// server closes is counted refused and replaced.
func (h *hostileRun) loop(tok, name string, s *swarm, body func(ctx context.Context, c *client, op func()) error) func(context.Context, func()) error {
	return func(ctx context.Context, op func()) error {
		for k := 0; ctx.Err() == nil; k++ {
			c, err := dial(ctx, h.wsURL, tok, h.name(fmt.Sprintf("%s-%d", name, k)), wireMode{})
			if err != nil {
				s.refuse(ctx)
				continue
			}
			for err == nil {
				err = body(ctx, c, op)
			}
			c.ws.CloseNow()
			s.refuse(ctx)
		}
		return nil
	}
}

// unread is one socket that sends subscribe after subscribe to uri and
// never reads its answers; when the server cuts it off it opens another.
func (h *hostileRun) unread(ctx context.Context, s *swarm, tok string, person bool, i int, uri string, op func()) error {
	for k := 0; ctx.Err() == nil; k++ {
		id := h.name(fmt.Sprintf("unread%d-%d", i, k))
		who := ""
		if person {
			who = fmt.Sprintf("hostile%d@%s", i, hostileDomain)
		}
		c, err := dial(ctx, h.wsURL, tok, id, wireMode{person: who})
		if err != nil {
			s.refuse(ctx)
			continue
		}
		for ctx.Err() == nil {
			if _, err = c.request(ctx, ahp.MethodSubscribe, map[string]any{"channel": uri}); err != nil {
				break
			}
			op()
		}
		c.ws.CloseNow()
		s.refuse(ctx)
	}
	return nil
}

// downloads sets up a recorded terminal with some output and a viewer link
// of it; its attackers read its recording slowly, again and again.
func (h *hostileRun) downloads(ctx context.Context, o *hostileOwner) (attackPlan, error) {
	n := h.n
	c, err := dial(ctx, h.wsURL, h.token, h.name("recorder"), wireMode{})
	if err != nil {
		return attackPlan{}, err
	}
	defer c.close()
	uri := ahp.TerminalURI(h.name("recorded"))
	if _, err := c.call(ctx, ahp.MethodCreateTerminal, map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": c.id},
		"cols": 120, "rows": 40, "_meta": map[string]any{ext.MetaRecord: true}}, nil); err != nil {
		return attackPlan{}, fmt.Errorf("createTerminal: %w", err)
	}
	p := attackPlan{cleanup: func() { h.dispose(uri) }}
	if err := c.subscribe(ctx, uri); err != nil {
		return p, err
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m := newMarker()
	if err := c.input(sctx, uri, fmt.Sprintf("head -c %d '%s'; printf '\\n%%s%%s\\n' %s %s\r", min(1<<20, h.rn.work.chunk), h.rn.work.path, m.a, m.b)); err != nil {
		return p, err
	}
	if err := c.readUntil(sctx, newScanner(m.text()), nil); err != nil {
		return p, fmt.Errorf("the recorded terminal: %w", err)
	}
	tok, err := h.share(ctx, o, uri)
	if err != nil {
		return p, err
	}
	u := h.base + "/t/" + url.PathEscape(ahp.TerminalIDOf(uri)) + "/recording.cast"
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: -1, DisableKeepAlives: true}
	hc := &http.Client{Transport: tr}
	get := func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		return hc.Do(req)
	}
	resp, err := get(ctx)
	if err != nil {
		return p, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		p.skipped = fmt.Sprintf("no recording to download (%s for %s): recordings are off on this server", resp.Status, u)
		return p, nil
	}
	cleanup := p.cleanup
	p.cleanup = func() { tr.CloseIdleConnections(); cleanup() }
	p.what = fmt.Sprintf("%d viewer-link readers of the recording download, each reading 1 KiB every 10 ms, again and again (the server allows 8 at once)", n)
	p.launch = func(ctx context.Context, s *swarm) {
		for range n {
			s.goAttack(ctx, func(ctx context.Context, op func()) error {
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				buf := make([]byte, 1<<10)
				for ctx.Err() == nil {
					resp, err := get(ctx)
					if err == nil && resp.StatusCode != http.StatusOK {
						_ = resp.Body.Close()
						err = errors.New(resp.Status)
					}
					if err != nil {
						s.refuse(ctx)
						select {
						case <-ctx.Done():
						case <-tick.C:
						}
						continue
					}
					op()
					for err == nil {
						select {
						case <-ctx.Done():
							err = ctx.Err()
						case <-tick.C:
							_, err = resp.Body.Read(buf)
						}
					}
					_ = resp.Body.Close()
				}
				return nil
			})
		}
	}
	return p, nil
}

// writeTable prints the row: one line per attack.
func (h *Hostile) writeTable(tw io.Writer) {
	where := h.Server
	if h.InProcess {
		where += ": RSS includes the bench's clients"
	}
	fmt.Fprintf(tw, "hostile participants, N = %d (%s): owner's echo p50/p99 (samples)\tquiet\tunder attack\tratio p50, p99; server RSS\n", h.Participants, where)
	for _, a := range h.Attacks {
		if a.Skipped != "" {
			fmt.Fprintf(tw, "  %s\t\tskipped\t%s\n", a.Name, a.Skipped)
			continue
		}
		if a.QuietSamples == 0 {
			fmt.Fprintf(tw, "  %s\t\tfailed\t%s\n", a.Name, a.Error)
			continue
		}
		p99 := ""
		if a.Timeouts > 0 {
			p99 = "≥ " // the last sample was cut at the bound
		}
		fmt.Fprintf(tw, "  %s\t%.3f/%.3f ms (%d)\t%.3f/%s%.3f ms (%d)\t×%.2f, %s×%.2f; %s → peak %s; %d ops, %d refused; CPU server %.2f, bench %.2f cores\n", a.Name,
			a.Quiet.P50, a.Quiet.P99, a.QuietSamples, a.Attacked.P50, p99, a.Attacked.P99, a.AttackedSamples,
			a.RatioP50, p99, a.RatioP99, human(a.RSSBefore), human(a.RSSPeak), a.Ops, a.Refused, a.ServerCores, a.BenchCores)
		if a.Error != "" {
			fmt.Fprintf(tw, "  %s: error\t\t%s\t\n", a.Name, a.Error)
		}
	}
}
