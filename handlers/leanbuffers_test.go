package handlers_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEarlyFrame: a client that sends its first frame in the same packet as
// the upgrade request (bytes net/http has already buffered when the
// connection is hijacked) gets its answer: the smaller WebSocket buffers
// (leanbuffers.go) keep those bytes.
func TestEarlyFrame(t *testing.T) {
	ts := newServer(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// Padded past the 512-byte read buffer, so the early bytes do not fit it.
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize",` + strings.Repeat(" ", 600) +
		`"params":{"channel":"ahp-root://","protocolVersions":["1.0.0"],"clientId":"early","clientInfo":{"name":"early"}}}`
	request := "GET /ws HTTP/1.1\r\nHost: " + strings.TrimPrefix(ts.URL, "http://") + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer " + ownerToken + "\r\n\r\n"
	if _, err := conn.Write(append([]byte(request), maskedTextFrame(initialize)...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	for {
		opcode, payload := readServerFrame(t, br)
		if opcode == 1 && strings.Contains(string(payload), `"id":1`) {
			if !strings.Contains(string(payload), `"result"`) {
				t.Fatalf("initialize failed: %s", payload)
			}
			return
		}
	}
}

// maskedTextFrame is a client's text frame (RFC 6455 5.2: clients mask).
func maskedTextFrame(text string) []byte {
	key := [4]byte{1, 2, 3, 4}
	f := []byte{0x81}
	switch n := len(text); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	case n < 1<<16:
		f = append(f, 0x80|126)
		f = binary.BigEndian.AppendUint16(f, uint16(n))
	default:
		f = append(f, 0x80|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	f = append(f, key[:]...)
	for i := range len(text) {
		f = append(f, text[i]^key[i%4])
	}
	return f
}

// readServerFrame reads one unmasked, unfragmented server frame.
func readServerFrame(t *testing.T, r *bufio.Reader) (opcode byte, payload []byte) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Fatal(err)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			t.Fatal(err)
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			t.Fatal(err)
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		t.Fatal(err)
	}
	return h[0] & 0x0f, payload
}
