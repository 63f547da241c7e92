package client_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

func TestParseServer(t *testing.T) {
	tests := []struct {
		in, base, ws, term string
		loopback           bool
	}{
		{"http://127.0.0.1:7681", "http://127.0.0.1:7681", "ws://127.0.0.1:7681/ws", "http://127.0.0.1:7681/t/x", true},
		{"https://dev.example.com/term/", "https://dev.example.com/term", "wss://dev.example.com/term/ws", "https://dev.example.com/term/t/x", false},
		{"http://host/term", "http://host/term", "ws://host/term/ws", "http://host/term/t/x", false},
		{"localhost:7790", "http://localhost:7790", "ws://localhost:7790/ws", "http://localhost:7790/t/x", true},
		{"ws://[::1]:80", "http://[::1]:80", "ws://[::1]:80/ws", "http://[::1]:80/t/x", true},
		{"WSS://h", "https://h", "wss://h/ws", "https://h/t/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := client.ParseServer(tt.in)
			if err != nil {
				t.Fatalf("ParseServer(%q): %v", tt.in, err)
			}
			if u.String() != tt.base || client.WebSocketURL(u) != tt.ws || client.TerminalURL(u, "x") != tt.term || client.IsLoopback(u) != tt.loopback {
				t.Errorf("ParseServer(%q) = %s, ws %s, terminal %s, loopback %v; want %s, %s, %s, %v", tt.in, u,
					client.WebSocketURL(u), client.TerminalURL(u, "x"), client.IsLoopback(u), tt.base, tt.ws, tt.term, tt.loopback)
			}
		})
	}
	for _, bad := range []string{"", "ftp://h", "http://", "http://h:99999", "http://u:p@h", "http://h/?q=1", "http://h/#f", "http://h:port"} {
		if u, err := client.ParseServer(bad); !errors.Is(err, client.ErrBadServer) {
			t.Errorf("ParseServer(%q) = %v, %v; want ErrBadServer", bad, u, err)
		}
	}
}

func TestLocalTokenPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	got, _ := client.LocalTokenPath(env(map[string]string{"XDG_STATE_HOME": "/state", "HOME": "/home/u"}))
	if got != "/state/termhost/token" {
		t.Errorf("with XDG_STATE_HOME: %q", got)
	}
	got, _ = client.LocalTokenPath(env(map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/u"}))
	if got != "/home/u/.local/state/termhost/token" {
		t.Errorf("without a usable XDG_STATE_HOME: %q", got)
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if tok, err := client.ReadToken(write("ok", "  secret \nignored\n")); err != nil || tok != "secret" {
		t.Errorf("ReadToken = %q, %v", tok, err)
	}
	if _, err := client.ReadToken(write("empty", "\n")); !errors.Is(err, client.ErrNoToken) {
		t.Errorf("empty file: %v", err)
	}
	if _, err := client.ReadToken(filepath.Join(dir, "missing")); !errors.Is(err, client.ErrNoToken) {
		t.Errorf("missing file: %v", err)
	}
}

func TestTrimContent(t *testing.T) {
	u := func(s string) ahp.Part { return ahp.Part{Type: ahp.PartUnclassified, Value: s} }
	cmd := func(s string) ahp.Part { return ahp.Part{Type: ahp.PartCommand, CommandID: "c", Output: s} }
	all := func(parts []ahp.Part) string {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text())
		}
		return b.String()
	}
	tests := []struct {
		name  string
		parts []ahp.Part
		limit int
		want  string
	}{
		{"under", []ahp.Part{u("abc")}, 10, "abc"},
		{"drop head parts", []ahp.Part{u("aaaa"), cmd("bb"), u("cc")}, 4, "bbcc"},
		{"cut at newline", []ahp.Part{u("line1\nline2\nend")}, 9, "end"},
		{"cut at rune", []ahp.Part{u("ééé")}, 3, "é"},
		{"command head", []ahp.Part{cmd("xxxx\nyy")}, 4, "yy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]ahp.Part(nil), tt.parts...)
			got := client.TrimContent(tt.parts, tt.limit)
			if all(got) != tt.want {
				t.Errorf("TrimContent(%q, %d) = %q, want %q", all(tt.parts), tt.limit, all(got), tt.want)
			}
			if all(in) != all(tt.parts) {
				t.Errorf("TrimContent modified its input")
			}
		})
	}
}
