package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/termhost/termhost/internal/envflag"
)

// TestFlagTwins: every flag of every subcommand has one TERMHOST_* twin,
// read by one implementation; the command line wins, an empty variable is
// unset, and a client command's own flags are namespaced so that the
// server's TERMHOST_CWD does not leak into "termhost run".
func TestFlagTwins(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantCwd    string
		wantServer string
	}{
		{"own flag from its twin", map[string]string{"TERMHOST_RUN_CWD": "/from-env"}, nil, "/from-env", "http://127.0.0.1:7681"},
		{"server's TERMHOST_CWD ignored", map[string]string{"TERMHOST_CWD": "/server-cwd"}, nil, "", "http://127.0.0.1:7681"},
		{"connection flag shared", map[string]string{"TERMHOST_SERVER": "http://h:1"}, nil, "", "http://h:1"},
		{"command line wins", map[string]string{"TERMHOST_RUN_CWD": "/from-env"}, []string{"--cwd", "/from-flag"}, "/from-flag", "http://127.0.0.1:7681"},
		{"empty is unset", map[string]string{"TERMHOST_SERVER": ""}, nil, "", "http://127.0.0.1:7681"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &app{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }}
			f := newCmdFlags("run", "run", "", "")
			cwd := f.String("cwd", "", "")
			if _, code, ok := f.parse(a, append(tt.args, "--", "true"), true); !ok {
				t.Fatalf("env %v args %v: exit %d", tt.env, tt.args, code)
			}
			if *cwd != tt.wantCwd || f.conn.server != tt.wantServer {
				t.Errorf("env %v args %v: cwd %q server %q; want %q, %q", tt.env, tt.args, *cwd, f.conn.server, tt.wantCwd, tt.wantServer)
			}
		})
	}
	t.Run("help shows every twin", func(t *testing.T) {
		for _, fs := range []*envflag.Set{newCmdFlags("run", "run", "", "").Set} { // serve's: TestServeFlagTwins
			var help strings.Builder
			fs.WriteFlags(&help)
			if got, want := strings.Count(help.String(), "[$TERMHOST_"), strings.Count("\n"+help.String(), "\n  --"); got != want || got == 0 {
				t.Errorf("%s --help: %d twins for %d flags:\n%s", fs.Name(), got, want, help.String())
			}
		}
	})
}
