package agent

import (
	"strings"
	"testing"
)

func TestPlain(t *testing.T) {
	many := strings.Repeat("line\r\n", 500)
	tests := []struct {
		name, raw, want string
	}{
		{"empty", "", ""},
		{"plain lines", "a\r\nb\r\n", "a\nb"},
		{"carriage return rewrites", "10%\r50%\r100%\r\ndone\r\n", "100%\ndone"},
		{"colours removed", "\x1b[31merror\x1b[0m: bad\r\n", "error: bad"},
		{"erase line", "progress 1/3\r\x1b[Kok\r\n", "ok"},
		{"backspace", "ab\bc\r\n", "ac"},
		{"no trailing newline", "Password: ", "Password:"},
		{"many lines", many, strings.TrimSuffix(strings.Repeat("line\n", 500), "\n")},
		{"binary", "\x00\x01\xff\xfe ok\r\n", "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plain(tt.raw)
			if tt.name == "binary" {
				if !strings.HasSuffix(got, "ok") {
					t.Fatalf("Plain(%q) = %q, want it to end with ok", tt.raw, got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("Plain(%q) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}
