package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/handover"
	"github.com/termhost/termhost/terminals"
)

// Upgrading without losing shells. On SIGUSR2 the running server (the
// predecessor) starts the binary at the path it was started from (read at
// start: after an upgrade /proc/self/exe names the deleted old file) with
// the same arguments, and one end of a Unix socket pair:
//
//  1. successor → predecessor: hello, once its flags are checked and its
//     manager made. Until then nothing has stopped: a successor that does not
//     start or says nothing costs no client anything.
//  2. The predecessor stops accepting, closes its WebSockets with 1012
//     "service restart", pauses its terminals (output waits in the ptys) and
//     sends the listener, each pty master and a pidfd of each shell
//     (SCM_RIGHTS), then the hub's state (serverSeq, contents, replay ring),
//     the client records and the owner token.
//  3. successor → predecessor: ok, once it has adopted the terminals and
//     serves; the predecessor answers commit, forgets its terminals without
//     ending them and exits. Any failure before commit: the successor is
//     killed, the predecessor resumes its terminals and serves on, and logs
//     why. A successor that gets no commit leaves the terminals alone and
//     exits.
//
// The shells stay children of the predecessor; when it exits, init (or the
// service manager, a subreaper) reaps them. The successor sees a shell exit
// through its pidfd and reads the exit code from it (Linux 6.15 and later;
// earlier the code is unknown).

// handoverTimeout bounds each wait of a hand-over.
const handoverTimeout = 30 * time.Second

// handoverMessage is step 2's message.
type handoverMessage struct {
	Terminals  terminals.Handover      `json:"terminals"`
	Clients    []handlers.ClientRecord `json:"clients"`
	OwnerToken string                  `json:"ownerToken"`
}

// handoverReply is every other message: hello, ok or error, commit.
type handoverReply struct {
	Hello  string `json:"hello,omitempty"` // the successor's version
	OK     bool   `json:"ok,omitempty"`
	Commit bool   `json:"commit,omitempty"`
	Error  string `json:"error,omitempty"`
}

// upgradeResult is how a hand-over ended for the predecessor: handed over,
// refused before anything stopped (serve on as before), or aborted after
// the pause (serve again on next), or err (cannot serve any more).
type upgradeResult struct {
	handedOver bool
	next       *net.TCPListener
	clients    []handlers.ClientRecord
	err        error
}

// upgrade hands the server's listener and terminals to a new process.
func upgrade(exe string, exeErr error, s *serving, m *terminals.Manager, setup serveSetup, log *slog.Logger) upgradeResult {
	log.Info("upgrade: starting the successor", "exe", exe)
	if exeErr != nil {
		log.Error("upgrade refused, serving on: no executable path", "err", exeErr)
		return upgradeResult{}
	}
	child, err := startSuccessor(exe)
	if err != nil {
		log.Error("upgrade refused, serving on", "err", err)
		return upgradeResult{}
	}
	lnFile, err := s.ln.File() // a duplicate: outlives the server's Shutdown
	if err != nil {
		child.kill()
		log.Error("upgrade refused, serving on", "err", fmt.Errorf("listener: %w", err))
		return upgradeResult{}
	}
	defer lnFile.Close()
	s.stop(true)
	clients := s.srv.Clients()
	paused, err := m.Pause()
	if err == nil {
		err = child.handOver(paused, clients, setup.token, lnFile)
	}
	if err == nil {
		paused.Commit()
		log.Info("upgrade: handed over", "successor", child.cmd.Process.Pid)
		return upgradeResult{handedOver: true}
	}
	child.kill()
	if paused != nil {
		paused.Resume()
	}
	log.Error("upgrade failed, serving on", "err", err)
	l, lerr := net.FileListener(lnFile)
	if lerr != nil {
		return upgradeResult{err: fmt.Errorf("upgrade failed (%v) and the listener is lost: %w", err, lerr)}
	}
	return upgradeResult{next: l.(*net.TCPListener), clients: clients}
}

// successor is the new process, seen from the predecessor.
type successor struct {
	cmd    *exec.Cmd
	conn   *net.UnixConn
	exited chan struct{}
}

// startSuccessor starts exe with this process's arguments and waits for its
// hello.
func startSuccessor(exe string) (*successor, error) {
	conn, theirs, err := handover.Pair()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{theirs} // fd 3
	cmd.Env = append(os.Environ(), handover.EnvFD+"=3")
	err = cmd.Start()
	_ = theirs.Close()
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	c := &successor{cmd: cmd, conn: conn, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.exited) }()
	var hello handoverReply
	err = c.read(&hello)
	if err == nil && hello.Hello == "" {
		err = fmt.Errorf("successor said %q", hello.Error)
	}
	if err != nil {
		c.kill()
		return nil, fmt.Errorf("successor: %w", err)
	}
	return c, nil
}

func (c *successor) read(v *handoverReply) error {
	_ = c.conn.SetReadDeadline(time.Now().Add(handoverTimeout))
	return handover.ReadJSON(c.conn, v)
}

// handOver is step 2 and 3 for the predecessor.
func (c *successor) handOver(p *terminals.Paused, clients []handlers.ClientRecord, token string, ln *os.File) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(handoverTimeout))
	if err := handover.WriteFDs(c.conn, append([]int{int(ln.Fd())}, p.FDs...)); err != nil {
		return err
	}
	msg := handoverMessage{Terminals: p.State, Clients: clients, OwnerToken: token}
	if err := handover.WriteJSON(c.conn, msg); err != nil {
		return err
	}
	var reply handoverReply
	if err := c.read(&reply); err != nil {
		return fmt.Errorf("successor: %w", err)
	}
	if !reply.OK {
		return fmt.Errorf("successor: %s", reply.Error)
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(handoverTimeout))
	return handover.WriteJSON(c.conn, handoverReply{Commit: true})
}

