package ahp_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

func TestCheckTerminalURI(t *testing.T) {
	tests := []struct {
		name, uri string
		ok        bool
	}{
		{"termhost's own", "ahp-terminal:/3f2c", true},
		{"VS Code's", "agenthost-terminal:/0b1e2c3d-1111-2222-3333-444455556666", true},
		{"authority form", "my-app://host/terms/7", true},
		{"opaque", "urn:uuid:0b1e2c3d", true},
		{"nested path", "agenthost-terminal:/a/b/c", true},
		{"with query", "x-term:/a?b=c", true},
		{"upper-case foreign scheme", "AgentHost-Terminal:/1", true},
		{"longest", "x:/" + strings.Repeat("a", ahp.MaxURI-3), true},
		{"too long", "x:/" + strings.Repeat("a", ahp.MaxURI-2), false},
		{"root", ahp.RootURI, false},
		{"session", "ahp-session:/s1", false},
		{"chat", "ahp-chat:/s1/c1", false},
		{"other ahp scheme", "ahp-future:/x", false},
		{"upper-case reserved", "AHP-SESSION:/x", false},
		{"file", "file:///tmp", false},
		{"FILE", "FILE:///tmp", false},
		{"bad ahp-terminal", "ahp-terminal:/a/b", false},
		{"upper-case ahp-terminal", "AHP-TERMINAL:/x", false},
		{"relative", "abc", false},
		{"relative path", "/t/abc", false},
		{"empty", "", false},
		{"scheme only", "x:", false},
		{"space", "x:/a b", false},
		{"control", "x:/a\x1bb", false},
		{"DEL", "x:/a\x7fb", false},
		{"leading space", " x:/a", false},
		{"bad scheme", "1x:/a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ahp.CheckTerminalURI(tt.uri); (err == nil) != tt.ok {
				t.Errorf("CheckTerminalURI(%q) = %v, want ok %v", tt.uri, err, tt.ok)
			}
		})
	}
}

func TestTerminalIDOf(t *testing.T) {
	tests := []struct {
		name, uri, want string
	}{
		{"terminal URI", "ahp-terminal:/abc123", "abc123"},
		{"round trip", ahp.TerminalURI("build-7"), "build-7"},
		{"root URI unchanged", ahp.RootURI, ahp.RootURI},
		{"invalid id unchanged", "ahp-terminal:/a/b", "ahp-terminal:/a/b"},
		{"plain id unchanged", "abc123", "abc123"},
		{"foreign scheme verbatim", "agenthost-terminal:/0b1e", "agenthost-terminal:/0b1e"},
		{"id with a colon stays a URI", "ahp-terminal:/a:b", "ahp-terminal:/a:b"},
		{"non-canonical form stays a URI", "ahp-terminal:3f2c", "ahp-terminal:3f2c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ahp.TerminalIDOf(tt.uri)
			if got != tt.want {
				t.Errorf("TerminalIDOf(%q) = %q, want %q", tt.uri, got, tt.want)
			}
			if ahp.CheckTerminalURI(tt.uri) == nil {
				if back := ahp.TerminalURIOf(got); back != tt.uri {
					t.Errorf("TerminalURIOf(TerminalIDOf(%q)) = %q, want it back", tt.uri, back)
				}
			}
		})
	}
}

// TestFileURI checks FileURI against the rule AHP gives for a cwd's file
// URI: every byte of the path but A–Z a–z 0–9 - . _ ~ / : @ $ & + , ; = is
// percent-encoded in upper-case hex.
func TestFileURI(t *testing.T) {
	rule := func(path string) string {
		const hex = "0123456789ABCDEF"
		var sb strings.Builder
		sb.WriteString("file://")
		for i := 0; i < len(path); i++ {
			c := path[i]
			if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/:@$&+,;=", c) >= 0 {
				sb.WriteByte(c)
				continue
			}
			sb.WriteByte('%')
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&15])
		}
		return sb.String()
	}
	paths := []string{"/", "/tmp", "/home/a;b c#d", "/a=b", "/x?y", "/100%", "/é/✓", "//double", "/a:b@c$d&e+f,g", "/~user/-._", "/!'()*[]{}<>\"\\^`|"}
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	paths = append(paths, "/"+string(all))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, 1+rng.IntN(20))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		paths = append(paths, "/"+string(b))
	}
	for _, p := range paths {
		if got, want := ahp.FileURI(p), rule(p); got != want {
			t.Fatalf("FileURI(%q) = %q, want %q", p, got, want)
		}
	}
}
