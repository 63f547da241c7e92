package handlers_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
)

// integrationSeqs are the shell-integration sequences, which the server
// strips (ours carry the terminal's nonce): no client may ever see OSC 633,
// OSC 133, OSC 7 or OSC 1337;CurrentDir.
var integrationSeqs = regexp.MustCompile("\x1b\\](?:633;|133;|7;|1337;CurrentDir)[^\x07\x1b]*(?:\x07|\x1b\\\\)")

func forbidden(s string) string {
	for _, bad := range []string{"\x1b]633", "\x1b]133", "\x1b]7;", "1337;CurrentDir"} {
		if strings.Contains(s, bad) {
			return bad
		}
	}
	return ""
}

// shellPath finds a shell or fails, naming the package to install.
func shellPath(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: install the %s package (make test does this with apt-get)", name, name)
	}
	return p
}

// TestShellIntegrationOverWebSocket runs real-shell scenarios for bash, zsh
// and fish through the whole server, as a client that knows only AHP sees
// them.
func TestShellIntegrationOverWebSocket(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"bash", "zsh", "fish"} {
		t.Run(name, func(t *testing.T) { // not parallel: interrupts are timing-sensitive under load
			shell := shellPath(t, name)
			home := t.TempDir()
			var rawMu sync.Mutex
			var raw bytes.Buffer
			ts := newServer(t, func(tc *terminalsConfig, _ *handlersConfig) {
				tc.Shell, tc.ShellArgs, tc.ShellIntegration, tc.Cwd = shell, nil, true, home
				tc.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8",
					"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "HISTFILE=/dev/null"}
				tc.Tap = func(_ string, b []byte) { rawMu.Lock(); raw.Write(b); rawMu.Unlock() }
			})
			c := ts.dial(t)
			c.Initialize("1.0.0", "si")
			uri, snap := c.CreateTerminal("si", "si", nil)
			if st := snap.State.(ahp.TerminalState); st.SupportsCommandDetection == nil {
				c.WaitAction("detection", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalCommandDetectionAvailable })
			}
			if st := c.Subscribe(uri).State.(ahp.TerminalState); st.SupportsCommandDetection == nil || !*st.SupportsCommandDetection {
				t.Fatalf("snapshot after the first prompt lacks supportsCommandDetection: %+v", st)
			}

			run := func(line string) (ahp.Envelope, ahp.Envelope) {
				t.Helper()
				c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": line + "\r"})
				exec := c.WaitAction("commandExecuted "+line, func(e ahp.Envelope) bool {
					return e.Action.Type == ahp.TerminalCommandExecuted && e.Action.CommandLine != ""
				})
				if exec.Action.CommandLine != line {
					t.Errorf("commandLine %q, want %q", exec.Action.CommandLine, line)
				}
				fin := c.WaitAction("commandFinished "+line, func(e ahp.Envelope) bool {
					return e.Action.Type == ahp.TerminalCommandFinished && e.Action.CommandID == exec.Action.CommandID
				})
				if fin.Action.DurationMs == nil {
					t.Errorf("%s: no durationMs", line)
				}
				return exec, fin
			}
			code := func(e ahp.Envelope) int {
				if e.Action.ExitCode == nil {
					return -1
				}
				return *e.Action.ExitCode
			}
			for _, tc := range []struct {
				line string
				code int
			}{{"true", 0}, {"false", 1}, {"sh -c 'exit 7'", 7}} {
				if _, fin := run(tc.line); code(fin) != tc.code {
					t.Errorf("%s: exit code %d, want %d", tc.line, code(fin), tc.code)
				}
			}
			run("cd /tmp")
			c.WaitAction("cwd /tmp", func(e ahp.Envelope) bool {
				return e.Action.Type == ahp.TerminalCwdChanged && e.Action.Cwd == "file:///tmp"
			})

			// Empty Enter and Ctrl-C at the prompt are no commands.
			before := countType(c, ahp.TerminalCommandExecuted)
			// Each key waits for the shell's answer in its raw output: a shell
			// still handling the interrupt discards what is typed meanwhile, and a
			// shell merely descheduled (a busy machine) looks as quiet as one that
			// is done. The answer to Enter and Ctrl-C is a new prompt: a prompt end
			// marker on a later line (fish repaints the prompt it leaves on Enter,
			// and redraws it after Ctrl-C without a prompt start). Ctrl-C goes to a
			// typed line: fish redraws nothing for an empty one.
			rawSince := func(off int) []byte {
				rawMu.Lock()
				defer rawMu.Unlock()
				return bytes.Clone(raw.Bytes()[off:])
			}
			rawLen := func() int {
				rawMu.Lock()
				defer rawMu.Unlock()
				return raw.Len()
			}
			newPrompt := func(out []byte) bool {
				nl := bytes.IndexByte(out, '\n')
				return nl >= 0 && bytes.Contains(out[nl:], []byte("\x1b]633;B;"))
			}
			key := func(what, data string, answered func(out []byte) bool) {
				t.Helper()
				off := rawLen()
				c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": data})
				if !poll.Eventually(waitPrompt, func() bool { return answered(rawSince(off)) }) {
					t.Fatalf("no answer to %s; raw output ends %q", what, tail(string(rawSince(0))))
				}
			}
			key("Enter", "\r", newPrompt)
			key("a line", "echo disca''rded", func(out []byte) bool { return bytes.Contains(out, []byte("rded")) })
			// fish 3.6 under load once left a Ctrl-C unanswered for 20 s (a CI
			// run): its interrupt and its key binding for ^C race inside fish.
			// Pressing it again, as a person would, is harmless: another ^C at
			// the prompt is no command either, which is what this part checks.
			off := rawLen()
			answered := false
			for press := 0; press < 5 && !answered; press++ {
				c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "\x03"})
				answered = poll.Eventually(waitPrompt/5, func() bool { return newPrompt(rawSince(off)) })
			}
			if !answered {
				t.Fatalf("no answer to Ctrl-C; raw output ends %q", tail(string(rawSince(0))))
			}
			// Under load bash sometimes drops the first key after an interrupt
			// at the prompt; Ctrl-U is a
			// harmless first key.
			c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "\x15"})
			run("echo aft''er-2")
			if got := countType(c, ahp.TerminalCommandExecuted); got != before+1 {
				t.Errorf("empty Enter / Ctrl-C at the prompt produced %d phantom commands", got-before-1)
			}

			// Ctrl-C during a command ends it with a failure. The shell ignores
			// (fish) or takes (bash) an interrupt typed before it has given the
			// terminal to the job: wait until the job has it. The sleep outlasts
			// any wait, so only the interrupt can end it.
			c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "sleep 60\r"})
			sleep := c.WaitAction("sleep runs", func(e ahp.Envelope) bool {
				return e.Action.Type == ahp.TerminalCommandExecuted && e.Action.CommandLine == "sleep 60"
			})
			if !poll.Eventually(waitPrompt, func() bool { return foregroundJob("sleep", "60") }) {
				t.Fatal("sleep never became the terminal's foreground job")
			}
			c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "\x03"})
			fin := c.WaitAction("sleep interrupted", func(e ahp.Envelope) bool {
				return e.Action.Type == ahp.TerminalCommandFinished && e.Action.CommandID == sleep.Action.CommandID
			})
			if code(fin) == 0 || fin.Action.DurationMs == nil {
				t.Errorf("interrupted sleep: exit %d, durationMs %v", code(fin), fin.Action.DurationMs)
			}

			// A forged D printed by a command does not finish it.
			forge := `printf '\033]633;D;0\007'; sleep 0.5; echo forged-done`
			exec, fin2 := run(forge)
			out := outputBetween(c, uri, exec.ServerSeq, fin2.ServerSeq)
			if !strings.Contains(out, "forged-done") || code(fin2) != 0 {
				t.Errorf("forged D: output %q before the finish (exit %d); the command finished early", out, code(fin2))
			}

			// A title set by a program; a multi-line command; a nested shell;
			// the alternate screen in and out.
			run(`printf '\033]0;my-title\007'`)
			if !seen(c, func(e ahp.Envelope) bool {
				return e.Action.Type == ahp.TerminalTitleChanged && e.Action.Title == "my-title"
			}) {
				t.Error("no terminal/titleChanged for a title set by a program")
			}
			multi := "for i in 1 2; do echo m$i; done"
			if name == "fish" {
				multi = "for i in 1 2; echo m$i; end"
			}
			run(multi)
			c.WaitOutput(uri, "m2")
			c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "bash --norc --noprofile\r"})
			nested := c.WaitAction("nested shell", func(e ahp.Envelope) bool {
				return e.Action.Type == ahp.TerminalCommandExecuted && strings.HasPrefix(e.Action.CommandLine, "bash")
			})
			c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo inn''er-10\r"})
			c.WaitOutput(uri, "inner-10")
			c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "exit\r"})
			c.WaitAction("nested shell ends", func(e ahp.Envelope) bool {
				return e.Action.Type == ahp.TerminalCommandFinished && e.Action.CommandID == nested.Action.CommandID
			})
			run(`printf '\033[?1049halt-screen\033[?1049l'`)
			_, last := run("echo fin''ished")

			// No client ever saw an integration sequence, and the content
			// reconstructs the shell's raw output minus exactly those.
			for _, e := range c.Envelopes() {
				if bad := forbidden(e.Action.Data); bad != "" {
					t.Errorf("terminal/data %d contains %q", e.ServerSeq, bad)
				}
			}
			// The prompt after the last command may still be on its way:
			// wait until the snapshot has caught up with the raw output.
			var content strings.Builder
			var want string
			caughtUp := func() bool {
				snap = c.Subscribe(uri)
				content.Reset()
				for _, p := range snap.State.(ahp.TerminalState).Content {
					content.WriteString(p.Text())
				}
				rawMu.Lock()
				want = integrationSeqs.ReplaceAllString(raw.String(), "")
				rawMu.Unlock()
				return content.String() == want
			}
			poll.Eventually(5*time.Second, caughtUp) // the checks below report a mismatch
			if bad := forbidden(content.String()); bad != "" {
				t.Errorf("snapshot content contains %q", bad)
			}
			if content.String() != want {
				t.Errorf("content (%d bytes) differs from the raw output minus integration sequences (%d bytes)\n got: %q\nwant: %q",
					content.Len(), len(want), tail(content.String()), tail(want))
			}
			parts := 0
			for _, p := range snap.State.(ahp.TerminalState).Content {
				if p.Type == ahp.PartCommand {
					parts++
				}
			}
			if parts < 10 || last.ServerSeq == 0 {
				t.Errorf("%d command parts in the snapshot", parts)
			}
		})
	}
}

