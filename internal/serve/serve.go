// Package serve wires termhost's server: "termhost serve" (its flags, the
// owner token, single sign-on, the MCP endpoint, logging and listening, the
// HTTP and AHP handlers of package handlers) and the live upgrade that hands
// its shells to a new binary ("termhost upgrade", SIGUSR2). The command
// cmd/termhost dispatches to it.
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/handlers/hosts"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/approval"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/buildinfo"
	"github.com/termhost/termhost/internal/debugtrace"
	"github.com/termhost/termhost/internal/envflag"
	"github.com/termhost/termhost/internal/handover"
	"github.com/termhost/termhost/terminals"
	"github.com/termhost/termhost/terminals/recording"
)

// Exit codes of serve and upgrade.
const (
	exitOK    = 0
	exitFail  = 1 // the server or the upgrade failed
	exitUsage = 2 // bad arguments
)

type serveOptions struct {
	listen           string
	shell            string
	cwd              string
	roots            envflag.List
	scrollback       envflag.Size
	maxTerminals     int
	shellIntegration string
	sizePolicy       string
	logLevel         string
	logFormat        string
	allowedOrigins   envflag.List
	token            string
	tokenFile        string
	newToken         bool
	authMode         string
	basePath         string
	publicURL        string
	trustedProxies   envflag.List
	tlsCert, tlsKey  string
	readTimeout      time.Duration
	idleTimeout      time.Duration
	stateDir         string
	compression      string
	recordAll        bool
	recordMax        envflag.Size
	screenModel      bool
	mcp              bool
	approve          agent.ApproveOptions
	// --auth proxy (sso.go)
	identityHeader, nameHeader string
	owners, drivers, viewers   envflag.List
	rolesFile, rolesContact    string
	auditLog                   string
	// the other hosts (hosts.go)
	hostsFile, hostName string
	// --debug-trace: an execution trace of the server for a while
	debugTrace    string
	debugTraceFor time.Duration
}

const serveAbout = "termhost serve: run the terminal server."

