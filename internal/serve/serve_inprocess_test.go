package serve

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/cmdtest"
)

// These tests call serve's and the dispatcher's functions in this process
// (the binary-based tests in serve_test.go do not count towards coverage).
// Some swap os.Stdout and os.Stderr, which serve writes to: no test in this
// package is parallel, so nothing else writes meanwhile.

// parseServe parses serve's flags with an empty environment.
func parseServe(t *testing.T, args ...string) *serveOptions {
	t.Helper()
	o := &serveOptions{scrollback: 1 << 20}
	if err := o.flags().ParseWithEnv(args, func(string) (string, bool) { return "", false }); err != nil {
		t.Fatalf("serve %q: %v", args, err)
	}
	return o
}

// TestServeValidate: every bad combination of serve's flags is refused by
// validate, before anything is created, with a message naming the flag.
func TestServeValidate(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string // the whole message, or its start when it ends in ": "
	}{
		{"shell integration", []string{"--shell-integration", "maybe"}, "--shell-integration must be on or off"},
		{"auth mode", []string{"--auth", "basic"}, "--auth must be token, proxy or none"},
		{"no auth behind a proxy", []string{"--auth", "none", "--public-url", "https://dev.example.com"}, "--auth=none cannot be combined with --public-url or --trusted-proxy: a reverse proxy connects from loopback, so everyone behind it would get a shell"},
		{"no auth with a trusted proxy", []string{"--auth", "none", "--trusted-proxy", "10.0.0.1"}, "--auth=none cannot be combined with --public-url or --trusted-proxy: a reverse proxy connects from loopback, so everyone behind it would get a shell"},
		{"zero read timeout", []string{"--read-timeout", "0s"}, "--read-timeout and --idle-timeout must be positive durations such as 30s"},
		{"negative idle timeout", []string{"--idle-timeout", "-1s"}, "--read-timeout and --idle-timeout must be positive durations such as 30s"},
		{"cert without key", []string{"--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{"relative base path", []string{"--base-path", "term"}, "--base-path must look like /term"},
		{"base path with a query", []string{"--base-path", "/term?x"}, "--base-path must look like /term"},
		{"public URL scheme", []string{"--public-url", "ftp://dev.example.com"}, "--public-url must be an http(s) URL such as https://dev.example.com/term"},
		{"public URL without host", []string{"--public-url", "https:///term"}, "--public-url must be an http(s) URL such as https://dev.example.com/term"},
		{"bad listen address", []string{"--listen", "127.0.0.1:port"}, "--listen: "},
		{"no auth off loopback", []string{"--auth", "none", "--listen", "0.0.0.0:0"}, "--auth=none is only allowed on a loopback listener, not 0.0.0.0:0: anyone who reaches it gets a shell"},
		{"missing TLS files", []string{"--tls-cert", filepath.Join(dir, "no.pem"), "--tls-key", filepath.Join(dir, "no.key")}, "--tls-cert/--tls-key: "},
		{"short token", []string{"--token", "0123456789abcde"}, "the owner token must have at least 16 characters"},
		{"missing token file", []string{"--token-file", filepath.Join(dir, "none")}, "--token-file: "},
		{"bad trusted proxy", []string{"--trusted-proxy", "10.0.0.1,proxy.local"}, `--trusted-proxy "proxy.local": want an address or CIDR`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseServe(t, tt.args...).validate()
			prefix := strings.HasSuffix(tt.want, ": ")
			if err == nil || (!prefix && err.Error() != tt.want) || (prefix && !strings.HasPrefix(err.Error(), tt.want)) {
				t.Errorf("serve %q: validate() = %v, want %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestServeSetup: what validate derives from good flags.
func TestServeSetup(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("  from-the-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeSelfSigned(t, cert, key)

	t.Run("token file, proxies, base path, state dir", func(t *testing.T) {
		t.Chdir(dir)
		o := parseServe(t, "--listen", "127.0.0.1:7999", "--token-file", tokenFile, "--base-path", "/term/",
			"--trusted-proxy", "10.1.2.3/8", "--trusted-proxy", "192.0.2.7,::1", "--state-dir", "state")
		setup, err := o.validate()
		if err != nil {
			t.Fatal(err)
		}
		var proxies []string
		for _, p := range setup.proxies {
			proxies = append(proxies, p.String())
		}
		got := []string{setup.addr.String(), setup.token, o.basePath, strings.Join(proxies, " "), setup.stateDir, setup.scheme()}
		want := []string{"127.0.0.1:7999", "from-the-file-0123456789", "/term", "10.0.0.0/8 192.0.2.7/32 ::1/128", filepath.Join(dir, "state"), "http"}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("setup field %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
	t.Run("--token wins over --token-file", func(t *testing.T) {
		setup, err := parseServe(t, "--token", "from-the-flag-0123456789", "--token-file", tokenFile).validate()
		if err != nil || setup.token != "from-the-flag-0123456789" {
			t.Errorf("token = %q, %v; want the flag's", setup.token, err)
		}
	})
	// With no token given, the first start makes one and
	// keeps it in the state directory (0600); later starts use it again, so
	// that a restart signs nobody out; --new-token replaces it.
	t.Run("random token kept in the default state dir", func(t *testing.T) {
		log := slog.New(slog.NewTextHandler(t.Output(), nil))
		a, err := parseServe(t).validate()
		if err != nil {
			t.Fatal(err)
		}
		if len(a.token) != 32 || !a.freshToken || strings.ContainsAny(a.token, "+/=") {
			t.Fatalf("first start: token %q (fresh %v), want a new 32-character URL-safe token", a.token, a.freshToken)
		}
		if want := filepath.Join(state, "termhost"); a.stateDir != want {
			t.Errorf("state dir = %q, want %q (beside the CLI's token)", a.stateDir, want)
		}
		if err := a.saveToken(log); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(a.stateDir, "token")
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("saved token %s: %v, %v; want mode 0600", path, fi, err)
		}
		b, err := parseServe(t).validate()
		if err != nil || b.token != a.token || b.freshToken {
			t.Errorf("restart: token %q (fresh %v), %v; want the saved %q", b.token, b.freshToken, err, a.token)
		}
		c, err := parseServe(t, "--new-token").validate()
		if err != nil || c.token == a.token || !c.freshToken {
			t.Fatalf("--new-token: token %q (fresh %v), %v; want a new one", c.token, c.freshToken, err)
		}
		if err := c.saveToken(log); err != nil {
			t.Fatal(err)
		}
		if d, _ := parseServe(t).validate(); d.token != c.token {
			t.Errorf("start after --new-token: token %q, want the new %q", d.token, c.token)
		}
		if _, err := parseServe(t, "--new-token", "--token", "from-the-flag-0123456789").validate(); err == nil {
			t.Errorf("--new-token with --token: no error")
		}
	})
	t.Run("TLS", func(t *testing.T) {
		setup, err := parseServe(t, "--tls-cert", cert, "--tls-key", key).validate()
		if err != nil || setup.tls == nil || len(setup.tls.Certificates) != 1 || setup.scheme() != "https" {
			t.Errorf("--tls-cert: %+v, %v; want one certificate and https", setup.tls, err)
		}
	})
}

func TestNewLogger(t *testing.T) {
	tests := []struct {
		level, format string
		wantErr       string
		enabled       slog.Level // the lowest level logged
	}{
		{"debug", "text", "", slog.LevelDebug},
		{"warn", "json", "", slog.LevelWarn},
		{"ERROR", "text", "", slog.LevelError},
		{"loud", "text", "--log-level: ", 0},
		{"info", "xml", "--log-format must be text or json", 0},
	}
	for _, tt := range tests {
		t.Run(tt.level+"/"+tt.format, func(t *testing.T) {
			log, err := newLogger(tt.level, tt.format)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Errorf("newLogger(%q, %q) error = %v, want %q", tt.level, tt.format, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if !log.Enabled(ctx, tt.enabled) || log.Enabled(ctx, tt.enabled-1) {
				t.Errorf("newLogger(%q): lowest level is not %v", tt.level, tt.enabled)
			}
		})
	}
}

func TestLocalOrigins(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		addr   *net.TCPAddr
		scheme string
		want   []string
	}{
		{"loopback", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7681}, "http",
			[]string{"http://127.0.0.1:7681", "http://localhost:7681", "http://127.0.0.1:7681", "http://[::1]:7681"}},
		{"IPv6 loopback", &net.TCPAddr{IP: net.IPv6loopback, Port: 443}, "https",
			[]string{"https://[::1]:443", "https://localhost:443", "https://127.0.0.1:443", "https://[::1]:443"}},
		{"one address", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 5), Port: 80}, "http", []string{"http://192.0.2.5:80"}},
		{"wildcard adds the host name", &net.TCPAddr{IP: net.IPv4zero, Port: 1}, "http",
			[]string{"http://0.0.0.0:1", "http://localhost:1", "http://127.0.0.1:1", "http://[::1]:1", "http://" + host + ":1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := localOrigins(tt.addr, tt.scheme); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("localOrigins(%v, %s) = %q, want %q", tt.addr, tt.scheme, got, tt.want)
			}
		})
	}
}

// listenLog records the server's "termhost listening" log line.
type listenLog struct {
	slog.Handler
	url chan string
}

// Enabled sees every record: the listening line is logged at info.
func (h *listenLog) Enabled(context.Context, slog.Level) bool { return true }

func (h *listenLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "termhost listening" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "url" {
				h.url <- a.Value.String()
			}
			return true
		})
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *listenLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *listenLog) WithGroup(string) slog.Handler      { return h }

// TestListenAndServeInProcess starts serve's server in this process, drives
// it with ls, then stops it with SIGTERM as a user would: the login link is
// printed, the token saved for the CLI, and the server shuts down cleanly.
func TestListenAndServeInProcess(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	home := t.TempDir()
	o := parseServe(t, "--listen", "127.0.0.1:0", "--shell", "/bin/bash", "--cwd", home, "--base-path", "/term/", "--token", "in-process-owner-token")
	setup, err := o.validate()
	if err != nil {
		t.Fatal(err)
	}
	h := &listenLog{Handler: slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}), url: make(chan string, 1)}
	errc := make(chan error, 1)
	got := cmdtest.CaptureStdio(t, func() {
		go func() { errc <- listenAndServe(*o, setup, slog.New(h)) }()
		url := await(t, h.url) // the signal handler is installed before this is logged
		if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/term/") {
			t.Errorf("listening at %q, want http://127.0.0.1:<port>/term/", url)
		}
		env := map[string]string{"TERMHOST_SERVER": strings.TrimSuffix(url, "/"), "TERMHOST_TOKEN": "in-process-owner-token"}
		code, stdout, stderr := call(t, env, "ls")
		if code != exitOK || !strings.HasPrefix(stdout, "ID  NAME  STATE  EXIT  CONTROL  HERE  URL\n") {
			t.Errorf("ls against the in-process serve: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("listenAndServe after SIGTERM = %v, want nil", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop on SIGTERM")
		}
	})
	if !strings.Contains(got.Stdout, "Open this login link to sign in as the owner (it works in any browser, as often as needed, until the token changes; keep it secret):") || !strings.Contains(got.Stdout, "/term/#token=in-process-owner-token\n") {
		t.Errorf("serve printed %q, want the login link", got.Stdout)
	}
	saved, err := os.ReadFile(filepath.Join(state, "termhost", "token"))
	if err != nil || string(saved) != "in-process-owner-token\n" {
		t.Errorf("saved token = %q, %v; want the owner token for the CLI", saved, err)
	}
}
