package shellint

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"
)

// Real-shell tests (§10.7): bash, zsh and fish run in a pty through Inject
// and a Processor; the tests type commands and assert the events.

// shellTimeout bounds every wait. It is generous: the machine may be loaded.
const shellTimeout = 30 * time.Second

// promptMark is the prompt the tests configure in the user's startup
// files. A prompt is printed once the line editor is ready, including its
// signal handlers (readline announces bracketed paste before installing
// them, so a Ctrl-C sent on that announcement can be lost).
const promptMark = "RDY> "

// promptSetup sets promptMark for each shell, in the file it goes in.
var promptSetup = map[string][]struct{ file, code string }{
	"bash": {{".bashrc", "PS1='RDY> '\n"}, {".bash_profile", "PS1='RDY> '\n"}},
	"zsh":  {{".zshrc", "PS1='RDY> '\n"}},
	"fish": {{".config/fish/config.fish", "function fish_prompt; printf 'RDY> '; end\n"}},
}

var shellPackages = map[string]string{"bash": "bash", "zsh": "zsh", "fish": "fish"}

type session struct {
	t       *testing.T
	name    string
	cmd     *exec.Cmd
	pty     *os.File
	home    string
	work    string
	nonce   string
	scripts string // the private directory given to Inject
	nonceF  string // the file that handed the nonce over

	mu      sync.Mutex
	events  []Event
	data    strings.Builder // all data, for readiness and dumps
	mode    Mode
	maxHeld int // most bytes the processor held between reads
	notify  chan struct{}
	done    chan struct{}

	ready int // ready marks consumed so far
}

type shellSetup struct {
	args  []string          // extra shell args (login tests)
	files map[string]string // files to create under HOME
	env   []string          // extra environment; "{HOME}" is replaced
}

// findShell returns the shell's path or fails naming the package to install.
func findShell(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (install the Debian/Ubuntu package %q, e.g. apt-get install -y %s): %v",
			name, shellPackages[name], shellPackages[name], err)
	}
	return path
}