func (o *serveOptions) flags() *envflag.Set {
	fs := envflag.New("serve", "TERMHOST_")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:7681", "address to listen on")
	fs.StringVar(&o.shell, "shell", "", "shell to run in new terminals (default $SHELL, else the passwd entry, else /bin/sh)")
	fs.StringVar(&o.cwd, "cwd", "", "working directory of new terminals (default $HOME)")
	fs.Var(&o.roots, "root", "confine requested working directories to this `directory` (repeatable)")
	fs.Var(&o.scrollback, "scrollback", "scrollback kept per terminal, a `size` such as 1MiB")
	fs.IntVar(&o.maxTerminals, "max-terminals", 64, "most terminals at once")
	fs.StringVar(&o.shellIntegration, "shell-integration", "on", "inject bash/zsh/fish shell integration: on or off")
	fs.StringVar(&o.sizePolicy, "size-policy", terminals.SizeHolder, "who sizes a terminal several clients show: holder (whoever has control) or smallest (the smallest view of those who may type, like tmux)")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.Var(&o.allowedOrigins, "allowed-origin", "extra browser `origin` allowed to open the WebSocket, e.g. https://dev.example.com (repeatable)")
	fs.StringVar(&o.token, "token", "", "owner token (prefer the environment variable; default: the one kept in <state-dir>/token, made at the first start)")
	fs.StringVar(&o.tokenFile, "token-file", "", "read the owner token from this file")
	fs.BoolVar(&o.newToken, "new-token", false, "replace the owner token kept in <state-dir>/token with a new random one: signs out every owner session and ends every share link")
	fs.StringVar(&o.authMode, "auth", "token", "authentication: token; proxy (people signed in by a single sign-on proxy, named by --identity-header from --trusted-proxy peers; the owner token keeps working); or none (only allowed on a loopback listener)")
	fs.StringVar(&o.basePath, "base-path", "", "serve every page, asset, WebSocket and cookie under this prefix, e.g. /term")
	fs.StringVar(&o.publicURL, "public-url", "", "URL browsers use to reach termhost (behind a proxy), e.g. https://dev.example.com/term; login and share links use it and its origin may open the WebSocket")
	fs.Var(&o.trustedProxies, "trusted-proxy", "proxy `address` or CIDR whose X-Forwarded-Proto/Host/Prefix/For are honoured (repeatable)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "private key for --tls-cert (PEM)")
	fs.DurationVar(&o.readTimeout, "read-timeout", 30*time.Second, "longest time to read one HTTP request with its body (WebSockets are exempt)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", 2*time.Minute, "how long an idle keep-alive HTTP connection stays open")
	fs.StringVar(&o.stateDir, "state-dir", "", "keep sign-ins (owner sessions and share links, hashed) in this `directory` so that they survive a restart (default $XDG_STATE_HOME/termhost, else ~/.local/state/termhost)")
	fs.BoolVar(&o.recordAll, "record-all", false, "record every terminal as an asciicast v2 file in <state-dir>/recordings, deleted when the terminal is closed")
	fs.BoolVar(&o.screenModel, "screen-model", true, "keep a model of each terminal's screen so that whoever joins after a lot of output, or during a full-screen program, gets the exact screen, and previews work (fed on demand; see docs/BENCHMARKS.md)")
	fs.Var(&o.recordMax, "record-max", "largest recording per terminal, a `size` such as 64MiB: recording stops there")
	fs.BoolVar(&o.mcp, "mcp", false, "also serve termhost mcp's agent tools over MCP's Streamable HTTP transport at <base>/mcp, for the owner token only (see termhost mcp --help)")
	fs.StringVar(&o.approve.Mode, "approve", agent.ApproveRules, "with --mcp: "+agent.ApproveUsage)
	fs.StringVar(&o.approve.Rules, "approve-rules", "", "for --mcp and --approve-drivers: "+agent.ApproveRulesUsage)
	fs.BoolVar(&o.approve.Drivers, "approve-drivers", false, "hold a driver link's Enter at a shell prompt until the owner (or whoever has control) approves a command line the rules do not allow")
	o.ssoFlags(fs)
	o.hostsFlags(fs)
	fs.StringVar(&o.debugTrace, "debug-trace", "", "write an execution trace of the server (runtime/trace, for go tool trace) to `FILE` from the start, for --debug-trace-for")
	fs.DurationVar(&o.debugTraceFor, "debug-trace-for", 10*time.Second, "how long --debug-trace traces")
	fs.StringVar(&o.compression, "compression", "auto", "negotiate permessage-deflate with browsers that offer it: auto (for clients not on loopback), on or off")
	return fs
}

// Command is "termhost serve". Everything that can be checked is
// checked before it creates, listens or prints anything, so a bad start
// leaves nothing behind.
func Command(args []string) int {
	o := serveOptions{scrollback: 1 << 20, recordMax: recording.DefaultMax}
	if code, ok := envflag.ParseCommand(o.flags(), args, os.LookupEnv, os.Stdout, os.Stderr, serveAbout); !ok {
		return code
	}
	log, err := newLogger(o.logLevel, o.logFormat)
	if err != nil {
		fmt.Fprintf(os.Stderr, "termhost serve: %v\n", err)
		return exitUsage
	}
	setup, err := o.validate()
	if err != nil {
		fmt.Fprintf(os.Stderr, "termhost serve: %v\n", err)
		return exitUsage
	}
	if o.debugTrace != "" {
		tr, err := debugtrace.Start(o.debugTrace, o.debugTraceFor)
		if err != nil {
			fmt.Fprintf(os.Stderr, "termhost serve: --debug-trace: %v\n", err)
			return exitUsage
		}
		go func() {
			<-tr.Done()
			log.Info("execution trace written", "file", o.debugTrace)
		}()
		defer tr.Stop() // a server that ends first still leaves a whole trace
	}
	if err := listenAndServe(o, setup, log); err != nil {
		if errors.Is(err, terminals.ErrConfig) {
			fmt.Fprintf(os.Stderr, "termhost serve: %v\n", err)
			return exitUsage
		}
		log.Error("server failed", "err", err)
		return exitFail
	}
	return exitOK
}

func newLogger(level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %v", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json")
}

// serveSetup is what validate derives from the options, before any side
// effect.
type serveSetup struct {
	addr        *net.TCPAddr
	tls         *tls.Config // nil: plain HTTP
	token       string
	freshToken  bool // made at this start: saveToken keeps it
	proxies     []netip.Prefix
	stateDir    string
	compression handlers.Compression
	roles       *sso.Directory // --auth proxy
	rules       *approval.File // --approve-rules, for --mcp and --approve-drivers
	audit       *audit.Log     // --audit-log, opened by listenAndServe
	hosts       *hosts.List    // --hosts and --host-name
}

func (s serveSetup) scheme() string {
	if s.tls != nil {
		return "https"
	}
	return "http"
}

