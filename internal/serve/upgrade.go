package serve

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/buildinfo"
	"github.com/termhost/termhost/internal/envflag"
	"github.com/termhost/termhost/internal/handover"
	"github.com/termhost/termhost/terminals"
	"github.com/termhost/termhost/terminals/recording"
)

// Upgrading without losing shells, in place. On SIGUSR2 the running server
// re-executes itself: the same process (same pid, parent, terminal,
// process group, so Ctrl-C and systemd see the same server) runs the binary
// at the path it was started from (read at start: after an upgrade
// /proc/self/exe names the deleted old file) with the same arguments.
//
//  1. Refused, serving on, when there is no new binary to run: the path
//     is not executable, or it is in Go's build cache ("go run", which
//     would run the same old build).
//  2. Probe without state: it runs the new binary as "termhost
//     handover-check <the same arguments>", which checks the flags as serve
//     would. A binary that does not start, is no termhost of this kind or
//     rejects the flags is refused here, before any client notices.
//  3. It stops accepting (the listener stays open: connections wait in its
//     backlog), closes its WebSockets with 1012 "service restart", pauses
//     its terminals (output waits in the ptys) and writes the hand-over
//     state — the hub (serverSeq, contents, replay ring), shell-integration
//     state, screen models, client records, the claim holders connected
//     before the close (only their claims stay held), owner token, and the
//     numbers of the descriptors kept — to a memory file.
//  4. Probe with state: the same, with that file: the new binary also
//     reads it and restores the hub into a scratch one. On failure the
//     terminals resume and the server serves on.
//  5. execve(2), with the listener, each pty master and a pidfd of each
//     shell no longer close-on-exec. The shells stay this process's
//     children. If execve itself fails, step 4's fallback applies.
//  6. The new program finds the state through $TERMHOST_HANDOVER_FD,
//     adopts the terminals and serves; it writes termhost.upgrade in the
//     state directory, which "termhost upgrade" waits for.
//
// What the probe cannot cover: a new program that fails after the execve
// (while adopting, or a crash at start) has no old one to fall back on:
// the process exits and its shells get SIGHUP. Recordings stop at an
// upgrade, also when it fails (their buffers are written before the exec).

// handoverTimeout bounds the probe.
const handoverTimeout = 30 * time.Second

// handoverFormat is the hand-over state's version: a binary that knows
// another refuses it in the probe.
const handoverFormat = 2

// handoverCheckOK is the probe's answer on success.
const handoverCheckOK = "termhost handover-check: ok"

// handoverMessage is the state a server leaves for the program it
// re-executes.
type handoverMessage struct {
	Format     int                     `json:"format"`
	From       string                  `json:"from"`      // the old program's version
	FromBuild  string                  `json:"fromBuild"` // and its build (buildinfo.This), to tell two of one version apart
	StoppedAt  int64                   `json:"stoppedAt"` // unix ms: when it stopped serving
	Terminals  terminals.Handover      `json:"terminals"`
	Clients    []handlers.ClientRecord `json:"clients"`
	OwnerToken string                  `json:"ownerToken"`
	Listener   int                     `json:"listener"` // descriptor
	FDs        []int                   `json:"fds"`      // per running terminal: pty master, pidfd
}

// upgradeResult is how an upgrade ended when it returns: refused before
// anything stopped (serve on as before), or failed after the pause (serve
// again on next), or err (cannot serve any more). A successful upgrade
// does not return.
type upgradeResult struct {
	next    *net.TCPListener
	clients []handlers.ClientRecord
	err     error
}