func startShell(t *testing.T, name string, setup shellSetup) *session {
	t.Helper()
	path := findShell(t, name)
	s := &session{
		t: t, name: name,
		home:   t.TempDir(),
		work:   t.TempDir(),
		notify: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	files := map[string]string{}
	for rel, content := range setup.files {
		files[rel] = content
	}
	for _, ps := range promptSetup[name] {
		files[ps.file] += ps.code
	}
	if name == "fish" {
		// A first fish start in a fresh HOME generates completions from
		// every man page in the background, which can hold up its prompts
		// for many seconds; an existing directory skips it.
		if err := os.MkdirAll(filepath.Join(s.home, ".local/share/fish/generated_completions"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for rel, content := range files {
		p := filepath.Join(s.home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.home,
		"USER=termhost",
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"AHPSH_NONCE=leaked-from-server", // must be replaced
	}
	for _, kv := range setup.env {
		env = append(env, strings.ReplaceAll(kv, "{HOME}", s.home))
	}
	scriptDir := t.TempDir()
	if err := os.Chmod(scriptDir, 0o700); err != nil {
		t.Fatal(err)
	}
	inj, err := Inject(scriptDir, path, setup.args, env)
	if err != nil {
		t.Fatalf("Inject(%q): %v", path, err)
	}
	if inj.Mode != Pending || len(inj.Nonce) != 32 {
		t.Fatalf("Inject(%q) = mode %v nonce %q, want pending with a 32-char nonce", path, inj.Mode, inj.Nonce)
	}
	s.nonce, s.scripts, s.nonceF = inj.Nonce, scriptDir, inj.NonceFile
	s.cmd = exec.Command(inj.Argv[0], inj.Argv[1:]...)
	s.cmd.Env = inj.Env
	s.cmd.Dir = s.work
	s.pty, err = pty.StartWithSize(s.cmd, &pty.Winsize{Rows: 50, Cols: 250})
	if err != nil {
		t.Fatalf("start %v: %v", inj.Argv, err)
	}
	p := NewProcessor(Options{Nonce: inj.Nonce, Mode: inj.Mode})
	go s.read(p)
	t.Cleanup(s.stop)
	return s
}

// read is the pty owner: it feeds the Processor and records events.
func (s *session) read(p *Processor) {
	defer close(s.done)
	record := func(e Event) {
		s.events = append(s.events, e)
		if e.Kind == Data {
			s.data.WriteString(e.Text)
		}
	}
	buf := make([]byte, 32*1024)
	for {
		n, err := s.pty.Read(buf)
		s.mu.Lock()
		p.Write(buf[:n], record)
		if err != nil {
			p.Close(record)
		}
		s.mode = p.Mode()
		s.maxHeld = max(s.maxHeld, p.held())
		s.mu.Unlock()
		select {
		case s.notify <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

func (s *session) stop() {
	if s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) // the shell's whole session
		s.cmd.Wait()
	}
	s.pty.Close()
	select {
	case <-s.done:
	case <-time.After(shellTimeout):
		s.t.Errorf("%s: pty reader did not stop", s.name)
	}
}

func (s *session) send(keys string) {
	s.t.Helper()
	if _, err := s.pty.Write([]byte(keys)); err != nil {
		s.t.Fatalf("%s: write %q: %v", s.name, keys, err)
	}
}

// waitFor waits until cond holds on the events so far.
func (s *session) waitFor(what string, cond func(evs []Event, data string) bool) {
	s.t.Helper()
	deadline := time.After(shellTimeout)
	for {
		s.mu.Lock()
		ok := cond(s.events, s.data.String())
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.notify:
		case <-s.done:
			s.mu.Lock()
			ok := cond(s.events, s.data.String())
			s.mu.Unlock()
			if !ok {
				s.fail("the shell exited while waiting for %s", what)
			}
			return
		case <-deadline:
			s.fail("timed out after %v waiting for %s", shellTimeout, what)
		}
	}
}

func (s *session) fail(format string, args ...any) {
	s.t.Helper()
	s.mu.Lock()
	evs := normalize(s.events, true)
	for i, e := range evs {
		if len(e) > 300 {
			evs[i] = e[:150] + "…" + e[len(e)-150:]
		}
	}
	data := s.data.String()
	s.mu.Unlock()
	if len(data) > 4000 {
		data = "…" + data[len(data)-4000:]
	}
	s.t.Fatalf("%s: %s\nevents: %v\noutput tail: %q", s.name, fmt.Sprintf(format, args...), evs, data)
}

func (s *session) dataLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data.Len()
}

func (s *session) snapshot() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// waitReady waits for the next prompt.
func (s *session) waitReady() {
	s.t.Helper()
	want := s.ready + 1
	s.waitFor("a prompt", func(_ []Event, data string) bool { return strings.Count(data, promptMark) >= want })
	s.mu.Lock()
	s.ready = strings.Count(s.data.String(), promptMark)
	s.mu.Unlock()
}

// started waits for detection and the first prompt.
func (s *session) started() {
	s.t.Helper()
	s.waitFor("detection and the start cwd", func(evs []Event, _ string) bool {
		return hasEvent(evs, evDetect()) && hasEvent(evs, evCwd(FileURI(s.work)))
	})
	s.waitReady()
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	if mode != Strict {
		s.fail("mode after the first prompt is %v, want strict", mode)
	}
}

func hasEvent(evs []Event, want Event) bool {
	for _, e := range evs {
		if e.Kind == want.Kind && e.Cwd == want.Cwd && e.Title == want.Title {
			return true
		}
	}
	return false
}

// cmdResult is one command as seen in the events.
type cmdResult struct {
	exec   Event
	fin    Event
	output string // data between exec and fin
	after  []Event
}

// runCommand types keys (ending in \r), waits for exactly one command to
// start and finish and for the next prompt, and returns it.
func (s *session) runCommand(keys string) cmdResult {
	s.t.Helper()
	from := len(s.snapshot())
	s.send(keys)
	var res cmdResult
	split := func(evs []Event) bool {
		res = cmdResult{}
		var out strings.Builder
		state := 0
		for _, e := range evs[from:] {
			switch {
			case state == 0 && e.Kind == CommandExecuted:
				res.exec, state = e, 1
			case state == 1 && e.Kind == Data:
				out.WriteString(e.Text)
			case state == 1 && e.Kind == CommandFinished:
				res.fin, state = e, 2
			case state == 2:
				res.after = append(res.after, e)
			}
		}
		res.output = out.String()
		return state == 2
	}
	s.waitFor(fmt.Sprintf("the command %q to finish", keys), func(evs []Event, _ string) bool { return split(evs) })
	s.waitReady()
	evs := s.snapshot()
	split(evs)
	evs = evs[from:]
	var n int
	for _, e := range evs {
		if e.Kind == CommandExecuted {
			n++
		}
	}
	if n != 1 {
		s.fail("typing %q gave %d commands, want 1", keys, n)
	}
	if res.fin.ID != res.exec.ID {
		s.fail("typing %q: finished %s, started %s", keys, res.fin.ID, res.exec.ID)
	}
	if res.fin.DurationMs < 0 {
		s.fail("typing %q: negative duration %d", keys, res.fin.DurationMs)
	}
	return res
}

func (s *session) expectExit(res cmdResult, keys string, want int) {
	s.t.Helper()
	if res.fin.ExitCode == nil || *res.fin.ExitCode != want {
		s.fail("typing %q: exit code %v, want %d", keys, fmtPtr(res.fin.ExitCode), want)
	}
}

// noCommand types keys and checks that no command is reported by the next
// prompt.
func (s *session) noCommand(keys string) {
	s.t.Helper()
	from := len(s.snapshot())
	s.idle()
	s.send(keys)
	s.waitReady()
	for _, e := range s.snapshot()[from:] {
		if e.Kind == CommandExecuted || e.Kind == CommandFinished {
			s.fail("typing %q reported %s", keys, format(e))
		}
	}
}

// foreground waits until the terminal's foreground process is comm.
func (s *session) foreground(comm string) {
	s.t.Helper()
	deadline := time.Now().Add(shellTimeout)
	for time.Now().Before(deadline) {
		var pgid int32
		var errno syscall.Errno
		raw, err := s.pty.SyscallConn()
		if err != nil {
			s.t.Fatal(err)
		}
		raw.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgid)))
		})
		if errno == 0 && int(pgid) != s.cmd.Process.Pid {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pgid)); err == nil && strings.TrimSpace(string(b)) == comm {
				return
			}
		}
		time.Sleep(10 * time.Millisecond) // polling a kernel state, not waiting for luck
	}
	s.fail("%s never became the foreground process", comm)
}

