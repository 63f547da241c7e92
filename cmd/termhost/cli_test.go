package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/terminals"
)

// binary is the termhost command built once for the tests that run it under
// a pty or signal it; binErr says why it is missing.
var binary, binErr = "", error(nil)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "termhost-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "termhost")
	if out, err := exec.Command(goTool(), "build", "-o", binary, ".").CombinedOutput(); err != nil {
		binErr = fmt.Errorf("go build: %v\n%s", err, out)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func needBinary(t *testing.T) string {
	t.Helper()
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binary
}

const testToken = "cli-test-token"

// testServer is the real router and terminal manager behind httptest, with
// bash --norc as the shell.
type testServer struct {
	*httptest.Server
	m *terminals.Manager
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := terminals.NewManager(terminals.Config{Shell: "/bin/bash", ShellArgs: []string{"--norc", "--noprofile"},
		Cwd: t.TempDir(), Logger: log, DisposeGrace: 500 * time.Millisecond,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PS1=$ ", "LANG=C.UTF-8"}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := handlers.New(handlers.Config{Manager: m, Logger: log, OwnerToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
		m.Close()
	})
	return &testServer{Server: ts, m: m}
}

// dial connects a watching client, closed at cleanup.
func (ts *testServer) dial(t *testing.T, subs ...string) *client.Client {
	t.Helper()
	c, err := client.Dial(t.Context(), ts.URL, client.Options{Token: testToken, InitialSubscriptions: subs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// shell creates a bash terminal claimed by claimant and returns its id.
func (ts *testServer) shell(t *testing.T, c *client.Client, id, claimant string) string {
	t.Helper()
	claim := ahp.ClientClaim(claimant)
	if _, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: ahp.TerminalURI(id), Claim: &claim}); err != nil {
		t.Fatalf("createTerminal: %v", err)
	}
	return id
}

// info is a terminal's catalogue entry on the server.
func (ts *testServer) info(uri string) (ahp.TerminalInfo, bool) {
	for _, in := range ts.m.Terminals() {
		if in.Resource == uri {
			return in, true
		}
	}
	return ahp.TerminalInfo{}, false
}

// waitFor polls cond until it holds or fails the test after a generous
// deadline (a loaded 2-core machine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testApp runs subcommands in process with the given environment, stdin
// from /dev/null, and captured stdout and stderr.
func testApp(t *testing.T, env map[string]string) (*app, *syncBuffer, *syncBuffer) {
	t.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = null.Close() })
	out, errOut := &syncBuffer{}, &syncBuffer{}
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = t.TempDir() // no stray local token file
	}
	return &app{stdin: null, stdout: out, stderr: errOut, getenv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}, out, errOut
}

// call runs one subcommand in process.
func call(t *testing.T, env map[string]string, cmd string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	a, out, errOut := testApp(t, env)
	fn := map[string]func([]string) int{"run": a.run, "attach": a.attach, "ls": a.ls, "share": a.share, "kill": a.kill}[cmd]
	code = fn(args)
	return code, out.String(), errOut.String()
}

func ownerEnv(ts *testServer) map[string]string {
	return map[string]string{"TERMHOST_SERVER": ts.URL, "TERMHOST_TOKEN": testToken}
}

// oneLine checks that stderr is exactly one line holding want.
func oneLine(t *testing.T, name, stderr, want string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.Contains(stderr, want) {
		t.Errorf("%s: stderr = %q, want one line containing %q", name, stderr, want)
	}
}

