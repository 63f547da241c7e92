package shellint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scenarios every shell must pass, and the nonce's invisibility.

func TestShells(t *testing.T) {
	for _, name := range []string{"bash", "zsh", "fish"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := startShell(t, name, shellSetup{})
			s.started()
			testScenarios(t, s)
			s.checkClean()
		})
	}
}

func testScenarios(t *testing.T, s *session) {
	nextID := 1
	id := func() string { return fmt.Sprintf("cmd-%d", nextID) }
	check := func(keys, wantLine string, wantExit int) cmdResult {
		t.Helper()
		res := s.runCommand(keys)
		if res.exec.ID != id() {
			s.fail("typing %q: id %s, want %s", keys, res.exec.ID, id())
		}
		nextID++
		if wantLine != "" && res.exec.CommandLine != wantLine {
			s.fail("typing %q: command line %q, want %q", keys, res.exec.CommandLine, wantLine)
		}
		if wantExit >= 0 {
			s.expectExit(res, keys, wantExit)
		}
		return res
	}

	check("true\r", "true", 0)
	check(`echo 'a;b\c' é`+"\r", `echo 'a;b\c' é`, 0)
	check("false\r", "false", 1)
	check("sh -c 'exit 7'\r", "sh -c 'exit 7'", 7)
	if res := check("echo hi\r", "echo hi", 0); !strings.Contains(res.output, "hi\r\n") {
		s.fail("echo hi: output %q", res.output)
	}
	if res := check("cd /tmp\r", "cd /tmp", 0); !hasEvent(res.after, evCwd("file:///tmp")) {
		s.fail("cd /tmp: no cwd(file:///tmp) after the finish: %v", normalize(res.after, true))
	}

	// Empty Enter and Ctrl-C at the prompt are not commands.
	s.noCommand("\r")
	// Ctrl-C on a partly typed line (typed first: Ctrl-C makes the kernel
	// discard unread input).
	off := s.dataLen()
	s.send("abc")
	s.waitFor("the typed text to echo", func(_ []Event, data string) bool { return strings.Contains(data[off:], "abc") })
	s.noCommand("\x03")
	if s.name != "fish" { // fish does not redraw the prompt for Ctrl-C on an empty line
		s.noCommand("\x03")
	}
	check("true\r", "true", 0)

	// Ctrl-C during a command.
	from := len(s.snapshot())
	s.send("sleep 5\r")
	s.waitFor("sleep to start", func(evs []Event, _ string) bool { return len(evs) > from && hasKind(evs[from:], CommandExecuted) })
	s.foreground("sleep")
	s.send("\x03")
	s.waitFor("sleep to be interrupted", func(evs []Event, _ string) bool { return hasKind(evs[from:], CommandFinished) })
	s.waitReady()
	for _, e := range s.snapshot()[from:] {
		if e.Kind == CommandFinished {
			if e.ID != id() || e.ExitCode == nil || *e.ExitCode == 0 || e.DurationMs >= 5000 {
				s.fail("sleep 5 + Ctrl-C finished as %s", format(e))
			}
			if s.name != "fish" && *e.ExitCode != 130 {
				s.fail("sleep 5 + Ctrl-C: exit %d, want 130", *e.ExitCode)
			}
		}
	}
	nextID++

	// A forged D in the output does not finish the command.
	res := check(`printf '\033]633;D;0\007'; sleep 0.2; echo done`+"\r", "", 0)
	if !strings.Contains(res.output, "done") {
		s.fail("forged D: the finish came before the output %q", res.output)
	}

	// Title.
	res = check(`printf '\033]2;termhost-title\007'`+"\r", "", 0)
	s.waitFor("the title", func(evs []Event, _ string) bool { return hasEvent(evs, evTitle("termhost-title")) })

	// Multi-line command line.
	if s.name == "bash" {
		res = check("for i in 1 2\rdo echo x$i\rdone\r", "", 0)
		if !strings.Contains(res.exec.CommandLine, "for i in 1 2") || !strings.Contains(res.exec.CommandLine, "done") {
			s.fail("multi-line: command line %q", res.exec.CommandLine)
		}
	} else {
		res = check("\x1b[200~echo one\necho two\x1b[201~\r", "echo one\necho two", 0)
	}
	if !strings.Contains(res.output, "two") && !strings.Contains(res.output, "x2") {
		s.fail("multi-line: output %q", res.output)
	}

	// A character split across writes by the program is reassembled.
	if res := check(`printf '\303' ; sleep 0.1; printf '\251\n'`+"\r", "", 0); !strings.Contains(res.output, "é") {
		s.fail("split UTF-8: output %q", res.output)
	}

	// Alternate screen.
	if res := check(`printf '\033[?1049hALT\033[?1049l'`+"\r", "", 0); !strings.Contains(res.output, "\x1b[?1049hALT\x1b[?1049l") {
		s.fail("alternate screen: output %q", res.output)
	}

	// The environment has no AHPSH_ variable.
	// (fish prints the command as the title after preexec: it is in the output.)
	if res := check("env | grep -c ^AHPSH_\r", "env | grep -c ^AHPSH_", 1); !strings.Contains(res.output, "\r0\r\n") && !strings.HasPrefix(res.output, "0\r\n") {
		s.fail("environment leaks: %q", res.output)
	}
	if s.name == "zsh" {
		if res := check(`echo "zd=[$ZDOTDIR]"`+"\r", "", 0); !strings.Contains(res.output, "zd=[]") {
			s.fail("ZDOTDIR leaks: %q", res.output)
		}
	}

	// A nested bash is one command.
	from = len(s.snapshot())
	off = s.dataLen()
	s.send("bash --norc\r")
	s.waitFor("the nested bash prompt", func(_ []Event, data string) bool {
		return strings.Count(data[off:], "bash-") >= 1
	})
	s.send("echo inner\r")
	s.waitFor("the nested bash to run echo", func(_ []Event, data string) bool {
		return strings.Count(data[off:], "bash-") >= 2
	})
	s.send("exit\r")
	s.waitFor("the nested bash to finish", func(evs []Event, _ string) bool { return hasKind(evs[from:], CommandFinished) })
	s.waitReady()
	var cmds []string
	var out strings.Builder
	inCmd := false
	for _, e := range s.snapshot()[from:] {
		switch e.Kind {
		case CommandExecuted:
			cmds = append(cmds, e.CommandLine)
			inCmd = true
		case CommandFinished:
			inCmd = false
		case Data:
			if inCmd {
				out.WriteString(e.Text)
			}
		}
	}
	if len(cmds) != 1 || cmds[0] != "bash --norc" || !strings.Contains(out.String(), "inner") {
		s.fail("nested bash: commands %q, output %q", cmds, out.String())
	}
	nextID++

	// Lots of output.
	// (zsh prints its PROMPT_SP filler before precmd runs: it ends up
	// after the command's output.)
	if res := check("seq 1 200000\r", "seq 1 200000", 0); !strings.Contains(res.output, "\r\n199999\r\n200000\r\n") {
		tail := res.output
		if len(tail) > 300 {
			tail = tail[len(tail)-300:]
		}
		s.fail("seq: output ends %q", tail)
	}
}

