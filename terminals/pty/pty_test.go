package pty

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/poll"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, script string) *Process {
	t.Helper()
	p, err := Start(Spec{Argv: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=" + os.Getenv("PATH"), "LANG=C"},
		Dir: t.TempDir(), Cols: 80, Rows: 24})
	if err != nil {
		t.Fatalf("Start(%q): %v", script, err)
	}
	t.Cleanup(func() {
		p.Kill(0)
		p.Interrupt()
		_ = p.Close()
	})
	return p
}

// readUntil reads until the output contains want (within 10 s), returning
// everything read; err is the read error that ended it early.
func readUntil(t *testing.T, p *Process, want string) (string, error) {
	t.Helper()
	limit := time.Now().Add(10 * time.Second)
	p.SetReadDeadline(func(bool) (time.Time, bool) { return limit, true })
	buf := make([]byte, 4096)
	var out strings.Builder
	for !strings.Contains(out.String(), want) {
		n, err := p.Read(func() []byte { return buf }, func() {}, nil)
		out.Write(buf[:n])
		// The waiter wakes the reader when the child exits: drain what is left.
		if errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(limit) {
			p.SetReadDeadline(func(bool) (time.Time, bool) { return limit, true })
			continue
		}
		if err != nil {
			return out.String(), err
		}
	}
	return out.String(), nil
}

// TestReadWriteExit: output is read, input written, and the exit is seen
// as EOF, Done and the exit code.
func TestReadWriteExit(t *testing.T) {
	p := start(t, `stty -echo; echo ready; read line; echo "got:$line"; exit 3`)
	if out, err := readUntil(t, p, "ready"); err != nil {
		t.Fatalf("waiting for ready: %v (read %q)", err, out)
	}
	if _, err := p.Write([]byte("abc\n")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if out, err := readUntil(t, p, "got:abc"); err != nil {
		t.Fatalf("waiting for the echo of the input: %v (read %q)", err, out)
	}
	if _, err := readUntil(t, p, "\x00never"); !errors.Is(err, io.EOF) {
		t.Errorf("read after exit: %v, want io.EOF", err)
	}
	<-p.Done()
	if code := p.ExitCode(); code == nil || *code != 3 {
		t.Errorf("ExitCode() = %v, want 3", code)
	}
	if exited := p.SetReadDeadline(func(exited bool) (time.Time, bool) { return time.Time{}, false }); !exited {
		t.Errorf("SetReadDeadline saw exited = false after Done")
	}
}

// TestMasterOutOfRuntimePoller: the master is in no epoll set while
// nobody waits for it (the runtime poller, edge-triggered, would wake an
// idle scheduler thread for each chunk of a flood), and in the watcher's
// while a reader waits.
func TestMasterOutOfRuntimePoller(t *testing.T) {
	p := start(t, `stty -echo; echo ready; read line; echo "got:$line"; sleep 600`)
	if out, err := readUntil(t, p, "ready"); err != nil {
		t.Fatalf("waiting for ready: %v (read %q)", err, out)
	}
	if sets := epollSetsWatching(t, p.master); len(sets) > 0 {
		t.Fatalf("master (fd %d) is in epoll sets %v with no reader waiting", p.master, sets)
	}
	p.SetReadDeadline(func(bool) (time.Time, bool) { return time.Time{}, true })
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 256)
		var out []byte
		for !strings.Contains(string(out), "got:x") {
			n, err := p.Read(func() []byte { return buf }, func() {}, nil)
			if err != nil {
				break
			}
			out = append(out, buf[:n]...)
		}
		got <- string(out)
	}()
	poll.Until(t, 10*time.Second, "the reader to wait in the watcher's set only", func() bool {
		sets := epollSetsWatching(t, p.master)
		return len(sets) == 1 && sets[0] == watcher.epfd
	})
	if _, err := p.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if out := <-got; !strings.Contains(out, "got:x") {
		t.Errorf("read %q, want the answer to the input", out)
	}
}

// epollSetsWatching lists this process's epoll descriptors whose set has fd.
func epollSetsWatching(t *testing.T, fd int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var sets []int
	for _, e := range ents {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "tfd:" && f[1] == strconv.Itoa(fd) {
				n, _ := strconv.Atoi(e.Name())
				sets = append(sets, n)
			}
		}
	}
	return sets
}

