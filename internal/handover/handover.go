// Package handover re-executes a running termhost in place: the same
// process (same pid, parent, terminal and process group) starts a new
// binary, keeping the descriptors it names open, and reads the state it
// left in a memory file. It knows nothing of terminals; internal/serve says
// what is kept and sent.
package handover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// EnvFD names the environment variable that tells a re-executed termhost
// the descriptor of its hand-over state.
const EnvFD = "TERMHOST_HANDOVER_FD"

// maxState bounds the state read back (contents and replay rings of every
// terminal).
const maxState = 1 << 30

// Write returns a memory file (close-on-exec) holding v as JSON. Readers
// read it from offset 0, whatever the shared offset says.
func Write(v any) (*os.File, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("handover encode: %w", err)
	}
	fd, err := unix.MemfdCreate("termhost-handover", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("handover memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "termhost-handover")
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("handover write: %w", err)
	}
	return f, nil
}

// Inherited reads the state named by EnvFD into v and closes its
// descriptor; ok is false when this process was not re-executed by a
// hand-over. It unsets the variable, so that shells do not inherit it.
func Inherited(v any) (ok bool, err error) {
	s, set := os.LookupEnv(EnvFD)
	if !set {
		return false, nil
	}
	_ = os.Unsetenv(EnvFD)
	fd, err := strconv.Atoi(s)
	if err != nil || fd < 3 {
		return true, fmt.Errorf("%s=%q: not a descriptor", EnvFD, s)
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "termhost-handover")
	defer f.Close()
	return true, read(f, v)
}

func read(f *os.File, v any) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("handover state: %w", err)
	}
	if fi.Size() > maxState {
		return fmt.Errorf("handover state of %d bytes", fi.Size())
	}
	b, err := io.ReadAll(io.NewSectionReader(f, 0, fi.Size()))
	if err != nil {
		return fmt.Errorf("handover read: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("handover decode: %w", err)
	}
	return nil
}

// Probe runs exe with args, the state (if not nil) as descriptor 3 and
// EnvFD=3, and waits up to timeout for it to exit 0 with want on its
// standard output: the new binary has shown that it starts on this machine
// (and reads this state) before this process gives itself up to it.
func Probe(exe string, args []string, state *os.File, want string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = os.Environ()
	if state != nil {
		cmd.ExtraFiles = []*os.File{state}
		cmd.Env = append(cmd.Env, EnvFD+"=3")
	}
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s did not answer within %v", exe, timeout)
	}
	if err != nil || !bytes.Contains(out.Bytes(), []byte(want)) {
		msg := bytes.TrimSpace(append(errOut.Bytes(), out.Bytes()...))
		if len(msg) > 500 {
			msg = msg[:500]
		}
		return fmt.Errorf("%s: %v: %q", exe, cmp(err, errors.New("unexpected answer")), msg)
	}
	return nil
}

func cmp(err, other error) error {
	if err != nil {
		return err
	}
	return other
}

// Exec replaces this process's program by exe with args, keeping the
// descriptors keep and state open and naming state in EnvFD. It returns
// only when the exec failed, with every descriptor as it was.
//
// No other goroutine may start a process meanwhile: it would inherit the
// descriptors (ForkLock keeps os/exec out).
func Exec(exe string, args []string, state *os.File, keep []int) error {
	fds := append([]int{int(state.Fd())}, keep...)
	env := append(os.Environ(), EnvFD+"="+strconv.Itoa(fds[0]))
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	for i, fd := range fds {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			for _, fd := range fds[:i] {
				unix.CloseOnExec(fd)
			}
			return fmt.Errorf("keep descriptor %d: %w", fd, err)
		}
	}
	err := syscall.Exec(exe, args, env)
	for _, fd := range fds {
		unix.CloseOnExec(fd)
	}
	return fmt.Errorf("exec %s: %w", exe, err)
}

// CloseOnExec marks inherited descriptors close-on-exec again, so that
// shells started from now on do not get them.
func CloseOnExec(fds []int) {
	for _, fd := range fds {
		unix.CloseOnExec(fd)
	}
}
