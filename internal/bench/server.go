package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"time"

	ahpclient "github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/terminals"
)

// ServeFlags are the flags the bench gives ServerCommand: a loopback port
// of the kernel's choosing, no authentication, the bench's shell and
// directory, and compression negotiated with any client that offers it, so
// that the compressed run can ask for it on loopback.
func ServeFlags(shell, dir string, integration bool, scrollback int64) []string {
	return []string{"--listen=127.0.0.1:0", "--auth=none", "--shell=" + shell, "--cwd=" + dir,
		"--shell-integration=" + onOff(integration), "--scrollback=" + strconv.FormatInt(scrollback, 10),
		"--max-terminals=512", "--compression=on", "--state-dir=" + dir + "/state", "--log-level=warn"}
}

// start starts the server measured: a process of its own when the options
// name a ServerCommand, else in this process.
func (rn *runner) start(ctx context.Context, shell string, envv []string) (func(), error) {
	rn.started = true
	if len(rn.o.ServerCommand) == 0 {
		rn.inProc, rn.proc = true, process{}
		u, stop, err := serveLoopback(shell, rn.dir, envv, rn.o.ShellIntegration, rn.o.Scrollback)
		if err != nil {
			return nil, err
		}
		rn.setServer(u)
		return stop, nil
	}
	return rn.startProcess(ctx, shell, envv)
}

// serveLoopback runs a termhost server in this process on a loopback port,
// configured as ServeFlags configures `termhost serve`.
func serveLoopback(shell, dir string, envv []string, integration bool, scrollback int64) (*url.URL, func(), error) {
	var hooks handlers.Hooks
	m, err := terminals.NewManager(terminals.Config{Shell: shell, Cwd: dir, Env: envv,
		ShellIntegration: integration, MaxTerminals: 512, Scrollback: int(scrollback),
		DisposeGrace: time.Second, Logger: slog.New(slog.DiscardHandler), Hooks: hooks.Manager()})
	if err != nil {
		return nil, nil, err
	}
	srv, err := handlers.New(handlers.Config{Manager: m, Hooks: &hooks, NoAuth: true, Compression: handlers.CompressionOn})
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
	go func() { _ = hs.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		srv.Close()
		m.Close()
	}
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}, stop, nil
}

// servingURL finds the URL in the line `termhost serve` prints when it
// listens without authentication.
var servingURL = regexp.MustCompile(`termhost is running at (https?://\S+?)/? `)

// startProcess runs ServerCommand with ServeFlags in the bench's clean
// environment (no TERMHOST_* of the user's), and waits until it listens.
func (rn *runner) startProcess(ctx context.Context, shell string, envv []string) (func(), error) {
	argv := append(slices.Clone(rn.o.ServerCommand), ServeFlags(shell, rn.dir, rn.o.ShellIntegration, rn.o.Scrollback)...)
	raw, pid, stop, err := startListening(ctx, argv, envv, rn.dir, rn.o.Progress, servingURL)
	if err != nil {
		return nil, err
	}
	u, err := ahpclient.ParseServer(raw)
	if err != nil {
		stop()
		return nil, err
	}
	rn.setServer(u)
	rn.proc = process{pid: pid}
	return stop, nil
}

// startListening runs argv and waits for the line of its stdout that
// listening matches; it returns the match's first group, the process and
// how to stop it (SIGTERM, then a kill after 15 s).
func startListening(ctx context.Context, argv, envv []string, dir string, stderr io.Writer, listening *regexp.Regexp) (string, int, func(), error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stderr = envv, dir, stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	exited := make(chan struct{})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, out) // never block the server on a full pipe
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	select {
	case raw := <-found:
		return raw, cmd.Process.Pid, stop, nil
	case <-exited:
		return "", 0, nil, fmt.Errorf("%s exited before listening: %v", argv[0], cmd.ProcessState)
	case <-wait.C:
		stop()
		return "", 0, nil, fmt.Errorf("%s did not listen within 30 s", argv[0])
	case <-ctx.Done():
		stop()
		return "", 0, nil, ctx.Err()
	}
}