// TestWriteWaitsForRoom: a write larger than the pty takes waits until the
// program reads, then completes.
func TestWriteWaitsForRoom(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "go")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, `stty raw -echo; echo ready; read x <'`+fifo+`'; exec cat >/dev/null`)
	if out, err := readUntil(t, p, "ready"); err != nil {
		t.Fatalf("waiting for ready: %v (read %q)", err, out)
	}
	input := make([]byte, 1<<20)
	written := make(chan error, 1)
	go func() {
		n, err := p.Write(input)
		if err == nil && n != len(input) {
			err = fmt.Errorf("wrote %d of %d bytes", n, len(input))
		}
		written <- err
	}()
	// Waiting for room: a duplicate of the master in the watcher's set.
	poll.Until(t, 10*time.Second, "the writer to wait for room", func() bool {
		watcher.mu.Lock()
		defer watcher.mu.Unlock()
		for fd := range watcher.onReady {
			if int(fd) != p.master && int(fd) != p.pidfd {
				return true
			}
		}
		return false
	})
	// The program starts reading.
	if err := os.WriteFile(fifo, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// TestResize: the program sees the new window size.
func TestResize(t *testing.T) {
	p := start(t, `stty -echo; echo ready; read x; stty size`)
	if _, err := readUntil(t, p, "ready"); err != nil {
		t.Fatal(err)
	}
	if err := p.Resize(100, 30); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	if _, err := p.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	if out, err := readUntil(t, p, "30 100"); err != nil {
		t.Errorf("stty size after Resize(100, 30): %v (read %q)", err, out)
	}
}

// TestKillEndsSession: Kill ends the program and every job it left in its
// session, and it does not wait out the grace for a program that quits on
// SIGHUP.
func TestKillEndsSession(t *testing.T) {
	cases := []struct {
		name   string
		script string
	}{
		{"quits on hangup", `sleep 600 & echo ready; wait`},
		{"ignores hangup", `trap '' HUP; sleep 600 & echo ready; while :; do sleep 1; done`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.script)
			if _, err := readUntil(t, p, "ready"); err != nil {
				t.Fatal(err)
			}
			p.Kill(100 * time.Millisecond)
			<-p.Done()
			// Kill has sent SIGKILL to the whole session; a loaded machine may
			// take a moment to schedule those deaths.
			if left, ok := poll.Last(poll.Short, func() ([]int, bool) { left := inSession(t, p.Pid()); return left, len(left) == 0 }); !ok {
				t.Fatalf("after Kill, processes %v are still in session %d", left, p.Pid())
			}
		})
	}
}

// inSession lists the live processes whose session is sid.
func inSession(t *testing.T, sid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || processSession(pid) != sid {
			continue
		}
		if stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !strings.Contains(string(stat), ") Z ") {
			out = append(out, pid)
		}
	}
	return out
}

// TestInterrupt: a blocked reader and writer are woken.
func TestInterrupt(t *testing.T) {
	p := start(t, `stty -icanon -echo; echo ready; sleep 600`)
	if _, err := readUntil(t, p, "ready"); err != nil {
		t.Fatal(err)
	}
	p.SetReadDeadline(func(bool) (time.Time, bool) { return time.Time{}, true })
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		_, err := p.Read(func() []byte { return buf }, func() {}, nil)
		done <- err
	}()
	written := make(chan error, 1)
	go func() { // nobody reads: the pty fills and the write blocks
		chunk := make([]byte, 64<<10)
		for {
			if _, err := p.Write(chunk); err != nil {
				written <- err
				return
			}
		}
	}()
	p.Interrupt()
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Read after Interrupt: %v, want os.ErrDeadlineExceeded", err)
	}
	if err := <-written; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Write after Interrupt: %v, want os.ErrDeadlineExceeded", err)
	}
}

// TestStartErrors: nothing is left behind by a failed start.
func TestStartErrors(t *testing.T) {
	cases := []struct {
		name string
		argv []string
	}{
		{"empty argv", nil},
		{"missing program", []string{"/nonexistent/program"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if p, err := Start(Spec{Argv: tc.argv, Cols: 80, Rows: 24}); err == nil {
				p.Kill(0)
				_ = p.Close()
				t.Fatalf("Start(%q) = nil error, want one", tc.argv)
			}
		})
	}
}

// TestSignal: a signal reaches the program.
func TestSignal(t *testing.T) {
	p := start(t, `trap 'echo got-usr1; exit 0' USR1; echo ready; while :; do sleep 0.05; done`)
	if _, err := readUntil(t, p, "ready"); err != nil {
		t.Fatal(err)
	}
	p.Signal(syscall.SIGUSR1)
	if out, err := readUntil(t, p, "got-usr1"); err != nil {
		t.Errorf("after SIGUSR1: %v (read %q)", err, out)
	}
}

// TestReapedElsewhere: a child that someone else in this process reaps (a
// manager that adopted it in a hand-over within one process, as the
// terminals tests do) ends Done with an unknown exit code; the waiter used
// to panic on the missing process state.
func TestReapedElsewhere(t *testing.T) {
	// Whether our wait4 or the waiter reaps first is up to the scheduler:
	// a few rounds make it ours at least once.
	ours := 0
	for round := 0; round < 10; round++ {
		if reapElsewhere(t) {
			ours++
		}
	}
	t.Logf("reaped by the test in %d of 10 rounds", ours)
}

// reapElsewhere starts a child, reaps it itself and reports whether it got
// there before the waiter.
func reapElsewhere(t *testing.T) bool {
	p := start(t, "read x; exit 3")
	type result struct {
		pid int
		err error
	}
	tid, reaped := make(chan int, 1), make(chan result, 1)
	go func() {
		runtime.LockOSThread() // the thread blocked in wait4 is this goroutine's
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		var ws unix.WaitStatus
		got, err := unix.Wait4(p.Pid(), &ws, 0, nil)
		reaped <- result{got, err}
	}()
	// Let the child exit only once our wait4 is in the kernel.
	wchan := "/proc/self/task/" + strconv.Itoa(<-tid) + "/wchan"
	for {
		if b, err := os.ReadFile(wchan); err != nil || strings.Contains(string(b), "wait") {
			break
		}
		runtime.Gosched()
	}
	if _, err := p.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	r := <-reaped
	<-p.Done()
	if r.err != nil {
		return false // the waiter reaped it (ECHILD for us)
	}
	if code := p.ExitCode(); code != nil {
		t.Errorf("ExitCode = %d after someone else reaped the child; want nil (unknown)", *code)
	}
	return true
}