// upgrade re-executes this process with the binary at exe, handing it the
// listener and the terminals. It returns only if the upgrade did not happen.
// A SIGINT or SIGTERM meanwhile (ctx done) cancels it before the exec.
func upgrade(ctx context.Context, exe string, exeErr error, s *serving, m *terminals.Manager, setup serveSetup, log *slog.Logger) upgradeResult {
	log.Info("upgrade: checking the new binary", "exe", exe)
	err := upgradable(exe, exeErr)
	if err == nil {
		err = probe(exe, nil)
	}
	if err != nil {
		log.Error("upgrade refused, serving on", "err", err)
		writeUpgradeStatus(setup.stateDir, upgradeStatus{Error: "refused: " + err.Error()}, log)
		return upgradeResult{}
	}
	lnFile, err := s.ln.File() // a duplicate: outlives the server's Shutdown
	if err != nil {
		log.Error("upgrade refused, serving on", "err", fmt.Errorf("listener: %w", err))
		writeUpgradeStatus(setup.stateDir, upgradeStatus{Error: "refused: " + err.Error()}, log)
		return upgradeResult{}
	}
	defer lnFile.Close()
	stopped := time.Now()
	connected := m.ConnectedClients() // their claims stay held; the others' are nobody's
	s.stop(true)
	clients := s.srv.Clients()
	setup.audit.Sync() // the exec would lose what is still buffered (the disconnects just now)
	paused, err := m.Pause(connected)
	if err == nil {
		err = execSuccessor(ctx, exe, paused, handoverMessage{Format: handoverFormat, From: buildinfo.Release, FromBuild: buildinfo.This(), StoppedAt: stopped.UnixMilli(),
			Terminals: paused.State, Clients: clients, OwnerToken: setup.token, Listener: int(lnFile.Fd()), FDs: paused.FDs}, log)
	}
	// Only on failure: the exec replaced this program otherwise.
	if paused != nil {
		paused.Resume()
	}
	log.Error("upgrade failed, serving on", "err", err)
	writeUpgradeStatus(setup.stateDir, upgradeStatus{Error: err.Error()}, log)
	l, lerr := net.FileListener(lnFile)
	if lerr != nil {
		return upgradeResult{err: fmt.Errorf("upgrade failed (%v) and the listener is lost: %w", err, lerr)}
	}
	return upgradeResult{next: l.(*net.TCPListener), clients: clients}
}

// execSuccessor writes the state, probes exe with it and re-executes this
// process with exe; it returns only on failure.
func execSuccessor(ctx context.Context, exe string, p *terminals.Paused, msg handoverMessage, log *slog.Logger) error {
	state, err := handover.Write(msg)
	if err != nil {
		return err
	}
	defer state.Close()
	start := time.Now()
	if err := probe(exe, state); err != nil {
		return err
	}
	if ctx.Err() != nil { // stopping: the signal was for this program
		return errors.New("interrupted by a signal to stop")
	}
	log.Info("upgrade: re-executing in place", "exe", exe, "check", time.Since(start).Round(time.Millisecond),
		"terminals", len(msg.Terminals.Terminals))
	p.EndRecordings("recording stopped: the server was upgraded")
	return handover.Exec(exe, os.Args, state, append([]int{msg.Listener}, msg.FDs...))
}

// probe runs "exe handover-check" with this program's arguments, and the
// hand-over state unless nil.
func probe(exe string, state *os.File) error {
	if err := handover.Probe(exe, append([]string{"handover-check"}, os.Args[1:]...), state, handoverCheckOK, handoverTimeout); err != nil {
		return fmt.Errorf("the new binary failed its check: %w", err)
	}
	return nil
}

// upgradable says why exe cannot replace this program, if it cannot.
func upgradable(exe string, exeErr error) error {
	if exeErr != nil {
		return fmt.Errorf("no executable path: %w", exeErr)
	}
	if inGoBuildCache(exe) {
		return errGoRun
	}
	if err := unix.Access(exe, unix.X_OK); err != nil {
		return fmt.Errorf("%s: %w", exe, err)
	}
	return nil
}

var errGoRun = errors.New("this server was started with \"go run\": its binary is Go's own build, there is no new binary to hand over to. " +
	"Install termhost (go install ./cmd/termhost) and start it as \"termhost serve\" to upgrade it in place later; a \"go run\" server can only be restarted (its shells end)")

