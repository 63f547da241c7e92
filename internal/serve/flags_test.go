package serve

import (
	"strings"
	"testing"
)

// TestServeFlagTwins: serve's --help shows the TERMHOST_* twin of every
// flag (the client commands' are checked by the cli package's
// TestFlagTwins).
func TestServeFlagTwins(t *testing.T) {
	fs := (&serveOptions{}).flags()
	var help strings.Builder
	fs.WriteFlags(&help)
	if got, want := strings.Count(help.String(), "[$TERMHOST_"), strings.Count("\n"+help.String(), "\n  --"); got != want || got == 0 {
		t.Errorf("%s --help: %d twins for %d flags:\n%s", fs.Name(), got, want, help.String())
	}
}
