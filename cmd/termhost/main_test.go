package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termhost/termhost/internal/cmdtest"
)

// exitFail is serve's exit code when the server fails to start.
const exitFail = 1

// TestRunCLIDispatch: the overview, unknown commands, and serve's and bench's
// refusals, through the real dispatcher, in one line on stderr with exit 2
// and nothing started.
func TestRunCLIDispatch(t *testing.T) {
	for _, k := range []string{"TERMHOST_TOKEN", "TERMHOST_SERVER", "TERMHOST_LISTEN", "TERMHOST_SHELL_INTEGRATION", "TERMHOST_AUTH", "TERMHOST_LOG_LEVEL"} {
		t.Setenv(k, "")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string // substrings
		wantStderr string   // the exact line, or its start when it ends in "…"
	}{
		{"help", []string{"help"}, exitOK, []string{"Usage:\n  termhost [serve] [flags]", "termhost kill <id|url>", "TERMHOST_RUN_CWD"}, ""},
		{"--help", []string{"--help"}, exitOK, []string{"termhost help              this text"}, ""},
		{"unknown command", []string{"frob", "x"}, exitUsage, nil, `termhost: unknown command "frob" (see termhost help)`},
		{"client command", []string{"kill", "--help"}, exitOK, []string{"Usage: termhost kill"}, ""},
		{"serve --help", []string{"serve", "--help"}, exitOK, []string{"termhost serve: run the terminal server.", "  --listen string\n      address to listen on (default 127.0.0.1:7681) [$TERMHOST_LISTEN]"}, ""},
		{"serve unknown flag", []string{"--bogus"}, exitUsage, nil, "termhost serve: flag provided but not defined: -bogus (see termhost serve --help)"},
		{"serve bad twin", nil, exitUsage, nil, "…"}, // set below through the environment
		{"serve bad log level", []string{"serve", "--log-level", "loud"}, exitUsage, nil, "termhost serve: --log-level: …"},
		{"serve bad option", []string{"serve", "--auth", "basic"}, exitUsage, nil, "termhost serve: --auth must be token, proxy or none"},
		{"serve cwd outside root", []string{"serve", "--listen", "127.0.0.1:0", "--root", root, "--cwd", outside}, exitUsage, nil,
			"termhost serve: invalid configuration: default cwd: " + outside + " is outside the allowed roots (" + root + ")"},
		{"serve port taken", []string{"serve", "--listen", busy.Addr().String(), "--auth", "none", "--log-format", "json"}, exitFail, nil,
			`{"time":…`},
		{"bench --help", []string{"bench", "--help"}, exitOK, []string{"termhost bench: measure throughput", "--quick"}, ""},
		{"bench shell integration", []string{"bench", "--shell-integration", "maybe"}, exitUsage, nil, "termhost bench: --shell-integration must be on or off"},
		{"bench unknown step", []string{"bench", "--only", "idle,speed"}, exitUsage, nil, `termhost bench: --only: no step "speed" (steps: idle, throughput, echo, startup, fanout, bounded, mcp, hostile, broadcast)`},
		{"bench hostile participants", []string{"bench", "--hostile-n", "61"}, exitUsage, nil, "termhost bench: --hostile-n must be 0 to 60 (a share link may hold 64 connections)"},
		{"bench cpu profile", []string{"bench", "--quick", "--cpuprofile", filepath.Join(base, "no", "cpu.out")}, exitUsage, nil, "termhost bench: --cpuprofile: …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "serve bad twin" {
				t.Setenv("TERMHOST_MAX_TERMINALS", "many")
				tt.wantStderr = `termhost serve: $TERMHOST_MAX_TERMINALS: parse error (see termhost serve --help)`
			}
			var code int
			got := cmdtest.CaptureStdio(t, func() { code = runCLI(tt.args) })
			if code != tt.wantCode {
				t.Errorf("termhost %q: exit %d, want %d (stderr %q)", tt.args, code, tt.wantCode, got.Stderr)
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(got.Stdout, w) {
					t.Errorf("termhost %q: stdout lacks %q:\n%s", tt.args, w, got.Stdout)
				}
			}
			if tt.wantStdout == nil && got.Stdout != "" {
				t.Errorf("termhost %q: stdout %q, want nothing", tt.args, got.Stdout)
			}
			line, rest, _ := strings.Cut(got.Stderr, "\n")
			want, isPrefix := strings.CutSuffix(tt.wantStderr, "…")
			if rest != "" || (isPrefix && !strings.HasPrefix(line, want)) || (!isPrefix && line != want) {
				t.Errorf("termhost %q: stderr %q, want one line %q", tt.args, got.Stderr, tt.wantStderr)
			}
		})
	}
}

// termhost --help lists every subcommand; --version prints one line.
func TestHelpAndVersionFlags(t *testing.T) {
	bin := cmdtest.Binary(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"termhost [serve]", "termhost run", "termhost attach", "termhost ls", "termhost share", "termhost kill", "termhost bench", "termhost version"}},
		{[]string{"-h"}, []string{"termhost run", "termhost version"}},
		{[]string{"help"}, []string{"termhost run", "termhost version"}},
		{[]string{"--version"}, []string{"termhost "}},
		{[]string{"version"}, []string{"termhost "}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = os.Environ()
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("termhost %v: %v", tc.args, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("termhost %v output lacks %q:\n%s", tc.args, w, out)
				}
			}
			if tc.args[0] != "--help" && tc.args[0] != "-h" && tc.args[0] != "help" && strings.Count(string(out), "\n") != 1 {
				t.Errorf("termhost %v: %q, want one line", tc.args, out)
			}
		})
	}
}

// TestMain builds the command for the tests that run it, and checks that
// no test leaks a goroutine.
func TestMain(m *testing.M) { cmdtest.Main(m) }
