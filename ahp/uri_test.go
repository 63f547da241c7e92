package ahp_test

import (
	"testing"

	"github.com/termhost/termhost/ahp"
)

func TestTerminalIDOf(t *testing.T) {
	tests := []struct {
		name, uri, want string
	}{
		{"terminal URI", "ahp-terminal:/abc123", "abc123"},
		{"round trip", ahp.TerminalURI("build-7"), "build-7"},
		{"root URI unchanged", ahp.RootURI, ahp.RootURI},
		{"invalid id unchanged", "ahp-terminal:/a/b", "ahp-terminal:/a/b"},
		{"plain id unchanged", "abc123", "abc123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ahp.TerminalIDOf(tt.uri); got != tt.want {
				t.Errorf("TerminalIDOf(%q) = %q, want %q", tt.uri, got, tt.want)
			}
		})
	}
}
