package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// rawShell is the baseline: the same shell and workload in a pty that this
// process reads directly, with no server in between.
type rawShell struct {
	cmd *exec.Cmd
	f   *os.File
	buf []byte
}

func startRaw(sh shellSpec) (*rawShell, error) { return startRawSized(sh, 120, 40) }

// startRawSized starts sh in a pty of cols × rows (120 × 40 when either is
// not positive).
func startRawSized(sh shellSpec, cols, rows int) (*rawShell, error) {
	if cols <= 0 || rows <= 0 {
		cols, rows = 120, 40
	}
	cmd := exec.Command(sh.argv[0], sh.argv[1:]...)
	cmd.Env, cmd.Dir = sh.env, sh.dir
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(min(cols, 1000)), Rows: uint16(min(rows, 1000))})
	if err != nil {
		return nil, fmt.Errorf("raw pty: %w", err)
	}
	// pty.Start leaves the master blocking (it calls Fd); make it
	// non-blocking again so reads go through the poller, as in the server.
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), true) })
	}
	return &rawShell{cmd: cmd, f: f, buf: make([]byte, 32<<10)}, nil
}

// readUntil reads until the marker; it returns the bytes read.
func (r *rawShell) readUntil(sc *scanner, deadline time.Time) (int64, error) {
	_ = r.f.SetReadDeadline(deadline)
	var total int64
	for {
		n, err := r.f.Read(r.buf)
		total += int64(n)
		if n > 0 && sc.feed(r.buf[:n]) {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("raw pty read: %w", err)
		}
	}
}

// echo writes one byte and waits for it to come back.
func (r *rawShell) echo(b byte, deadline time.Time) error {
	if _, err := r.f.Write([]byte{b}); err != nil {
		return err
	}
	_ = r.f.SetReadDeadline(deadline)
	for {
		n, err := r.f.Read(r.buf)
		if bytes.IndexByte(r.buf[:n], b) >= 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (r *rawShell) write(s string) error {
	_, err := r.f.Write([]byte(s))
	return err
}

// resize sets the pty's size on its descriptor, not through pty.Setsize,
// which calls Fd and so leaves the master blocking: a read then sits in
// read(2) on a thread of its own, where no deadline reaches it.
func (r *rawShell) resize(cols, rows int) error {
	rc, err := r.f.SyscallConn()
	if err != nil {
		return err
	}
	ws := &unix.Winsize{Col: uint16(min(cols, 1000)), Row: uint16(min(rows, 1000))}
	if cerr := rc.Control(func(fd uintptr) { err = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) }); cerr != nil {
		return cerr
	}
	return err
}

func (r *rawShell) close() {
	// The baseline's shell has nothing to save: kill it outright (a bash that
	// is still starting up can sit on SIGHUP).
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	_ = r.f.Close()
}

// sync types a command that prints a marker and waits for it, so the shell
// is at a prompt and idle.
func (r *rawShell) sync(timeout time.Duration) error {
	m := newMarker()
	if err := r.write(m.command()); err != nil {
		return err
	}
	_, err := r.readUntil(newScanner(m.text()), time.Now().Add(timeout))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("raw shell did not answer within %v", timeout)
	}
	return err
}