// listenAndServe runs the server until SIGINT or SIGTERM; on SIGUSR2 it
// re-executes itself with the binary now at its path, handing over its
// listener and terminals (upgrade.go), or serves on if that fails.
// The manager is created first, as it checks the working directory against
// the roots; whatever was created is released on every return.
func listenAndServe(o serveOptions, setup serveSetup, log *slog.Logger) error {
	// Stopped last: a second Ctrl-C while the shells are closed is ignored.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	upgrades := make(chan os.Signal, 1)
	signal.Notify(upgrades, syscall.SIGUSR2) // before anything slow: its default action kills
	defer signal.Stop(upgrades)
	// Read now: after an upgrade replaced the binary, /proc/self/exe names
	// the deleted old file, while this path names the new one.
	exe, exeErr := os.Executable()
	var msg handoverMessage
	upgraded, err := handover.Inherited(&msg) // before the manager reads the environment
	// Before anything starts a process: no shell may inherit them.
	if upgraded {
		handover.CloseOnExec(append([]int{msg.Listener}, msg.FDs...))
	}
	if err != nil {
		return fmt.Errorf("take over: %w", err)
	}
	var hooks handlers.Hooks // the manager's calls into the server, whichever serves
	m, err := terminals.NewManager(terminals.Config{
		Hooks: hooks.Manager(),
		Shell: o.shell, Cwd: o.cwd, Roots: o.roots, Scrollback: int(o.scrollback),
		MaxTerminals: o.maxTerminals, ShellIntegration: o.shellIntegration == "on", Logger: log,
		RecordDir: filepath.Join(setup.stateDir, "recordings"), RecordAll: o.recordAll, RecordMax: int64(o.recordMax),
		NoScreenModel: !o.screenModel, SizePolicy: o.sizePolicy,
	})
	if err != nil {
		return err
	}
	defer m.Close() // after the server below: it SIGHUPs every shell and waits
	stopSSO, err := startSSO(ctx, o, &setup, log)
	if err != nil {
		return err
	}
	defer stopSSO() // after the server: its last events are in the trail
	if o.mcp || o.approve.Drivers {
		rules, stopRules, err := o.approve.OpenRules(log)
		if err != nil {
			return err
		}
		defer stopRules()
		setup.rules = rules
	}
	var (
		ln      *net.TCPListener
		clients []handlers.ClientRecord
	)
	if upgraded {
		if ln, err = takeOver(msg, m, &setup); err != nil {
			return fmt.Errorf("take over: %w", err)
		}
		clients = msg.Clients
	} else if ln, err = net.ListenTCP("tcp", setup.addr); err != nil {
		return fmt.Errorf("listen: %w", err)
	} else if err = setup.saveToken(log); err != nil { // not by a successor: it keeps its predecessor's
		_ = ln.Close()
		return err
	}
	m.TidyRecordings() // after any adoption: adopted terminals take theirs back, the rest is stale
	for first := true; ; first = false {
		s, err := startServing(o, setup, m, &hooks, ln, clients, log)
		if err != nil {
			_ = ln.Close()
			return err
		}
		switch {
		case first && upgraded:
			pause := time.Now().UnixMilli() - msg.StoppedAt
			log.Info("termhost upgraded in place", "url", publicBase(o, setup, s.addr).String()+"/",
				"from", msg.From, "version", buildinfo.Release, "from_build", msg.FromBuild, "build", buildinfo.This(), "terminals", len(m.Terminals()), "pause_ms", pause)
			from := msg.FromBuild
			if from == "" { // a predecessor that did not say its build
				from = msg.From
			}
			writeUpgradeStatus(setup.stateDir, upgradeStatus{OK: true, From: from, PauseMs: pause}, log)
			setup.audit.Record(audit.Event{Event: audit.ServerUpgrade,
				Detail: fmt.Sprintf("from %s to %s, %d terminals kept", msg.From, buildinfo.Release, len(m.Terminals()))})
		case first:
			announce(o, setup, s.addr, m.Config().Shell, log)
		}
		if first {
			logForeignOrigins(o, log)
		}
		notifySystemd(log)
		removePid := writePidFile(setup.stateDir, log)
		var r upgradeResult
	wait:
		for {
			select {
			case err = <-s.errc:
				break wait
			case <-ctx.Done():
				log.Info("shutting down")
				break wait
			case <-upgrades: // returns only if this program goes on
				if r = upgrade(ctx, exe, exeErr, s, m, setup, log); r.err != nil || r.next != nil {
					break wait
				} // refused: serve on
			}
		}
		switch {
		case r.next != nil:
			ln, clients = r.next, r.clients
			continue
		case r.err != nil:
			removePid()
			return r.err
		}
		removePid()
		s.stop(false)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		return err
	}
}

