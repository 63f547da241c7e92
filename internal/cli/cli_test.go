package cli

import (
	"strings"
	"testing"
)

func TestErrorsAreOneLineAndExit2(t *testing.T) {
	ts := newTestServer(t)
	owner := ownerEnv(ts)
	unreachable := map[string]string{"TERMHOST_TOKEN": testToken}
	tests := []struct {
		name string
		env  map[string]string
		cmd  string
		args []string
		want string
	}{
		{"ls unreachable", unreachable, "ls", []string{"--server", "http://127.0.0.1:1"}, "cannot reach the termhost server at http://127.0.0.1:1"},
		{"run unreachable", unreachable, "run", []string{"--server", "http://127.0.0.1:1", "--", "true"}, "cannot reach"},
		{"attach unreachable", unreachable, "attach", []string{"--server", "http://127.0.0.1:1", "abc"}, "cannot reach"},
		{"share unreachable", unreachable, "share", []string{"abc", "--server", "http://127.0.0.1:1"}, "cannot reach"},
		{"kill unreachable", map[string]string{"TERMHOST_SERVER": "http://127.0.0.1:1"}, "kill", []string{"abc"}, "cannot reach"},
		{"bad scheme", owner, "ls", []string{"--server", "ftp://127.0.0.1"}, "the scheme must be http or https"},
		{"bad port", owner, "ls", []string{"--server", "http://127.0.0.1:99999"}, "invalid server URL"},
		{"bad token", map[string]string{"TERMHOST_SERVER": ts.URL, "TERMHOST_TOKEN": "wrong"}, "ls", nil, "refused the token (HTTP 401"},
		{"no token", map[string]string{"TERMHOST_SERVER": ts.URL}, "ls", nil, "refused the token"},
		{"missing token file", owner, "ls", []string{"--token-file", "/nonexistent/token"}, "--token-file"},
		{"wrong base path", owner, "ls", []string{"--server", ts.URL + "/nope"}, "no termhost server at " + ts.URL + "/nope"},
		{"unknown flag", owner, "ls", []string{"--bogus"}, "flag provided but not defined: -bogus"},
		{"ls argument", owner, "ls", []string{"extra"}, "unexpected argument"},
		{"run without command", owner, "run", nil, "no command given"},
		{"run bad share role", owner, "run", []string{"--share", "owner", "--", "true"}, "--share: want viewer or driver"},
		{"run missing command", owner, "run", []string{"--", "no-such-command-xyz"}, "not found in PATH (AHP error -32602)"},
		{"run missing program", owner, "run", []string{"--", "/no/such/program"}, `command "/no/such/program" not found (no such file) (AHP error -32602)`},
		{"run bad cwd", owner, "run", []string{"--cwd", "/nonexistent/dir", "--", "true"}, "-32602"},
		{"attach unknown", owner, "attach", []string{"nope"}, `no terminal "nope"`},
		{"attach two args", owner, "attach", []string{"a", "b"}, "want one terminal"},
		{"attach bad id", owner, "attach", []string{"a b"}, "bad terminal id"},
		{"kill unknown", owner, "kill", []string{"ahp-terminal:/nope"}, `no terminal "nope"`},
		{"share unknown", owner, "share", []string{"nope"}, "(AHP error -32008)"},
		{"share bad ttl", owner, "share", []string{"--ttl", "soon", "x"}, "--ttl: want e.g. 1h"},
		{"share bad role", owner, "share", []string{"--role", "admin", "x"}, "--role: want viewer or driver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := call(t, tt.env, tt.cmd, tt.args...)
			if code != exitUsage {
				t.Errorf("termhost %s %q exit = %d, want 2 (stderr %q)", tt.cmd, tt.args, code, stderr)
			}
			oneLine(t, tt.cmd, stderr, tt.want)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	flags := map[string][]string{
		"run":       {"--name", "--cwd", "--share", "--ttl"},
		"attach":    {"Ctrl-\\ Ctrl-\\", "~."},
		"ls":        {"--json"},
		"share":     {"--role", "--ttl"},
		"kill":      {},
		"approvals": {"--json"},
		"approve":   {"--always"},
		"deny":      {"--reason"},
	}
	for cmd, extra := range flags {
		t.Run(cmd, func(t *testing.T) {
			code, stdout, stderr := call(t, nil, cmd, "--help")
			if code != 0 || stderr != "" {
				t.Fatalf("termhost %s --help: exit %d, stderr %q", cmd, code, stderr)
			}
			want := append([]string{"Usage: termhost " + cmd, "--server", "--token-file", "--connect-timeout",
				"[$TERMHOST_SERVER]", "[$TERMHOST_TOKEN_FILE]", "TERMHOST_TOKEN ", "XDG_STATE_HOME", "Exit status:", "Examples:\n  termhost " + cmd}, extra...)
			for _, w := range want {
				if !strings.Contains(stdout, w) {
					t.Errorf("termhost %s --help lacks %q:\n%s", cmd, w, stdout)
				}
			}
		})
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in, id, server string
	}{
		{"3f2c", "3f2c", ""},
		{"ahp-terminal:/3f2c", "3f2c", ""},
		{"http://127.0.0.1:7681/t/3f2c", "3f2c", "http://127.0.0.1:7681"},
		{"https://dev.example.com/term/t/3f2c/", "3f2c", "https://dev.example.com/term"},
		{"http://h/t/a%2Eb#share=secret", "a.b", "http://h"},
		// Terminal URIs a client chose are kept verbatim (any scheme, see
		// docs/protocol.md).
		{"agenthost-terminal:/0b1e2c3d", "agenthost-terminal:/0b1e2c3d", ""},
		{"http://h/t/agenthost-terminal:%2F0b1e2c3d", "agenthost-terminal:/0b1e2c3d", "http://h"},
		{"https://h/term/t/agenthost-terminal%3A%2Ft%2Fx", "agenthost-terminal:/t/x", "https://h/term"},
		{"http://h/t/ahp-terminal:%2Fa:b", "ahp-terminal:/a:b", "http://h"},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in)
		if err != nil || got.id != tt.id || got.server != tt.server {
			t.Errorf("parseTarget(%q) = %+v, %v; want id %q server %q", tt.in, got, err, tt.id, tt.server)
		}
	}
	for _, bad := range []string{"", "a b", "ahp-terminal:/", "ahp-terminal:/a/b", "http://h/x/3f2c", "http://h/t/", "ahp-session:/x", "file:///tmp", "http://h/t/ahp-root:%2F%2F"} {
		if got, err := parseTarget(bad); err == nil {
			t.Errorf("parseTarget(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestDetacher(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		out    string
		detach bool
	}{
		{"plain", []string{"ls\r"}, "ls\r", false},
		{"ctrl-backslash twice", []string{"ab\x1c\x1c", "ignored"}, "ab", true},
		{"ctrl-backslash twice across reads", []string{"a\x1c", "\x1c"}, "a", true},
		{"single ctrl-backslash passes", []string{"\x1cx"}, "\x1cx", false},
		{"tilde dot at start", []string{"~."}, "", true},
		{"tilde dot after enter", []string{"echo\r", "~", "."}, "echo\r", true},
		{"tilde dot mid-line", []string{"a~."}, "a~.", false},
		{"double tilde sends one", []string{"~~."}, "~.", false},
		{"tilde then other", []string{"~x"}, "~x", false},
		{"tilde after newline", []string{"\n~."}, "\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := detacher{lineStart: true}
			var out []byte
			detach := false
			for _, c := range tt.chunks {
				o, det := d.feed([]byte(c))
				out = append(out, o...)
				if det {
					detach = true
					break
				}
			}
			if string(out) != tt.out || detach != tt.detach {
				t.Errorf("feed(%q) = %q, %v; want %q, %v", tt.chunks, out, detach, tt.out, tt.detach)
			}
		})
	}
	d := detacher{lineStart: true}
	if out, _ := d.feed([]byte("\x1c")); len(out) != 0 || !d.held() {
		t.Fatalf("a lone Ctrl-\\ is not held")
	}
	if got := d.release(); string(got) != "\x1c" || d.held() {
		t.Errorf("release() = %q, want the held Ctrl-\\", got)
	}
}

func TestSplitUTF8(t *testing.T) {
	euro := "€" // e2 82 ac
	tests := []struct{ in, whole, rest string }{
		{"abc", "abc", ""},
		{"a" + euro, "a" + euro, ""},
		{"a" + euro[:1], "a", euro[:1]},
		{"a" + euro[:2], "a", euro[:2]},
		{"\xff", "\xff", ""},
	}
	for _, tt := range tests {
		whole, rest := splitUTF8([]byte(tt.in))
		if string(whole) != tt.whole || string(rest) != tt.rest {
			t.Errorf("splitUTF8(%q) = %q, %q; want %q, %q", tt.in, whole, rest, tt.whole, tt.rest)
		}
	}
}

func TestResyncOutput(t *testing.T) {
	tests := []struct {
		tail, text, want string
		ok               bool
	}{
		{"", "abc", "abc", true},
		{"line 2\r\n", "line 1\r\nline 2\r\nline 3\r\n", "line 3\r\n", true},
		{"gone\r\n", "new\r\n", "new\r\n", false},
		{"x", "x", "", true},
	}
	for _, tt := range tests {
		got, ok := resyncOutput(tt.tail, tt.text)
		if got != tt.want || ok != tt.ok {
			t.Errorf("resyncOutput(%q, %q) = %q, %v; want %q, %v", tt.tail, tt.text, got, ok, tt.want, tt.ok)
		}
	}
}
