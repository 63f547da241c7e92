package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
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