// kill ends a successor that has not taken over (it never ends a shell: it
// only stopped reading them).
func (c *successor) kill() {
	_ = c.conn.Close()
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// predecessor is the old process, seen from the successor.
type predecessor struct{ conn *net.UnixConn }

// takeOver is step 1 and 2 for the successor: it adopts the terminals into
// m and returns the listener and the client records; setup gets the
// predecessor's owner token. On error the terminals are left running.
func (p *predecessor) takeOver(m *terminals.Manager, setup *serveSetup) (*net.TCPListener, []handlers.ClientRecord, error) {
	ln, msg, err := p.receive(m)
	if err != nil {
		m.Abandon()
		_ = handover.WriteJSON(p.conn, handoverReply{Error: err.Error()})
		_ = p.conn.Close()
		return nil, nil, err
	}
	if msg.OwnerToken != "" {
		setup.token = msg.OwnerToken // a random one must stay what the browsers know
	}
	return ln, msg.Clients, nil
}

func (p *predecessor) receive(m *terminals.Manager) (*net.TCPListener, handoverMessage, error) {
	var msg handoverMessage
	_ = p.conn.SetDeadline(time.Now().Add(handoverTimeout))
	if err := handover.WriteJSON(p.conn, handoverReply{Hello: version}); err != nil {
		return nil, msg, err
	}
	fds, err := handover.ReadFDs(p.conn)
	if err != nil {
		return nil, msg, err
	}
	closeFrom := func(i int) {
		for _, fd := range fds[i:] {
			_ = unix.Close(fd)
		}
	}
	if err := handover.ReadJSON(p.conn, &msg); err != nil || len(fds) == 0 {
		closeFrom(0)
		return nil, msg, fmt.Errorf("hand-over message: %w (%d descriptors)", err, len(fds))
	}
	f := os.NewFile(uintptr(fds[0]), "listener")
	l, err := net.FileListener(f)
	_ = f.Close()
	ln, ok := l.(*net.TCPListener)
	if err != nil || !ok {
		closeFrom(1)
		return nil, msg, fmt.Errorf("listener: %w", err)
	}
	n, err := m.Adopt(msg.Terminals, fds[1:])
	if err != nil {
		closeFrom(1 + n)
		_ = ln.Close()
		return nil, msg, err
	}
	return ln, msg, nil
}

// reportReady is step 3 for the successor: ok, then the predecessor's
// commit. An error means the predecessor serves on.
func (p *predecessor) reportReady() error {
	defer p.conn.Close()
	_ = p.conn.SetDeadline(time.Now().Add(handoverTimeout))
	if err := handover.WriteJSON(p.conn, handoverReply{OK: true}); err != nil {
		return err
	}
	var reply handoverReply
	if err := handover.ReadJSON(p.conn, &reply); err != nil {
		return err
	}
	if !reply.Commit {
		return errors.New("no commit")
	}
	return nil
}

// notifySystemd tells a Type=notify unit that this process is ready and is
// the service's main process (after a hand-over it is a new one). Without
// $NOTIFY_SOCKET it does nothing.
func notifySystemd(log *slog.Logger) {
	// MAINPID tells systemd which process it now supervises after a hand-over.
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

const upgradeAbout = `termhost upgrade: make the running "termhost serve" hand its terminals to
the termhost binary now at its path (after installing a new one), without
ending any shell. Same as sending it SIGUSR2 (systemctl reload termhost).
It waits for the old process to exit; if the hand-over fails, the old one
serves on and logs why.`

// upgradeCommand is "termhost upgrade".
func upgradeCommand(args []string) int {
	fs := flag.NewFlagSet("upgrade", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "the server's --state-dir (default $XDG_STATE_HOME/termhost, else ~/.local/state/termhost)")
	pid := fs.Int("pid", 0, "the server's process id (default: read from termhost.pid in the state directory)")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the hand-over")
	fs.Usage = func() { fmt.Fprintln(fs.Output(), upgradeAbout); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if err := runUpgrade(*stateDir, *pid, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "termhost upgrade: %v\n", err)
		return exitFail
	}
	return exitOK
}

func runUpgrade(stateDir string, pid int, timeout time.Duration) error {
	o := serveOptions{stateDir: stateDir}
	dir, err := o.resolveStateDir()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, pidFileName)
	if pid == 0 {
		if pid, err = readPid(path); err != nil {
			return fmt.Errorf("no running server found: %w (is termhost serve running with this --state-dir?)", err)
		}
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	pf := os.NewFile(uintptr(pidfd), "pidfd")
	defer pf.Close()
	if err := unix.PidfdSendSignal(pidfd, unix.SIGUSR2, nil, 0); err != nil {
		return fmt.Errorf("signal %d: %w", pid, err)
	}
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(timeout.Milliseconds()))
	if err != nil && !errors.Is(err, syscall.EINTR) {
		return fmt.Errorf("wait for %d: %w", pid, err)
	}
	if n == 0 {
		return fmt.Errorf("process %d still serves after %v: the hand-over failed or is slow, see its log", pid, timeout)
	}
	// The old process exits once the successor has committed; the successor
	// writes its pid file just after, so give it a moment.
	next, deadline := 0, time.Now().Add(5*time.Second)
	for {
		if next, err = readPid(path); err == nil && next != pid && syscall.Kill(next, 0) == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d exited without a successor (see its log)", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Printf("termhost upgraded: process %d took over from %d\n", next, pid)
	return nil
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
