package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
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
	if err := runServer(o, log); err != nil {
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
		return err
	}
	origins := append(localOrigins(ln.Addr().(*net.TCPAddr)), o.allowedOrigins...)
	srv, err := handlers.New(handlers.Config{Manager: m, Logger: log, Version: version, AllowedOrigins: origins})
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	log.Info("termhost listening", "url", base+"/", "websocket", "ws://"+ln.Addr().String()+"/ws", "shell", m.Config().Shell)

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
func localOrigins(addr *net.TCPAddr) []string {
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
		out = append(out, "http://"+h+":"+port)
	}
	return out
}