// inGoBuildCache reports whether path is a binary that "go run" built: in
// a go-build* temporary directory or in the build cache (…/go-build/…).
func inGoBuildCache(path string) bool {
	for _, dir := range strings.Split(filepath.Dir(path), string(filepath.Separator)) {
		if strings.HasPrefix(dir, "go-build") {
			return true
		}
	}
	return false
}

// takeOver adopts the terminals of msg (the state this process's previous
// program left) into m and returns the listener; setup gets the owner token.
func takeOver(msg handoverMessage, m *terminals.Manager, setup *serveSetup) (*net.TCPListener, error) {
	if msg.Format != handoverFormat {
		return nil, fmt.Errorf("hand-over state format %d, want %d", msg.Format, handoverFormat)
	}
	f := os.NewFile(uintptr(msg.Listener), "listener")
	l, err := net.FileListener(f)
	_ = f.Close()
	ln, ok := l.(*net.TCPListener)
	if err != nil || !ok {
		return nil, fmt.Errorf("listener: %w", err)
	}
	n, err := m.Adopt(msg.Terminals, msg.FDs)
	if err != nil {
		for _, fd := range msg.FDs[min(n, len(msg.FDs)):] {
			_ = unix.Close(fd)
		}
		_ = ln.Close()
		return nil, err
	}
	if msg.OwnerToken != "" {
		setup.token = msg.OwnerToken // a random one must stay what the browsers know
	}
	return ln, nil
}

// HandoverCheck is the probe: "termhost handover-check <serve's
// arguments>", with the state on $TERMHOST_HANDOVER_FD or without. It
// checks the flags as serve would and that the state restores, without
// side effects.
func HandoverCheck(args []string) int {
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	o := serveOptions{scrollback: 1 << 20, recordMax: recording.DefaultMax}
	if code, ok := envflag.ParseCommand(o.flags(), args, os.LookupEnv, os.Stderr, os.Stderr, serveAbout); !ok {
		return max(code, exitUsage)
	}
	err := func() error {
		if _, err := o.validate(); err != nil {
			return err
		}
		var msg handoverMessage
		if ok, err := handover.Inherited(&msg); err != nil || !ok {
			return err // no state: the flags were all to check
		}
		if msg.Format != handoverFormat {
			return fmt.Errorf("hand-over state format %d, this binary reads %d", msg.Format, handoverFormat)
		}
		return terminals.CheckHandover(msg.Terminals, len(msg.FDs), int(o.scrollback))
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "termhost handover-check: %v\n", err)
		return exitFail
	}
	fmt.Println(handoverCheckOK)
	return exitOK
}

// upgradeStatus is termhost.upgrade in the state directory: how the last
// upgrade ended, for "termhost upgrade".
type upgradeStatus struct {
	Pid     int    `json:"pid"`
	OK      bool   `json:"ok"`
	Version string `json:"version"`           // running now: its build (buildinfo.This)
	From    string `json:"from,omitempty"`    // before the upgrade: its build
	PauseMs int64  `json:"pauseMs,omitempty"` // from stop to serving again
	Error   string `json:"error,omitempty"`
}

const upgradeStatusName = "termhost.upgrade"

func writeUpgradeStatus(dir string, st upgradeStatus, log *slog.Logger) {
	st.Pid, st.Version = os.Getpid(), buildinfo.This()
	b, _ := json.Marshal(st)
	if err := writeFileAtomic(filepath.Join(dir, upgradeStatusName), b); err != nil {
		log.Warn("upgrade status", "err", err)
	}
}

// notifySystemd tells a Type=notify unit that this process is ready (at
// start, and again after an upgrade in place) and is the service's main
// process (it stays the same one). Without $NOTIFY_SOCKET it does nothing.
func notifySystemd(log *slog.Logger) {
	if _, err := daemon.SdNotify(false, fmt.Sprintf("%s\nMAINPID=%d", daemon.SdNotifyReady, os.Getpid())); err != nil {
		log.Warn("systemd notify", "err", err)
	}
}

