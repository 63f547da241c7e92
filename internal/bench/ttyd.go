package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// ttyd's WebSocket protocol, as ttyd 1.7 speaks it: the subprotocol "tty"
// at /ws; every message binary, its first byte the command. The client
// opens with a JSON message (its first byte '{') naming the size, and the
// server spawns the command then; it sends the window title and the
// client's preferences, then each read of the pty as one OUTPUT message.
const (
	ttydSubprotocol = "tty"
	ttydPath        = "/ws"

	// client → server
	ttydInput  = '0' // the bytes typed
	ttydResize = '1' // JSON {"columns":C,"rows":R}
	ttydPause  = '2' // flow control: stop reading the pty
	ttydResume = '3'
	ttydHello  = '{' // JSON {"AuthToken":"","columns":C,"rows":R}: the first message

	// server → client
	ttydOutput = '0' // the bytes of one pty read
	ttydTitle  = '1' // the window title
	ttydPrefs  = '2' // the client's preferences, JSON
)

// ttydSize is the JSON of ttyd's first message and of its resize.
type ttydSize struct {
	AuthToken *string `json:"AuthToken,omitempty"`
	Columns   int     `json:"columns"`
	Rows      int     `json:"rows"`
}

// ttydClient speaks ttyd's protocol as ttyd's web client does: the peer
// the bench measures termhost against, ttyd itself when it is installed
// (startTTYD), else the bench's relay, which speaks the same protocol.
type ttydClient struct {
	ws    *websocket.Conn
	buf   bytes.Buffer
	out   []byte // scratch for input messages
	title string // the last window title the server sent
	prefs bool   // the server sent its preferences
}

// dialTTYD connects to a ttyd-protocol server at url (ws://host:port/ws)
// and asks for a terminal of cols × rows.
func dialTTYD(ctx context.Context, url string, cols, rows int) (*ttydClient, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{ttydSubprotocol}})
	if err != nil {
		return nil, fmt.Errorf("ttyd protocol: dial %s: %w", url, err)
	}
	if ws.Subprotocol() != ttydSubprotocol {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("ttyd protocol: %s did not agree to the subprotocol %q", url, ttydSubprotocol)
	}
	ws.SetReadLimit(1 << 20)
	token := ""
	hello, _ := json.Marshal(ttydSize{AuthToken: &token, Columns: cols, Rows: rows})
	if err := ws.Write(ctx, websocket.MessageBinary, hello); err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("ttyd protocol: %w", err)
	}
	return &ttydClient{ws: ws}, nil
}

func (c *ttydClient) close() { _ = c.ws.Close(websocket.StatusNormalClosure, "") }

// output returns the bytes of the next OUTPUT message, valid until the
// next call; the title and preferences are noted on the way.
func (c *ttydClient) output(ctx context.Context) ([]byte, error) {
	for {
		typ, r, err := c.ws.Reader(ctx)
		if err != nil {
			return nil, err
		}
		c.buf.Reset()
		if _, err := c.buf.ReadFrom(r); err != nil {
			return nil, err
		}
		b := c.buf.Bytes()
		if typ != websocket.MessageBinary || len(b) == 0 {
			return nil, fmt.Errorf("ttyd protocol: a %v message of %d bytes: want binary with a command byte", typ, len(b))
		}
		switch b[0] {
		case ttydOutput:
			return b[1:], nil
		case ttydTitle:
			c.title = string(b[1:])
		case ttydPrefs:
			c.prefs = true
		default:
			return nil, fmt.Errorf("ttyd protocol: unknown server command %q", b[0])
		}
	}
}

// until reads output until the scanner finds its marker.
func (c *ttydClient) until(ctx context.Context, sc *scanner) error {
	for {
		b, err := c.output(ctx)
		if err != nil {
			return err
		}
		if sc.feed(b) {
			return nil
		}
	}
}

// input types s.
func (c *ttydClient) input(ctx context.Context, s string) error {
	c.out = append(append(c.out[:0], ttydInput), s...)
	return c.ws.Write(ctx, websocket.MessageBinary, c.out)
}

// resize sets the terminal's size.
func (c *ttydClient) resize(ctx context.Context, cols, rows int) error {
	b, _ := json.Marshal(ttydSize{Columns: cols, Rows: rows})
	return c.ws.Write(ctx, websocket.MessageBinary, append([]byte{ttydResize}, b...))
}

// echo types b and waits until it comes back.
func (c *ttydClient) echo(ctx context.Context, b byte) error {
	if err := c.input(ctx, string(b)); err != nil {
		return err
	}
	for {
		out, err := c.output(ctx)
		if err != nil {
			return err
		}
		if bytes.IndexByte(out, b) >= 0 {
			return nil
		}
	}
}

// startTTYD runs the ttyd executable at path on a loopback port, serving
// the shell sh (writable: ttyd 1.7 is read-only by default), and waits
// until it accepts connections. The returned peer is measured as the relay
// is: through the ttyd protocol, its CPU read from /proc.
func startTTYD(ctx context.Context, path string, sh shellSpec, stderr io.Writer) (*relay, error) {
	version := ttydVersion(path)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("ttyd: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close() // a race with another listener is possible; the wait below then fails clearly
	argv := append([]string{path, "--port", strconv.Itoa(port), "--interface", "127.0.0.1", "--writable"}, sh.argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stderr = sh.env, sh.dir, stderr
	if stderr == nil {
		cmd.Stderr = io.Discard
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ttyd: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(20 * time.Second)
	for {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			_ = c.Close()
			break
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("ttyd (%s) exited before listening on %s", path, addr)
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("ttyd (%s) did not listen on %s within 20 s", path, addr)
		}
	}
	return &relay{url: "ws://" + addr + ttydPath, proc: &process{pid: cmd.Process.Pid}, stopProc: stop, name: version}, nil
}

// ttydVersion is "ttyd 1.7.7" as the executable reports it, or "ttyd".
func ttydVersion(path string) string {
	out, err := exec.Command(path, "--version").Output()
	if v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "ttyd version "); err == nil && ok {
		return "ttyd " + strings.Fields(v)[0]
	}
	return "ttyd"
}

// errTTYDHello is the relay's answer to a first message that is not ttyd's
// JSON hello.
var errTTYDHello = errors.New("ttyd protocol: the first message must be the JSON size")
