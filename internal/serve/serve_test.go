package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
)

// startServe runs the built binary's serve command and returns it with the
// login URL it printed.
func startServe(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, login, _ := startServeLog(t, args...)
	return cmd, login
}

// startServeLog is startServe that also keeps serve's log.
func startServeLog(t *testing.T, args ...string) (*exec.Cmd, string, *testserver.SyncBuffer) {
	t.Helper()
	logs := &testserver.SyncBuffer{}
	cmd, login := cmdtest.StartServe(t, nil, logs, args...)
	return cmd, login, logs
}

// dialServe opens an AHP connection with the token from the login URL and
// creates the terminal ahp-terminal:/s.
func dialServe(t *testing.T, login string, client *http.Client) *ahptest.Client {
	t.Helper()
	base, token, _ := strings.Cut(login, "/#token=")
	c := ahptest.MustDial(t, strings.Replace(base, "http", "ws", 1)+"/ws", ahptest.Options{
		HTTPClient: client, Header: http.Header{"Authorization": {"Bearer " + token}}})
	c.Initialize("1.0.0", "serve-test", []string{}...)
	c.MustCall(ahp.MethodCreateTerminal, map[string]any{"channel": "ahp-terminal:/s", "claim": map[string]any{"kind": "client", "clientId": "serve-test"}})
	return c
}

