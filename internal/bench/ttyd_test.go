package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// relayProcess starts the bench's relay as termhost bench does, a process
// of its own (this test binary, whose TestMain serves it), running bash.
func relayProcess(t *testing.T) *relay {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sh := shellSpec{argv: []string{bash}, dir: dir,
		env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "PS1=$ ", "TERM=xterm-256color", "HISTFILE=/dev/null"}}
	r, err := startRelayProcess(t.Context(), []string{os.Args[0]}, sh, t.Output())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.stop)
	return r
}

// TestTTYDClientAgainstRelay: the bench's ttyd client and its relay speak
// ttyd's protocol to each other across processes: the subprotocol, the
// JSON hello that sizes the shell, the title and preferences first,
// OUTPUT and INPUT, and RESIZE_TERMINAL.
func TestTTYDClientAgainstRelay(t *testing.T) {
	r := relayProcess(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := dialTTYD(ctx, r.url, 97, 31)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	size := func(want string) {
		t.Helper()
		m := newMarker()
		if err := c.input(ctx, fmt.Sprintf("printf '%%s %%s%%s\\n' \"$(stty size)\" %s %s\r", m.a, m.b)); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		sc := newScanner(m.text())
		for {
			b, err := c.output(ctx)
			if err != nil {
				t.Fatalf("output: %v (so far %q)", err, out.String())
			}
			out.Write(b)
			if sc.feed(b) {
				break
			}
		}
		if !strings.Contains(out.String(), want+" "+m.text()) {
			t.Fatalf("stty size: want %q before the marker, got %q", want, out.String())
		}
	}
	size("31 97") // rows, columns: the hello's
	if !strings.Contains(c.title, "bash") || !c.prefs {
		t.Errorf("title %q, preferences %v: want both before any output", c.title, c.prefs)
	}
	if err := c.resize(ctx, 80, 24); err != nil {
		t.Fatal(err)
	}
	size("24 80")
	m := newMarker()
	if err := c.input(ctx, fmt.Sprintf(catRaw, m.a, m.b)); err != nil {
		t.Fatal(err)
	}
	if err := c.until(ctx, newScanner(m.text())); err != nil {
		t.Fatal(err)
	}
	for _, b := range []byte("typed") {
		if err := c.echo(ctx, b); err != nil {
			t.Fatalf("echo of %q: %v", b, err)
		}
	}
}

// TestRelayRefusesOtherProtocols: the relay serves ttyd's protocol only: a
// client without the subprotocol, or whose first message is not the JSON
// hello, gets a policy-violation close and no shell.
func TestRelayRefusesOtherProtocols(t *testing.T) {
	r := relayProcess(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	ws, _, err := websocket.Dial(ctx, r.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("without the subprotocol: %v, want a 1008 close", err)
	}
	_ = ws.CloseNow()

	ws, _, err = websocket.Dial(ctx, r.url, &websocket.DialOptions{Subprotocols: []string{ttydSubprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, websocket.MessageBinary, []byte("0echo hi\r")); err != nil {
		t.Fatal(err)
	}
	_, _, err = ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("input before the hello: %v, want a 1008 close", err)
	}
	_ = ws.CloseNow()

	resp, err := http.Get(strings.Replace(strings.TrimSuffix(r.url, ttydPath), "ws:", "http:", 1) + "/other")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("another path: %s, want 404", resp.Status)
	}
}
