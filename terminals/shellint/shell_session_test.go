package shellint

import (
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

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
)

// Real-shell tests: bash, zsh and fish run in a pty through Inject
// and a Processor; the tests type commands and assert the events. This file
// is their harness: a shell session in a pty and its waits; shell_test.go
// has the scenarios, shell_startup_test.go the user's startup files and
// options.

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
	// The deadline is for a shell that stopped making progress: a long
	// output (seq 1 200000) may take more than shellTimeout in all on a
	// loaded machine, and a test's -timeout bounds the whole.
	stalled := time.NewTimer(shellTimeout)
	defer stalled.Stop()
	seen := -1
	for {
		s.mu.Lock()
		ok := cond(s.events, s.data.String())
		progress := s.data.Len() + len(s.events)
		s.mu.Unlock()
		if ok {
			return
		}
		if progress != seen {
			seen = progress
			stalled.Reset(shellTimeout)
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
		case <-stalled.C:
			s.fail("nothing new for %v while waiting for %s", shellTimeout, what)
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
		return hasEvent(evs, evDetect()) && hasEvent(evs, evCwd(ahp.FileURI(s.work)))
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
	raw, err := s.pty.SyscallConn()
	if err != nil {
		s.t.Fatal(err)
	}
	// Polling a kernel state, not waiting for luck.
	if !poll.Eventually(shellTimeout, func() bool {
		var pgid int32
		var errno syscall.Errno
		_ = raw.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgid)))
		})
		if errno != 0 || int(pgid) == s.cmd.Process.Pid {
			return false
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pgid))
		return err == nil && strings.TrimSpace(string(b)) == comm
	}) {
		s.fail("%s never became the foreground process", comm)
	}
}

// idle waits until every thread of the shell is blocked in the kernel
// (wchan set), i.e. it finished reacting to earlier input and waits for
// more. fish 3.6 loses a SIGINT that arrives while its main thread is busy.
func (s *session) idle() {
	s.t.Helper()
	pid := s.cmd.Process.Pid
	// Polling a kernel state.
	if !poll.Eventually(shellTimeout, func() bool {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			s.t.Fatal(err)
		}
		for _, task := range tasks {
			w, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, task.Name()))
			if err != nil || string(w) == "0" || len(w) == 0 {
				return false
			}
		}
		return true
	}) {
		s.fail("the shell never went idle")
	}
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