// TestNonceLeavesNoTrace: once the shell is up, the nonce is nowhere a
// program of the same user could read it: not in the shell's initial
// environment (/proc/<pid>/environ keeps it after unset), not in a file
// (the script empties the one that handed it over; terminals deletes it,
// see TestNonceFileRemoved), not in a child's environment. Command
// detection still works.
func TestNonceLeavesNoTrace(t *testing.T) {
	for _, name := range []string{"bash", "zsh", "fish"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := startShell(t, name, shellSetup{})
			s.started()
			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", s.cmd.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(environ), s.nonce) {
				s.fail("/proc/<shell>/environ holds the nonce: %q", environ)
			}
			if fi, err := os.Lstat(s.nonceF); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
				s.fail("the nonce file %s: %v, %v; want it there (the server deletes it) and emptied", s.nonceF, fi, err)
			}
			err = filepath.WalkDir(s.scripts, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				if b, err := os.ReadFile(p); err != nil || strings.Contains(string(b), s.nonce) {
					s.fail("%s holds the nonce (%v)", p, err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// A child of the shell looks too; checkClean fails if the nonce
			// shows up in any output.
			res := s.runCommand("cat /proc/self/environ | tr '\\0' '\\n'; ls -a " + s.scripts + "\r")
			s.expectExit(res, "cat environ; ls", 0)
			if !strings.Contains(res.output, "HOME="+s.home) || !strings.Contains(res.output, "shellint-") {
				s.fail("the child's environment and listing: %q; want HOME and the scripts directory", res.output)
			}
			s.checkClean()
		})
	}
}

func hasKind(evs []Event, k Kind) bool {
	for _, e := range evs {
		if e.Kind == k {
			return true
		}
	}
	return false
}

// rcProbe records, from a user startup file, that it ran and what AHPSH_
// variables it saw, and prints a fake marker.
func rcProbe(tag string) string {
	return `echo sourced >> "$HOME/rc-` + tag + `"
env | grep AHPSH_ >> "$HOME/rc-env"
printf '\033]633;C\007\033]633;E;fake\007'
`
}
