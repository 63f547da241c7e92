package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
)

// startServe runs the built binary's serve command and returns it with the
// login URL it printed.
func startServe(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(needBinary(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--shell", "/bin/bash",
		"--shell-integration", "off", "--log-level", "warn"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = t.Output()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Gracefully first, so a failed test leaves no shells behind.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u := regexp.MustCompile(`https?://\S+#token=\S+`).FindString(sc.Text()); u != "" {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return cmd, u
	case <-time.After(20 * time.Second):
		t.Fatal("serve printed no login URL")
		return nil, ""
	}
}

// dialServe opens an AHP connection with the token from the login URL.
func dialServe(t *testing.T, login string, client *http.Client) *websocket.Conn {
	t.Helper()
	base, token, _ := strings.Cut(login, "/#token=")
	ws, _, err := websocket.Dial(t.Context(), strings.Replace(base, "http", "ws", 1)+"/ws", &websocket.DialOptions{
		HTTPClient: client, HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	call := func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err := ws.Write(t.Context(), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	call(1, "initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}, "clientId": "serve-test"})
	call(2, "createTerminal", map[string]any{"channel": "ahp-terminal:/s", "claim": map[string]any{"kind": "client", "clientId": "serve-test"}})
	for got := 0; got < 2; {
		_, data, err := ws.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var m ahp.Message
		_ = json.Unmarshal(data, &m)
		if m.Method == "" {
			if m.Error != nil {
				t.Fatalf("request failed: %+v", m.Error)
			}
			got++
		}
	}
	return ws
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
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
			"channel": "ahp-terminal:/s", "clientSeq": 1, "action": map[string]any{"type": "terminal/input", "data": s}}})
		_ = ws.Write(t.Context(), websocket.MessageText, b)
	}
	// Unique durations mark this run's jobs.
	a, b := fmt.Sprint(3000+os.Getpid()%10000), fmt.Sprint(20000+os.Getpid()%10000)
	t.Cleanup(func() {
		for _, pid := range append(sleepers(a), sleepers(b)...) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	input("sleep " + a + " & (trap '' HUP; sleep " + b + ") &\r")
	deadline := time.Now().Add(10 * time.Second)
	for (len(sleepers(a)) == 0 || len(sleepers(b)) == 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(sleepers(a)) == 0 || len(sleepers(b)) == 0 {
		t.Fatal("background jobs did not start")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	for err == nil {
		_, _, err = ws.Read(t.Context())
	}
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
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
	if left := append(sleepers(a), sleepers(b)...); len(left) > 0 {
		t.Errorf("processes left after shutdown: %v", left)
	}
}

func TestServeRefusesNoAuthOffLoopback(t *testing.T) {
	cmd := exec.Command(needBinary(t), "serve", "--auth", "none", "--listen", "0.0.0.0:0")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback") {
		t.Errorf("serve --auth none on 0.0.0.0: err %v, output %s", err, out)
	}
	for _, bad := range [][]string{{"--auth", "maybe"}, {"--tls-cert", "x"}, {"--base-path", "term"}, {"--public-url", "ftp://x"}, {"--token", "short"}} {
		cmd := exec.Command(needBinary(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, bad...)...)
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

// Point 7: --auth=none behind a reverse proxy (which connects from
// loopback) is refused before anything starts, with exit 2 and one line.
func TestServeRefusesNoAuthBehindProxy(t *testing.T) {
	for _, extra := range [][]string{{"--public-url", "https://dev.example"}, {"--trusted-proxy", "127.0.0.1"}} {
		t.Run(extra[0], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, needBinary(t), append([]string{"serve", "--auth", "none", "--listen", "127.0.0.1:0"}, extra...)...)
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

// Point 15: idle keep-alives and unfinished bodies are cut; a WebSocket
// outlives the read timeout.
func TestServeTimeouts(t *testing.T) {
	const timeout = 500 * time.Millisecond
	_, login := startServe(t, "--read-timeout", timeout.String(), "--idle-timeout", timeout.String())
	base, _, _ := strings.Cut(login, "/#token=")
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
		ping := func(id int) error {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "ping", "params": map[string]any{"channel": ahp.RootURI}})
			if err := ws.Write(t.Context(), websocket.MessageText, b); err != nil {
				return err
			}
			for {
				_, data, err := ws.Read(t.Context())
				if err != nil {
					return err
				}
				var m ahp.Message
				if json.Unmarshal(data, &m) == nil && m.Method == "" && string(m.ID) == strconv.Itoa(id) {
					return nil
				}
			}
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
}