func TestErrorsAreOneLineAndExit2(t *testing.T) {
	ts := newTestServer(t)
	owner := ownerEnv(ts)
	unreachable := map[string]string{"TERMHOST_TOKEN": testToken}
	tests := []struct {
		name string
		env  map[string]string
		cmd  string
		args []string
		want string
	}{
		{"ls unreachable", unreachable, "ls", []string{"--server", "http://127.0.0.1:1"}, "cannot reach the termhost server at http://127.0.0.1:1"},
		{"run unreachable", unreachable, "run", []string{"--server", "http://127.0.0.1:1", "--", "true"}, "cannot reach"},
		{"attach unreachable", unreachable, "attach", []string{"--server", "http://127.0.0.1:1", "abc"}, "cannot reach"},
		{"share unreachable", unreachable, "share", []string{"abc", "--server", "http://127.0.0.1:1"}, "cannot reach"},
		{"kill unreachable", map[string]string{"TERMHOST_SERVER": "http://127.0.0.1:1"}, "kill", []string{"abc"}, "cannot reach"},
		{"bad scheme", owner, "ls", []string{"--server", "ftp://127.0.0.1"}, "the scheme must be http or https"},
		{"bad port", owner, "ls", []string{"--server", "http://127.0.0.1:99999"}, "invalid server URL"},
		{"bad token", map[string]string{"TERMHOST_SERVER": ts.URL, "TERMHOST_TOKEN": "wrong"}, "ls", nil, "refused the token (HTTP 401"},
		{"no token", map[string]string{"TERMHOST_SERVER": ts.URL}, "ls", nil, "refused the token"},
		{"missing token file", owner, "ls", []string{"--token-file", "/nonexistent/token"}, "--token-file"},
		{"wrong base path", owner, "ls", []string{"--server", ts.URL + "/nope"}, "no termhost server at " + ts.URL + "/nope"},
		{"unknown flag", owner, "ls", []string{"--bogus"}, "flag provided but not defined: -bogus"},
		{"ls argument", owner, "ls", []string{"extra"}, "unexpected argument"},
		{"run without command", owner, "run", nil, "no command given"},
		{"run bad share role", owner, "run", []string{"--share", "owner", "--", "true"}, "--share: want viewer or driver"},
		{"run missing command", owner, "run", []string{"--", "no-such-command-xyz"}, "not found in PATH (AHP error -32602)"},
		{"run bad cwd", owner, "run", []string{"--cwd", "/nonexistent/dir", "--", "true"}, "-32602"},
		{"attach unknown", owner, "attach", []string{"nope"}, `no terminal "nope"`},
		{"attach two args", owner, "attach", []string{"a", "b"}, "want one terminal"},
		{"attach bad id", owner, "attach", []string{"a b"}, "bad terminal id"},
		{"kill unknown", owner, "kill", []string{"ahp-terminal:/nope"}, `no terminal "nope"`},
		{"share unknown", owner, "share", []string{"nope"}, "(AHP error -32008)"},
		{"share bad ttl", owner, "share", []string{"--ttl", "soon", "x"}, "--ttl: want e.g. 1h"},
		{"share bad role", owner, "share", []string{"--role", "admin", "x"}, "--role: want viewer or driver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := call(t, tt.env, tt.cmd, tt.args...)
			if code != exitUsage {
				t.Errorf("termhost %s %q exit = %d, want 2 (stderr %q)", tt.cmd, tt.args, code, stderr)
			}
			oneLine(t, tt.cmd, stderr, tt.want)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	flags := map[string][]string{
		"run":    {"--name", "--cwd", "--share", "--ttl"},
		"attach": {"Ctrl-\\ Ctrl-\\", "~."},
		"ls":     {"--json"},
		"share":  {"--role", "--ttl"},
		"kill":   {},
	}
	for cmd, extra := range flags {
		t.Run(cmd, func(t *testing.T) {
			code, stdout, stderr := call(t, nil, cmd, "--help")
			if code != 0 || stderr != "" {
				t.Fatalf("termhost %s --help: exit %d, stderr %q", cmd, code, stderr)
			}
			want := append([]string{"Usage: termhost " + cmd, "--server", "--token-file", "--connect-timeout",
				"[$TERMHOST_SERVER]", "[$TERMHOST_TOKEN_FILE]", "TERMHOST_TOKEN ", "XDG_STATE_HOME", "Exit status:", "Examples:\n  termhost " + cmd}, extra...)
			for _, w := range want {
				if !strings.Contains(stdout, w) {
					t.Errorf("termhost %s --help lacks %q:\n%s", cmd, w, stdout)
				}
			}
		})
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in, id, server string
	}{
		{"3f2c", "3f2c", ""},
		{"ahp-terminal:/3f2c", "3f2c", ""},
		{"http://127.0.0.1:7681/t/3f2c", "3f2c", "http://127.0.0.1:7681"},
		{"https://dev.example.com/term/t/3f2c/", "3f2c", "https://dev.example.com/term"},
		{"http://h/t/a%2Eb#share=secret", "a.b", "http://h"},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in)
		if err != nil || got.id != tt.id || got.server != tt.server {
			t.Errorf("parseTarget(%q) = %+v, %v; want id %q server %q", tt.in, got, err, tt.id, tt.server)
		}
	}
	for _, bad := range []string{"", "a b", "ahp-terminal:/", "ahp-terminal:/a/b", "http://h/x/3f2c", "http://h/t/"} {
		if got, err := parseTarget(bad); err == nil {
			t.Errorf("parseTarget(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestURLTargetOnConfiguredServer(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "byurl", c.ClientID())
	// The URL is on the configured server's origin (the scheme written in
	// capitals): the owner token goes there.
	code, _, stderr := call(t, ownerEnv(ts), "kill", "HTTP"+strings.TrimPrefix(ts.URL, "http")+"/t/"+id)
	if code != 0 {
		t.Fatalf("kill <url on the configured server>: exit %d, %s", code, stderr)
	}
}

// recorder is a second HTTP server that keeps every Authorization header
// it receives and refuses the upgrade.
type recorder struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auths = append(r.auths, req.Header.Get("Authorization"))
		r.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.auths)
}

// TestOwnerTokenOnlyToConfiguredServer: a pasted URL naming another origin
// never receives the owner token, wherever it comes from; a share link's
// URL brings its own token.
func TestOwnerTokenOnlyToConfiguredServer(t *testing.T) {
	ts := newTestServer(t)
	evil := newRecorder(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	stateToken := filepath.Join(dir, "state", "termhost", "token")
	for _, p := range []string{tokenFile, stateToken} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(testToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	envToken := map[string]string{"TERMHOST_TOKEN": testToken}
	stateDir := map[string]string{"XDG_STATE_HOME": dir + "/state"}
	refused := "is not on the configured server"
	tests := []struct {
		name string
		env  map[string]string
		cmd  string
		args []string
	}{
		{"attach, default server, TERMHOST_TOKEN", envToken, "attach", []string{evil.URL + "/t/abc"}},
		{"kill, default server, TERMHOST_TOKEN", envToken, "kill", []string{evil.URL + "/t/abc"}},
		{"share, default server, TERMHOST_TOKEN", envToken, "share", []string{evil.URL + "/t/abc"}},
		{"attach, --token-file", nil, "attach", []string{"--token-file", tokenFile, evil.URL + "/t/abc"}},
		{"attach, local state token to another loopback port", stateDir, "attach", []string{evil.URL + "/t/abc"}},
		{"attach, TERMHOST_SERVER elsewhere", ownerEnv(ts), "attach", []string{evil.URL + "/base/t/abc"}},
		{"kill, --server elsewhere", envToken, "kill", []string{"--server", ts.URL, evil.URL + "/t/abc"}},
		{"attach, same host other port", ownerEnv(ts), "attach", []string{strings.Replace(evil.URL, "http:", "https:", 1) + "/t/abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := call(t, tt.env, tt.cmd, tt.args...)
			if code != exitUsage || stdout != "" {
				t.Errorf("termhost %s %q: exit %d, stdout %q; want 2 and nothing", tt.cmd, tt.args, code, stdout)
			}
			oneLine(t, tt.cmd, stderr, refused)
			if got := evil.got(); len(got) != 0 {
				t.Fatalf("the other server received %d requests with Authorization %q, want none", len(got), got)
			}
		})
	}

	// A share link's URL on another server: its own token goes there, the
	// owner token does not.
	code, _, stderr := call(t, envToken, "attach", evil.URL+"/t/abc#share=link-secret")
	if code != exitUsage || !strings.Contains(stderr, "refused the token") {
		t.Errorf("attach <share link elsewhere>: exit %d, %q; want the link's server to refuse it", code, stderr)
	}
	if got := evil.got(); !slices.Equal(got, []string{"Bearer link-secret"}) {
		t.Errorf("the share link's server received Authorization %q, want only the link's token", got)
	}
}

// TestShareLinkURLUsesItsToken: a share link's URL works without the owner
// token, with the link's rights.
func TestShareLinkURLUsesItsToken(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "linked", c.ClientID())
	link, err := createShare(t.Context(), c, mustParse(t, ts.URL), id, "viewer", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := call(t, nil, "kill", link.URL)
	if code != exitUsage || !strings.Contains(stderr, "a share link cannot dispose terminals") {
		t.Errorf("kill <viewer link>: exit %d, %q; want the server to refuse the link", code, stderr)
	}
	if _, ok := ts.info(ahp.TerminalURI(id)); !ok {
		t.Errorf("kill <viewer link> disposed the terminal")
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := client.ParseServer(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestTokenPrecedence(t *testing.T) {
	dir := t.TempDir()
	write := func(name, tok string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagFile := write("flag-token", "from-flag")
	write("state/termhost/token", "from-state")
	local, _ := client.ParseServer("http://127.0.0.1:7681")
	remote, _ := client.ParseServer("https://dev.example.com")
	tests := []struct {
		name string
		file string
		env  map[string]string
		base string
		want string
	}{
		{"flag wins", flagFile, map[string]string{"TERMHOST_TOKEN": "from-env", "XDG_STATE_HOME": dir + "/state"}, "local", "from-flag"},
		{"env next", "", map[string]string{"TERMHOST_TOKEN": "from-env", "XDG_STATE_HOME": dir + "/state"}, "local", "from-env"},
		{"local state file", "", map[string]string{"XDG_STATE_HOME": dir + "/state"}, "local", "from-state"},
		{"never to a remote server", "", map[string]string{"XDG_STATE_HOME": dir + "/state"}, "remote", ""},
		{"missing state file", "", map[string]string{"XDG_STATE_HOME": dir + "/none"}, "local", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _, _ := testApp(t, tt.env)
			base := local
			if tt.base == "remote" {
				base = remote
			}
			got, err := a.token(&connFlags{tokenFile: tt.file}, base)
			if err != nil || got != tt.want {
				t.Errorf("token() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDetacher(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		out    string
		detach bool
	}{
		{"plain", []string{"ls\r"}, "ls\r", false},
		{"ctrl-backslash twice", []string{"ab\x1c\x1c", "ignored"}, "ab", true},
		{"ctrl-backslash twice across reads", []string{"a\x1c", "\x1c"}, "a", true},
		{"single ctrl-backslash passes", []string{"\x1cx"}, "\x1cx", false},
		{"tilde dot at start", []string{"~."}, "", true},
		{"tilde dot after enter", []string{"echo\r", "~", "."}, "echo\r", true},
		{"tilde dot mid-line", []string{"a~."}, "a~.", false},
		{"double tilde sends one", []string{"~~."}, "~.", false},
		{"tilde then other", []string{"~x"}, "~x", false},
		{"tilde after newline", []string{"\n~."}, "\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := detacher{lineStart: true}
			var out []byte
			detach := false
			for _, c := range tt.chunks {
				o, det := d.feed([]byte(c))
				out = append(out, o...)
				if det {
					detach = true
					break
				}
			}
			if string(out) != tt.out || detach != tt.detach {
				t.Errorf("feed(%q) = %q, %v; want %q, %v", tt.chunks, out, detach, tt.out, tt.detach)
			}
		})
	}
	d := detacher{lineStart: true}
	if out, _ := d.feed([]byte("\x1c")); len(out) != 0 || !d.held() {
		t.Fatalf("a lone Ctrl-\\ is not held")
	}
	if got := d.release(); string(got) != "\x1c" || d.held() {
		t.Errorf("release() = %q, want the held Ctrl-\\", got)
	}
}

func TestSplitUTF8(t *testing.T) {
	euro := "€" // e2 82 ac
	tests := []struct{ in, whole, rest string }{
		{"abc", "abc", ""},
		{"a" + euro, "a" + euro, ""},
		{"a" + euro[:1], "a", euro[:1]},
		{"a" + euro[:2], "a", euro[:2]},
		{"\xff", "\xff", ""},
	}
	for _, tt := range tests {
		whole, rest := splitUTF8([]byte(tt.in))
		if string(whole) != tt.whole || string(rest) != tt.rest {
			t.Errorf("splitUTF8(%q) = %q, %q; want %q, %q", tt.in, whole, rest, tt.whole, tt.rest)
		}
	}
}

func TestResyncOutput(t *testing.T) {
	tests := []struct {
		tail, text, want string
		ok               bool
	}{
		{"", "abc", "abc", true},
		{"line 2\r\n", "line 1\r\nline 2\r\nline 3\r\n", "line 3\r\n", true},
		{"gone\r\n", "new\r\n", "new\r\n", false},
		{"x", "x", "", true},
	}
	for _, tt := range tests {
		got, ok := resyncOutput(tt.tail, tt.text)
		if got != tt.want || ok != tt.ok {
			t.Errorf("resyncOutput(%q, %q) = %q, %v; want %q, %v", tt.tail, tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

// nextUntil takes a client's events until match accepts one.
func nextUntil(t *testing.T, c *client.Client, what string, match func(client.Event) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		ev, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if match(ev) {
			return
		}
	}
}

// await receives from ch, failing the test after a generous deadline rather
// than hanging the package.
func await[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for the command to return")
		panic("unreachable")
	}
}