// waitPrompt bounds the wait for a shell's prompt or job: generous, as
// it is only reached when something is broken.
const waitPrompt = 20 * time.Second

// foregroundJob reports whether a process running argv, started by a shell
// this test process started, is its terminal's foreground process group:
// an interrupt typed now reaches it.
func foregroundJob(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline")); err != nil || string(b) != want {
			continue
		}
		job, ok := procStat(d.Name())
		if !ok || job.pgrp != job.tpgid {
			continue
		}
		if shell, ok := procStat(strconv.Itoa(job.ppid)); ok && shell.ppid == os.Getpid() {
			return true
		}
	}
	return false
}

// stat is what foregroundJob needs of /proc/<pid>/stat.
type stat struct{ ppid, pgrp, tpgid int }

func procStat(pid string) (stat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return stat{}, false
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid …; comm may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 6 {
		return stat{}, false
	}
	var st stat
	var errs [3]error
	st.ppid, errs[0] = strconv.Atoi(f[1])
	st.pgrp, errs[1] = strconv.Atoi(f[2])
	st.tpgid, errs[2] = strconv.Atoi(f[5])
	return st, errs[0] == nil && errs[1] == nil && errs[2] == nil
}

func seen(c *client, pred func(ahp.Envelope) bool) bool {
	for _, e := range c.Envelopes() {
		if pred(e) {
			return true
		}
	}
	return false
}

func countType(c *client, actionType string) int {
	n := 0
	for _, e := range c.Envelopes() {
		if e.Action.Type == actionType {
			n++
		}
	}
	return n
}

// outputBetween is the terminal/data of uri with from < serverSeq < to.
func outputBetween(c *client, uri string, from, to int64) string {
	var b strings.Builder
	for _, e := range c.Envelopes() {
		if e.Channel == uri && e.Action.Type == ahp.TerminalData && e.ServerSeq > from && e.ServerSeq < to {
			b.WriteString(e.Action.Data)
		}
	}
	return b.String()
}

func tail(s string) string { return s[max(0, len(s)-400):] }