// idle waits until every thread of the shell is blocked in the kernel
// (wchan set), i.e. it finished reacting to earlier input and waits for
// more. fish 3.6 loses a SIGINT that arrives while its main thread is busy.
func (s *session) idle() {
	s.t.Helper()
	pid := s.cmd.Process.Pid
	deadline := time.Now().Add(shellTimeout)
	for time.Now().Before(deadline) {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			s.t.Fatal(err)
		}
		blocked := true
		for _, task := range tasks {
			w, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, task.Name()))
			if err != nil || string(w) == "0" || len(w) == 0 {
				blocked = false
				break
			}
		}
		if blocked {
			return
		}
		time.Sleep(5 * time.Millisecond) // polling a kernel state
	}
	s.fail("the shell never went idle")
}

// checkClean asserts that no data event carried a shell-integration marker
// and that the processor's memory stayed bounded.
func (s *session) checkClean() {
	s.t.Helper()
	s.mu.Lock()
	held := s.maxHeld
	s.mu.Unlock()
	if held > capMarker+64 {
		s.fail("the processor held %d bytes between reads", held)
	}
	for _, e := range s.snapshot() {
		if e.Kind != Data {
			continue
		}
		for _, bad := range []string{"\x1b]633", "\x1b]133", "\x1b]7;", "1337;CurrentDir", s.nonce} {
			if strings.Contains(e.Text, bad) {
				s.fail("data event %q contains %q", e.Text, bad)
			}
		}
	}
}

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
// environment (/proc/<pid>/environ keeps it after unset), not in a file,
// not in a child's environment. Command detection still works.
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
			if _, err := os.Lstat(s.nonceF); !errors.Is(err, os.ErrNotExist) {
				s.fail("the nonce file %s is still there (%v)", s.nonceF, err)
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
			if !strings.Contains(res.output, "HOME="+s.home) || !strings.Contains(res.output, "shellint-") || strings.Contains(res.output, "nonce-") {
				s.fail("the child's environment and listing: %q; want HOME, the scripts directory and no nonce file", res.output)
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

// TestUserStartupFiles: the user's files still run, never see the nonce,
// and a fake marker they print creates no command (§10.7 items 12, 13).
func TestUserStartupFiles(t *testing.T) {
	tests := []struct {
		shell string
		args  []string
		files map[string]string
		want  []string // rc-<tag> files that must exist
		not   []string // rc-<tag> files that must not exist
		probe string   // command printing "login-yes" for login shells
	}{
		{shell: "bash", files: map[string]string{".bashrc": rcProbe("bashrc"), ".bash_profile": rcProbe("profile")}, want: []string{"bashrc"}, not: []string{"profile"}},
		{shell: "bash", args: []string{"-l"}, files: map[string]string{".bashrc": rcProbe("bashrc"), ".bash_profile": rcProbe("profile")}, want: []string{"profile"}, not: []string{"bashrc"}},
		{shell: "zsh", files: map[string]string{".zshenv": rcProbe("zshenv"), ".zshrc": rcProbe("zshrc"), ".zprofile": rcProbe("zprofile"), ".zlogin": rcProbe("zlogin")}, want: []string{"zshenv", "zshrc"}, not: []string{"zprofile", "zlogin"}},
		{shell: "zsh", args: []string{"-l"}, files: map[string]string{".zshenv": rcProbe("zshenv"), ".zshrc": rcProbe("zshrc"), ".zprofile": rcProbe("zprofile"), ".zlogin": rcProbe("zlogin")}, want: []string{"zshenv", "zprofile", "zshrc", "zlogin"}, probe: `[[ -o login ]] && echo login-yes`},
		{shell: "fish", files: map[string]string{".config/fish/config.fish": fishProbe}, want: []string{"config"}},
		{shell: "fish", args: []string{"-l"}, files: map[string]string{".config/fish/config.fish": fishProbe}, want: []string{"config"}, probe: `status is-login; and echo login-yes`},
	}
	for _, tc := range tests {
		t.Run(tc.shell+strings.Join(tc.args, ""), func(t *testing.T) {
			t.Parallel()
			s := startShell(t, tc.shell, shellSetup{args: tc.args, files: tc.files})
			s.started()
			for _, tag := range tc.want {
				if _, err := os.Stat(filepath.Join(s.home, "rc-"+tag)); err != nil {
					s.fail("user file %s was not sourced: %v", tag, err)
				}
			}
			for _, tag := range tc.not {
				if _, err := os.Stat(filepath.Join(s.home, "rc-"+tag)); !errors.Is(err, os.ErrNotExist) {
					s.fail("user file %s was sourced, want not: %v", tag, err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(s.home, "rc-env")); err != nil || len(b) != 0 {
				s.fail("user files saw AHPSH_ variables: %q (err %v)", b, err)
			}
			if cmds := countKind(s.snapshot(), CommandExecuted); cmds != 0 {
				s.fail("fake markers from user files created %d commands", cmds)
			}
			keys := "true\r"
			if tc.probe != "" {
				keys = tc.probe + "\r"
			}
			res := s.runCommand(keys)
			if res.exec.ID != "cmd-1" {
				s.fail("first command has id %s, want cmd-1", res.exec.ID)
			}
			if tc.probe != "" && !strings.Contains(res.output, "login-yes") {
				s.fail("not a login shell: %q", res.output)
			}
			s.checkClean()
		})
	}
}

const fishProbe = `echo sourced >> "$HOME/rc-config"
env | grep AHPSH_ >> "$HOME/rc-env"
printf '\e]633;C\a\e]633;E;fake\a'
`

func countKind(evs []Event, k Kind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// TestShellOptions covers the user's own hooks and options surviving the
// injection: bash's DEBUG trap and PROMPT_COMMAND, history suppression,
// bash-preexec, and zsh with the user's ZDOTDIR.
func TestShellOptions(t *testing.T) {
	type probe struct {
		keys, line, wantOut string
		notOut              string
		noWait              bool // only wait for the next prompt
		anyID               bool // the id may have skipped
	}
	tests := []struct {
		name   string
		shell  string
		setup  shellSetup
		probes []probe
	}{
		{
			name:  "bash user hooks and no history",
			shell: "bash",
			setup: shellSetup{
				env: []string{"AHPSH_NO_HISTORY=1"},
				files: map[string]string{".bashrc": "trap 'userdbg=1' DEBUG\n" +
					"PROMPT_COMMAND='pc_ran=$((pc_ran+1))'\n"},
			},
			probes: []probe{
				{keys: `echo "ud=$userdbg pc=$((pc_ran>0)) hc=$HISTCONTROL"`, wantOut: "ud=1 pc=1 hc=ignorespace"},
				{keys: " echo secret", line: "echo secret", wantOut: "secret"},
				{keys: "true", line: "true"},
				// An entry put in front of our first prompt hook is moved
				// behind it, so it is not reported as a command.
				{keys: `PROMPT_COMMAND=("front=1" "${PROMPT_COMMAND[@]}")`, line: `PROMPT_COMMAND=("front=1" "${PROMPT_COMMAND[@]}")`},
				{keys: "true", line: "true"},
				{keys: `echo "front=$front first=${PROMPT_COMMAND[0]}"`, wantOut: "front=1 first=__ahpsh_precmd"},
				// Replacing PROMPT_COMMAND loses that prompt's finish; the
				// hooks come back for the next one.
				{keys: `PROMPT_COMMAND="front=2"`, noWait: true},
				{keys: `true`, noWait: true},
				{keys: "echo healed", line: "echo healed", wantOut: "healed", anyID: true},
			},
		},
		{
			name:  "bash with bash-preexec",
			shell: "bash",
			setup: shellSetup{files: map[string]string{".bashrc": bashPreexecShim}},
			probes: []probe{
				{keys: "true", line: "true"},
				{keys: "echo one two", line: "echo one two", wantOut: "one two"},
				// Registered in its arrays; its DEBUG trap left alone.
				{keys: `[[ ${precmd_functions[0]} == __ahpsh_precmd ]] && trap -p DEBUG`, wantOut: "trap -- '__bp_preexec_invoke_exec' DEBUG"},
				{keys: "", line: ""},
				{keys: "false", line: "false"},
			},
		},
		{
			name:  "zsh with the user's ZDOTDIR and no history",
			shell: "zsh",
			setup: shellSetup{
				env: []string{"ZDOTDIR={HOME}/zd", "AHPSH_NO_HISTORY=1"},
				files: map[string]string{
					"zd/.zshrc":  "PS1='RDY> '\nzdrc=yes\n",
					"zd/.zshenv": "zdenv=yes\n",
				},
			},
			probes: []probe{
				{keys: `[[ -o histignorespace ]] && echo "his=yes rc=$zdrc env=$zdenv zd=$ZDOTDIR"`, wantOut: "his=yes rc=yes env=yes zd=/"},
				// A hook put in front of ours is moved behind it: its
				// output is not the next command's.
				{keys: `front() { echo FRONT-HOOK }; precmd_functions=(front $precmd_functions)`, anyID: true},
				{keys: `echo "first=$precmd_functions[1] zd=$ZDOTDIR"`, wantOut: "first=__ahpsh_precmd", notOut: "FRONT-HOOK"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startShell(t, tc.shell, tc.setup)
			s.started()
			id := 1
			for _, p := range tc.probes {
				if p.keys == "" {
					s.noCommand("\r")
					continue
				}
				if p.noWait {
					s.send(p.keys + "\r")
					s.waitReady()
					continue
				}
				res := s.runCommand(p.keys + "\r")
				if want := fmt.Sprintf("cmd-%d", id); res.exec.ID != want && !p.anyID {
					s.fail("%q: id %s, want %s", p.keys, res.exec.ID, want)
				}
				id++
				if p.line != "" && res.exec.CommandLine != p.line {
					s.fail("%q: command line %q, want %q", p.keys, res.exec.CommandLine, p.line)
				}
				if !strings.Contains(res.output, p.wantOut) {
					s.fail("%q: output %q, want it to contain %q", p.keys, res.output, p.wantOut)
				}
				if p.notOut != "" && strings.Contains(res.output, p.notOut) {
					s.fail("%q: output %q contains %q", p.keys, res.output, p.notOut)
				}
				if tc.shell == "zsh" && !strings.Contains(res.output, "zd="+s.home+"/zd") && p.wantOut != "" {
					s.fail("%q: ZDOTDIR is not the user's: %q", p.keys, res.output)
				}
			}
			s.checkClean()
		})
	}
}

// bashPreexecShim mimics the contract of bash-preexec (rcaloras): it owns
// PROMPT_COMMAND and the DEBUG trap, calls precmd_functions with $? set and
// preexec_functions with the command line.
const bashPreexecShim = `PS1='RDY> '
bash_preexec_imported=defined
precmd_functions=()
preexec_functions=()
__bp_ret() { return "$1"; }
__bp_precmd_invoke_cmd() {
	local s=$? f
	for f in "${precmd_functions[@]}"; do __bp_ret "$s"; "$f"; done
}
__bp_interactive_mode() { __bp_mode=on; }
__bp_preexec_invoke_exec() {
	[[ -n ${__bp_mode-} ]] || return 0
	__bp_mode=
	case $BASH_COMMAND in __bp_*) return 0 ;; esac
	local c f
	c=$(HISTTIMEFORMAT= builtin history 1)
	c=${c#*[0-9]  }
	for f in "${preexec_functions[@]}"; do "$f" "$c"; done
}
PROMPT_COMMAND=$'__bp_precmd_invoke_cmd\n__bp_interactive_mode'
trap '__bp_preexec_invoke_exec' DEBUG
`