const pidFileName = "termhost.pid"

// writePidFile records this server's pid in the state directory for
// "termhost upgrade" (and systemd's PIDFile=). The returned function removes
// it unless a successor has replaced it.
func writePidFile(dir string, log *slog.Logger) func() {
	path := filepath.Join(dir, pidFileName)
	pid := strconv.Itoa(os.Getpid())
	if err := writeFileAtomic(path, []byte(pid+"\n")); err != nil {
		log.Warn("pid file", "err", err)
		return func() {}
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == pid {
			_ = os.Remove(path)
		}
	}
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pid-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename: no such file
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

const upgradeAbout = `termhost upgrade: make the running "termhost serve" re-execute itself with
the termhost binary now at its path (after installing a new one), without
ending any shell: same process id, same terminal, clients reconnect at
once. Same as sending it SIGUSR2 (systemctl reload termhost). It waits for
the result; if the new binary fails its check, the old one serves on and
says why.`

// Upgrade is "termhost upgrade".
func Upgrade(args []string) int {
	fs := flag.NewFlagSet("upgrade", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "the server's --state-dir (default $XDG_STATE_HOME/termhost, else ~/.local/state/termhost)")
	pid := fs.Int("pid", 0, "the server's process id (default: read from termhost.pid in the state directory)")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the upgrade")
	fs.Usage = func() { fmt.Fprintln(fs.Output(), upgradeAbout); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	msg, err := runUpgrade(*stateDir, *pid, *timeout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "termhost upgrade: %v\n", err)
		return exitFail
	}
	fmt.Println(msg)
	return exitOK
}

// runUpgrade signals the server and waits for the status it writes.
func runUpgrade(stateDir string, pid int, timeout time.Duration) (string, error) {
	o := serveOptions{stateDir: stateDir}
	dir, err := o.resolveStateDir()
	if err != nil {
		return "", err
	}
	if pid == 0 {
		if pid, err = readPid(filepath.Join(dir, pidFileName)); err != nil {
			return "", fmt.Errorf("no running server found: %w (is termhost serve running with this --state-dir?)", err)
		}
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return "", fmt.Errorf("process %d: %w", pid, err)
	}
	pf := os.NewFile(uintptr(pidfd), "pidfd")
	defer pf.Close()
	// Say it here too, before anything happens: the server would refuse.
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && inGoBuildCache(exe) {
		return "", fmt.Errorf("process %d: %w", pid, errGoRun)
	}
	statusPath := filepath.Join(dir, upgradeStatusName)
	// One upgrade at a time: a SIGUSR2 while the server re-executes would
	// end it (its default action, until the new program handles it).
	lock, err := os.OpenFile(statusPath+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close() // releases the lock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	if err := os.Remove(statusPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := unix.PidfdSendSignal(pidfd, unix.SIGUSR2, nil, 0); err != nil {
		return "", fmt.Errorf("signal %d: %w", pid, err)
	}
	for deadline := time.Now().Add(timeout); ; {
		if b, err := os.ReadFile(statusPath); err == nil {
			var st upgradeStatus
			if err := json.Unmarshal(b, &st); err != nil {
				return "", fmt.Errorf("%s: %w", statusPath, err)
			}
			if !st.OK {
				return "", fmt.Errorf("process %d serves on without upgrading: %s", pid, st.Error)
			}
			return fmt.Sprintf("termhost upgraded in place: process %d now runs %s, was %s; clients were without service for %d ms",
				st.Pid, st.Version, st.From, st.PauseMs), nil
		}
		n, _ := unix.Poll([]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}, 50)
		if n > 0 {
			return "", fmt.Errorf("process %d exited during the upgrade (see its log)", pid)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("process %d gave no result within %v (see its log)", pid, timeout)
		}
	}
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
