package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
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

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/terminals"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

type serveOptions struct {
	listen           string
	shell            string
	cwd              string
	roots            listFlag
	scrollback       sizeFlag
	maxTerminals     int
	shellIntegration string
	logLevel         string
	logFormat        string
	allowedOrigins   listFlag
	token            string
	tokenFile        string
	authMode         string
	basePath         string
	publicURL        string
	trustedProxies   listFlag
	tlsCert, tlsKey  string
	readTimeout      time.Duration
	idleTimeout      time.Duration
}

func serve(args []string) int {
	o := serveOptions{scrollback: 1 << 20}
	fs := newFlagSet("serve", "termhost serve: run the terminal server.")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:7681", "address to listen on")
	fs.StringVar(&o.shell, "shell", "", "shell to run in new terminals (default $SHELL, else the passwd entry, else /bin/sh)")
	fs.StringVar(&o.cwd, "cwd", "", "working directory of new terminals (default $HOME)")
	fs.Var(&o.roots, "root", "confine requested working directories to these directories (repeatable)")
	fs.Var(&o.scrollback, "scrollback", "scrollback kept per terminal, e.g. 1MiB")
	fs.IntVar(&o.maxTerminals, "max-terminals", 64, "most terminals at once")
	fs.StringVar(&o.shellIntegration, "shell-integration", "on", "inject bash/zsh/fish shell integration: on or off")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.Var(&o.allowedOrigins, "allowed-origin", "extra browser origin allowed to open the WebSocket, e.g. https://dev.example.com (repeatable)")
	fs.StringVar(&o.token, "token", "", "owner token (prefer the environment variable; default: random at start)")
	fs.StringVar(&o.tokenFile, "token-file", "", "read the owner token from this file")
	fs.StringVar(&o.authMode, "auth", "token", "authentication: token, or none (only allowed on a loopback listener)")
	fs.StringVar(&o.basePath, "base-path", "", "serve every page, asset, WebSocket and cookie under this prefix, e.g. /term")
	fs.StringVar(&o.publicURL, "public-url", "", "URL browsers use to reach termhost (behind a proxy), e.g. https://dev.example.com/term; login and share links use it and its origin may open the WebSocket")
	fs.Var(&o.trustedProxies, "trusted-proxy", "proxy address or CIDR whose X-Forwarded-Proto/Host/Prefix/For are honoured (repeatable)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "private key for --tls-cert (PEM)")
	fs.DurationVar(&o.readTimeout, "read-timeout", 30*time.Second, "longest time to read one HTTP request with its body (WebSockets are exempt)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", 2*time.Minute, "how long an idle keep-alive HTTP connection stays open")
	if err := fs.parse(args); err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "termhost serve: %v\n", err)
		return 2
	}
	log, err := newLogger(o.logLevel, o.logFormat)
	if err != nil {
		fmt.Fprintf(os.Stderr, "termhost serve: %v\n", err)
		return 2
	}
	if o.shellIntegration != "on" && o.shellIntegration != "off" {
		fmt.Fprintln(os.Stderr, "termhost serve: --shell-integration must be on or off")
		return 2
	}
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "termhost serve: %v\n", err)
		return 2
	}
	if err := runServer(o, log); err != nil {
		if errors.Is(err, terminals.ErrConfig) {
			fmt.Fprintf(os.Stderr, "termhost serve: %v\n", err)
			return 2
		}
		log.Error("server failed", "err", err)
		return 1
	}
	return 0
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

func runServer(o serveOptions, log *slog.Logger) error {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	m, err := terminals.NewManager(terminals.Config{
		Shell: o.shell, Cwd: o.cwd, Roots: o.roots, Scrollback: int(o.scrollback),
		MaxTerminals: o.maxTerminals, ShellIntegration: o.shellIntegration == "on", Logger: log,
	})
	if err != nil {
		_ = ln.Close()
		return err
	}
	addr := ln.Addr().(*net.TCPAddr)
	if o.authMode == "none" && !addr.IP.IsLoopback() {
		_ = ln.Close()
		return fmt.Errorf("--auth=none is only allowed on a loopback listener, not %s: anyone who reaches it gets a shell", addr)
	}
	token, err := o.ownerToken()
	if err != nil {
		_ = ln.Close()
		return err
	}
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	proxies, err := parsePrefixes(o.trustedProxies)
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv, err := handlers.New(handlers.Config{Manager: m, Logger: log, Version: version,
		AllowedOrigins: o.allowedOrigins, ListenerOrigins: localOrigins(addr, scheme),
		OwnerToken: token, NoAuth: o.authMode == "none", BasePath: o.basePath, PublicURL: o.publicURL, TrustedProxies: proxies})
	if err != nil {
		return err
	}
	// The timeouts end slow or idle connections; a WebSocket is exempt, as
	// hijacking its connection clears the deadlines.
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: min(10*time.Second, o.readTimeout), ReadTimeout: o.readTimeout,
		IdleTimeout: o.idleTimeout, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() {
		if o.tlsCert != "" {
			errc <- hs.ServeTLS(ln, o.tlsCert, o.tlsKey)
			return
		}
		errc <- hs.Serve(ln)
	}()
	public := strings.TrimRight(o.publicURL, "/")
	if public == "" {
		host := addr.String()
		if addr.IP.IsUnspecified() {
			host = net.JoinHostPort("127.0.0.1", fmt.Sprint(addr.Port))
		}
		public = scheme + "://" + host + strings.TrimRight(o.basePath, "/")
	}
	wsURL := strings.Replace(public, "http", "ws", 1) + "/ws"
	log.Info("termhost listening", "url", public+"/", "websocket", wsURL, "shell", m.Config().Shell, "auth", o.authMode)
	if o.authMode == "none" {
		fmt.Printf("termhost is running at %s/ (no authentication: loopback only)\n", public)
	} else {
		if path, err := writeLocalToken(token); err != nil {
			log.Warn("could not save the token for the termhost CLI", "err", err)
		} else {
			log.Debug("token saved for the CLI", "path", path)
		}
		// The only place the token is shown: the owner's own terminal.
		fmt.Printf("termhost is running. Open this login link (it signs you in once):\n\n    %s/#token=%s\n\n", public, token)
	}

	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down")
	}
	// Stop accepting, close WebSockets (1001), SIGHUP every shell and wait.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(shutdownCtx)
	srv.Close()
	m.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
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

func (o *serveOptions) validate() error {
	if o.authMode != "token" && o.authMode != "none" {
		return fmt.Errorf("--auth must be token or none")
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

// ownerToken is --token / $TERMHOST_TOKEN, else --token-file, else random.
func (o *serveOptions) ownerToken() (string, error) {
	tok := o.token
	if tok == "" && o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return "", fmt.Errorf("random token: %w", err)
		}
		return base64.RawURLEncoding.EncodeToString(b), nil
	}
	if len(tok) < 16 {
		return "", fmt.Errorf("the owner token must have at least 16 characters")
	}
	return tok, nil
}

// localTokenPath is where serve leaves the token for the CLI on this machine.
func localTokenPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "termhost", "token"), nil
}

func writeLocalToken(token string) (string, error) {
	path, err := localTokenPath()
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