// sleepers lists the processes running exactly "sleep <marker>".
func sleepers(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && string(b) == "sleep\x00"+marker+"\x00" {
			if pid, err := strconv.Atoi(e.Name()); err == nil && pid != os.Getpid() {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// TestGracefulShutdown: SIGTERM closes clients with 1001, ends every shell
// (jobs that ignore SIGHUP included) and exits 0.
func TestGracefulShutdown(t *testing.T) {
	cmd, login := startServe(t)
	ws := dialServe(t, login, nil)
	input := func(s string) {
		ws.Dispatch("ahp-terminal:/s", map[string]any{"type": "terminal/input", "data": s})
	}
	// Unique durations mark this run's jobs.
	a, b := fmt.Sprint(3000+os.Getpid()%10000), fmt.Sprint(20000+os.Getpid()%10000)
	t.Cleanup(func() {
		for _, pid := range append(sleepers(a), sleepers(b)...) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	input("sleep " + a + " & (trap '' HUP; sleep " + b + ") &\r")
	poll.Until(t, poll.Short, "the background jobs to start", func() bool { return len(sleepers(a)) > 0 && len(sleepers(b)) > 0 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := ws.WaitClosed(); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("close: %v, want 1001", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
	// The shells' sessions got SIGKILL before serve exited; a loaded machine
	// may take a moment to schedule those deaths.
	waitFor(t, "no process left after shutdown", func() bool { return len(sleepers(a))+len(sleepers(b)) == 0 })
}

func TestServeRefusesNoAuthOffLoopback(t *testing.T) {
	cmd := exec.Command(cmdtest.Binary(t), "serve", "--auth", "none", "--listen", "0.0.0.0:0")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback") {
		t.Errorf("serve --auth none on 0.0.0.0: err %v, output %s", err, out)
	}
	for _, bad := range [][]string{{"--auth", "maybe"}, {"--tls-cert", "x"}, {"--base-path", "term"}, {"--public-url", "ftp://x"}, {"--token", "short"}} {
		cmd := exec.Command(cmdtest.Binary(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, bad...)...)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("serve %v started: %s", bad, out)
		}
	}
}

// TestServeTLS: --tls-cert/--tls-key serve HTTPS and WSS.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeSelfSigned(t, certFile, keyFile)
	_, login := startServe(t, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(login, "https://") {
		t.Fatalf("login URL %s is not https", login)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	dialServe(t, login, client)
}

func writeSelfSigned(t *testing.T, certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

// TestServeRefusesNoAuthBehindProxy: --auth=none behind a reverse proxy (which connects from
// loopback) is refused before anything starts, with exit 2 and one line.
func TestServeRefusesNoAuthBehindProxy(t *testing.T) {
	for _, extra := range [][]string{{"--public-url", "https://dev.example"}, {"--trusted-proxy", "127.0.0.1"}} {
		t.Run(extra[0], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, cmdtest.Binary(t), append([]string{"serve", "--auth", "none", "--listen", "127.0.0.1:0"}, extra...)...)
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			msg := strings.TrimSpace(string(out))
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || strings.Contains(msg, "\n") ||
				!strings.Contains(msg, "--auth=none cannot be combined with --public-url or --trusted-proxy") {
				t.Errorf("serve --auth none %v: err %v, output %q; want exit 2 and one line refusing the combination", extra, err, msg)
			}
		})
	}
}

// rawHTTP opens a TCP connection to addr and writes req.
func rawHTTP(t *testing.T, addr, req string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedByServer reads until the server closes the connection; the
// deadline only bounds a failing test.
func closedByServer(c net.Conn, r io.Reader) error {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, r)
	return err // nil at EOF
}

// TestServeTimeouts: idle keep-alives and unfinished bodies are cut; a WebSocket
// and an MCP tool call outlive the read timeout.
func TestServeTimeouts(t *testing.T) {
	const timeout = 500 * time.Millisecond
	_, login := startServe(t, "--read-timeout", timeout.String(), "--idle-timeout", timeout.String(), "--mcp")
	base, token, _ := strings.Cut(login, "/#token=")
	addr := strings.TrimPrefix(base, "http://")

	t.Run("idle keep-alive", func(t *testing.T) {
		c := rawHTTP(t, addr, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err := closedByServer(c, br); err != nil {
			t.Errorf("idle keep-alive connection after the idle timeout: %v, want closed by the server", err)
		}
	})
	t.Run("unfinished login body", func(t *testing.T) {
		c := rawHTTP(t, addr, "POST /auth/login HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"token\":")
		if err := closedByServer(c, c); err != nil {
			t.Errorf("login body never finished: %v, want the connection closed after the read timeout", err)
		}
	})
	t.Run("websocket outlives the read timeout", func(t *testing.T) {
		ws := dialServe(t, login, nil)
		ping := func(int) error {
			if _, err := ws.Call(ahp.MethodPing, map[string]any{"channel": ahp.RootURI}); err != nil {
				return err
			}
			return nil
		}
		// Wall time has to pass the read timeout here: the pings keep the
		// socket busy meanwhile, each one must be answered.
		for id, end := 10, time.Now().Add(3*timeout); time.Now().Before(end); id++ {
			if err := ping(id); err != nil {
				t.Fatalf("ping %d, %v after connecting: %v", id, time.Since(end.Add(-3*timeout)), err)
			}
			time.Sleep(timeout / 5)
		}
	})
	t.Run("mcp tool call outlives the read timeout", func(t *testing.T) {
		// wait_for answers on its POST's event stream once the shell
		// prints; the read timeout must not cancel that request meanwhile.
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		call := httpMCP(t, base+"/mcp", token, tr)
		id := call("open_terminal", map[string]any{"name": "slow", "command": []string{"sh", "-c", "read x; echo got-$x; exec sleep 60"}})["id"].(string)
		waited := make(chan map[string]any, 1)
		go func() {
			defer close(waited) // also when call fails the test
			waited <- call("wait_for", map[string]any{"terminal": id, "pattern": "got-go", "timeoutSeconds": 60})
		}()
		time.Sleep(3 * timeout) // wall time past the read timeout is the point
		select {
		case res, ok := <-waited:
			t.Fatalf("wait_for ended before the input (%v): %v", ok, res)
		default:
		}
		call("send_input", map[string]any{"terminal": id, "text": "go", "keys": []string{"Enter"}})
		if res, ok := <-waited; !ok || res["match"] != "got-go" {
			t.Fatalf("wait_for: %v, want the match got-go", res)
		}
	})
}

// TestServeFailedStartLeavesNoTempDir: serve checks everything before it
// creates anything, and releases what it created when a later step fails, so
// a refused start leaves no shell-integration directory in $TMPDIR.
func TestServeFailedStartLeavesNoTempDir(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	missing := filepath.Join(t.TempDir(), "missing.pem")
	tests := []struct {
		name string
		args []string
	}{
		{"auth none off loopback", []string{"--auth", "none", "--listen", "0.0.0.0:0"}},
		{"short token", []string{"--listen", "127.0.0.1:0", "--token", "short"}},
		{"bad trusted proxy", []string{"--listen", "127.0.0.1:0", "--trusted-proxy", "not-an-address"}},
		{"unreadable TLS files", []string{"--listen", "127.0.0.1:0", "--tls-cert", missing, "--tls-key", missing}},
		{"address in use", []string{"--listen", busy.Addr().String()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, cmdtest.Binary(t), append([]string{"serve"}, tt.args...)...)
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("serve %v started; output %s", tt.args, out)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "termhost-shell-*")); len(left) > 0 {
				t.Errorf("serve %v: exit %v, left %v behind (output %s)", tt.args, err, left, out)
			}
		})
	}
}

// TestServeTokenPathIgnoresRelativeXDG: serve saves the token where the CLI
// looks for it; a relative $XDG_STATE_HOME is invalid (XDG base directory
// spec) and both ignore it.
func TestServeTokenPathIgnoresRelativeXDG(t *testing.T) {
	home := t.TempDir()
	t.Chdir(t.TempDir()) // a relative path must not land in the package directory
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "relative/state")
	got, err := writeLocalToken("0123456789abcdef0123")
	if want := filepath.Join(home, ".local", "state", "termhost", "token"); err != nil || got != want {
		t.Errorf("writeLocalToken with XDG_STATE_HOME=relative/state: %q, %v; want %q", got, err, want)
	}
}

// TestServeStateDir: the state directory is --state-dir (made absolute),
// else the directory of the local token file.
func TestServeStateDir(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	t.Setenv("HOME", home)
	for _, c := range []struct {
		name, flag, xdg, want string
	}{
		{"flag", "/srv/termhost-state", "/xdg", "/srv/termhost-state"},
		{"relative flag", "state", "/xdg", filepath.Join(cwd, "state")},
		{"XDG_STATE_HOME", "", "/xdg", "/xdg/termhost"},
		{"relative XDG_STATE_HOME is ignored", "", "relative", filepath.Join(home, ".local", "state", "termhost")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", c.xdg)
			o := serveOptions{stateDir: c.flag}
			if got, err := o.resolveStateDir(); err != nil || got != c.want {
				t.Errorf("--state-dir %q, XDG_STATE_HOME %q: %q, %v; want %q", c.flag, c.xdg, got, err, c.want)
			}
		})
	}
}

// TestServeRestartKeepsSignIn: a browser signed in before "termhost serve" restarts
// (same port, token and state directory) is still signed in after it.
func TestServeRestartKeepsSignIn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	args := []string{"--listen", addr, "--state-dir", filepath.Join(t.TempDir(), "state"), "--token", "restart-test-owner-token"}

	first, login := startServe(t, args...)
	base, token, _ := strings.Cut(login, "/#token=")
	resp, err := http.Post(base+"/auth/login", "application/json", strings.NewReader(`{"token":"`+token+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != 200 || len(cookies) != 1 {
		t.Fatalf("login: %d %v", resp.StatusCode, cookies)
	}
	_ = first.Process.Signal(syscall.SIGTERM)
	if err := first.Wait(); err != nil {
		t.Fatalf("first serve: %v", err)
	}

	startServe(t, args...)
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.AddCookie(cookies[0])
	page, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != 200 {
		t.Errorf("workbench after the restart with the old session cookie: %d, want 200", page.StatusCode)
	}
}

// TestServeDebugTrace: --debug-trace writes an execution trace of the
// server, whole even when the server ends before its time is up, with the
// marks of a keystroke's way through it (docs/BENCHMARKS.md reads them).
func TestServeDebugTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.trace")
	cmd, login := startServe(t, "--debug-trace", path, "--debug-trace-for", "1h")
	ws := dialServe(t, login, nil)
	ws.Subscribe("ahp-terminal:/s")
	ws.Dispatch("ahp-terminal:/s", map[string]any{"type": "terminal/input", "data": "x"})
	ws.WaitOutput("ahp-terminal:/s", "x")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Fatalf("not an execution trace: %d bytes starting %q", len(b), b[:min(len(b), 16)])
	}
	for _, mark := range []string{"pty written", "pty read", "published", "frame written"} {
		if !bytes.Contains(b, []byte(mark)) {
			t.Errorf("the trace has no %q mark of the keystroke", mark)
		}
	}
}