// serving is one run of the HTTP server on the listener.
type serving struct {
	srv  *handlers.Server
	hs   *http.Server
	ln   *net.TCPListener
	addr *net.TCPAddr
	errc chan error
	mcp  *serveMCP // --mcp, else nil
}

func startServing(o serveOptions, setup serveSetup, m *terminals.Manager, hooks *handlers.Hooks, ln *net.TCPListener,
	clients []handlers.ClientRecord, log *slog.Logger) (*serving, error) {
	addr := ln.Addr().(*net.TCPAddr)
	cfg := handlers.Config{Manager: m, Hooks: hooks, Logger: log, Version: buildinfo.Release,
		AllowedOrigins: o.allowedOrigins, ListenerOrigins: localOrigins(addr, setup.scheme()),
		OwnerToken: setup.token, NoAuth: o.authMode == "none", BasePath: o.basePath, PublicURL: o.publicURL, TrustedProxies: setup.proxies,
		StateDir: setup.stateDir, Clients: clients, Compression: setup.compression, Audit: setup.audit, Hosts: setup.hosts}
	if o.approve.Drivers {
		cfg.ApproveDrivers = setup.rules
	}
	if o.authMode == "proxy" {
		cfg.SSO = &sso.Proxy{Header: o.identityHeader, NameHeader: o.nameHeader, Trusted: setup.proxies}
		cfg.Roles = setup.roles
	}
	var srv *handlers.Server
	var mcpSrv *serveMCP
	if o.mcp {
		mcpSrv = newServeMCP(func() http.Handler { return srv }, setup.token, o.basePath, publicBase(o, setup, addr), log,
			func(c *agent.Config) { c.Approve, c.Rules = o.approve.Mode, setup.rules })
		cfg.MCP = mcpSrv.handler
	}
	srv, err := handlers.New(cfg)
	if err != nil {
		if mcpSrv != nil {
			mcpSrv.close()
		}
		return nil, err
	}
	// The timeouts end slow or idle connections; a WebSocket is exempt, as
	// hijacking its connection clears the deadlines.
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: min(10*time.Second, o.readTimeout), ReadTimeout: o.readTimeout,
		IdleTimeout: o.idleTimeout, TLSConfig: setup.tls, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	s := &serving{srv: srv, hs: hs, ln: ln, addr: addr, errc: make(chan error, 1), mcp: mcpSrv}
	go func() {
		if setup.tls != nil {
			s.errc <- hs.ServeTLS(ln, "", "") // the certificate is in TLSConfig
			return
		}
		s.errc <- hs.Serve(ln)
	}()
	return s, nil
}

// stop stops accepting (closing the listener), then closes the WebSockets:
// with 1012 for a restart, so clients reconnect at once, else 1001.
func (s *serving) stop(restart bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.hs.Shutdown(ctx); err != nil {
		_ = s.hs.Close()
	}
	if s.mcp != nil {
		s.mcp.close()
	}
	if restart {
		s.srv.CloseForRestart()
	} else {
		s.srv.Close()
	}
}

// announce logs where the server listens, prints the login link (the only
// place the token is shown: the owner's own terminal) and saves the token
// for the CLI on this machine.
func announce(o serveOptions, setup serveSetup, addr *net.TCPAddr, shell string, log *slog.Logger) {
	public := publicBase(o, setup, addr).String()
	wsURL := strings.Replace(public, "http", "ws", 1) + "/ws"
	log.Info("termhost listening", "url", public+"/", "websocket", wsURL, "shell", shell, "auth", o.authMode)
	if o.authMode == "none" {
		fmt.Printf("termhost is running at %s/ (no authentication: loopback only)\n", public)
		return
	}
	if path, err := writeLocalToken(setup.token); err != nil {
		log.Warn("could not save the token for the termhost CLI", "err", err)
	} else {
		log.Debug("token saved for the CLI", "path", path)
	}
	fmt.Printf("termhost is running. Open this login link to sign in as the owner (it works in any browser, as often as needed, until the token changes; keep it secret):\n\n    %s/#token=%s\n\n", public, setup.token)
}

// localOrigins are the origins a browser uses for a loopback or wildcard listener.
func localOrigins(addr *net.TCPAddr, scheme string) []string {
	port := fmt.Sprint(addr.Port)
	hosts := []string{addr.IP.String()}
	if addr.IP.IsLoopback() || addr.IP.IsUnspecified() {
		hosts = append(hosts, "localhost", "127.0.0.1", "[::1]")
	}
	if h, err := os.Hostname(); err == nil && addr.IP.IsUnspecified() {
		hosts = append(hosts, h)
	}
	var out []string
	for _, h := range hosts {
		if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
			h = "[" + h + "]"
		}
		out = append(out, scheme+"://"+h+":"+port)
	}
	return out
}

// validate checks the options and derives the setup, reading the TLS files
// and the token file, without creating or listening on anything.
func (o *serveOptions) validate() (serveSetup, error) {
	if err := o.check(); err != nil {
		return serveSetup{}, err
	}
	addr, err := net.ResolveTCPAddr("tcp", o.listen)
	if err != nil {
		return serveSetup{}, fmt.Errorf("--listen: %w", err)
	}
	if o.authMode == "none" && !addr.IP.IsLoopback() {
		return serveSetup{}, fmt.Errorf("--auth=none is only allowed on a loopback listener, not %s: anyone who reaches it gets a shell", addr)
	}
	setup := serveSetup{addr: addr}
	if o.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return serveSetup{}, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		setup.tls = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	if setup.stateDir, err = o.resolveStateDir(); err != nil {
		return serveSetup{}, err
	}
	if setup.token, setup.freshToken, err = o.ownerToken(setup.stateDir); err != nil {
		return serveSetup{}, err
	}
	if setup.proxies, err = parsePrefixes(o.trustedProxies); err != nil {
		return serveSetup{}, err
	}
	if setup.compression, err = handlers.ParseCompression(o.compression); err != nil {
		return serveSetup{}, fmt.Errorf("--compression: %w", err)
	}
	if setup.roles, err = o.roles(); err != nil {
		return serveSetup{}, err
	}
	if setup.hosts, err = o.hosts(); err != nil {
		return serveSetup{}, err
	}
	return setup, nil
}

// check checks the flags on their own and normalizes --base-path.
func (o *serveOptions) check() error {
	if o.shellIntegration != "on" && o.shellIntegration != "off" {
		return fmt.Errorf("--shell-integration must be on or off")
	}
	if o.sizePolicy != terminals.SizeHolder && o.sizePolicy != terminals.SizeSmallest {
		return fmt.Errorf("--size-policy must be %s or %s", terminals.SizeHolder, terminals.SizeSmallest)
	}
	if o.authMode != "token" && o.authMode != "none" && o.authMode != "proxy" {
		return fmt.Errorf("--auth must be token, proxy or none")
	}
	if err := o.approve.Check(); err != nil {
		return err
	}
	if err := o.checkSSO(); err != nil {
		return err
	}
	if o.authMode == "none" && (o.publicURL != "" || len(o.trustedProxies) > 0) {
		return fmt.Errorf("--auth=none cannot be combined with --public-url or --trusted-proxy: a reverse proxy connects from loopback, so everyone behind it would get a shell")
	}
	if o.readTimeout <= 0 || o.idleTimeout <= 0 {
		return fmt.Errorf("--read-timeout and --idle-timeout must be positive durations such as 30s")
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if o.basePath != "" && (!strings.HasPrefix(o.basePath, "/") || strings.ContainsAny(o.basePath, " ?#")) {
		return fmt.Errorf("--base-path must look like /term")
	}
	o.basePath = strings.TrimRight(o.basePath, "/")
	if o.publicURL != "" {
		u, err := url.Parse(o.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--public-url must be an http(s) URL such as https://dev.example.com/term")
		}
	}
	return nil
}

// resolveStateDir is --state-dir, else the directory of the local token
// (client.LocalTokenPath): one state directory per user.
func (o *serveOptions) resolveStateDir() (string, error) {
	if o.stateDir != "" {
		dir, err := filepath.Abs(o.stateDir)
		if err != nil {
			return "", fmt.Errorf("--state-dir: %w", err)
		}
		return dir, nil
	}
	path, err := client.LocalTokenPath(os.Getenv)
	if err != nil {
		return "", fmt.Errorf("state directory: %w (set --state-dir)", err)
	}
	return filepath.Dir(path), nil
}

// writeLocalToken leaves the token where the CLI on this machine looks for
// it (client.LocalTokenPath, shared with the CLI so both agree).
func writeLocalToken(token string) (string, error) {
	path, err := client.LocalTokenPath(os.Getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, []byte(token+"\n"), 0o600)
}

func parsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxy %q: want an address or CIDR", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
