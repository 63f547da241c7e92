package pty

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	creackpty "github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/internal/poll"
)

// watched is the number of pidfds in the shared watcher.
func watched() int {
	watcher.mu.Lock()
	defer watcher.mu.Unlock()
	return len(watcher.onReady)
}

// waitExitCode waits for p's exit (up to 10 s) and checks its code.
func waitExitCode(p *Process, want int) error {
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		return errors.New("Done not closed 10 s after the exit")
	}
	if code := p.ExitCode(); code == nil || *code != want {
		return errors.New("ExitCode() = " + fmtCode(code) + ", want " + strconv.Itoa(want))
	}
	return nil
}

func fmtCode(code *int) string {
	if code == nil {
		return "nil"
	}
	return strconv.Itoa(*code)
}

// TestIdleProcessesHoldNoGoroutine: running processes share the one
// watcher goroutine; each exit is reported with its own code, and the
// watcher ends once nothing runs.
func TestIdleProcessesHoldNoGoroutine(t *testing.T) {
	poll.Until(t, 10*time.Second, "the watcher goroutines of earlier tests to end", func() bool { return watcherGoroutines.Load() == 0 })
	base := runtime.NumGoroutine()
	const n = 20
	procs := make([]*Process, n)
	for i := range procs {
		procs[i] = start(t, "read x; exit $x")
	}
	if got := watcherGoroutines.Load(); got != 1 {
		t.Errorf("%d watcher goroutines for %d running processes, want 1", got, n)
	}
	if grown := runtime.NumGoroutine() - base; grown > 3 {
		t.Errorf("%d running processes added %d goroutines, want at most 3 (the watcher and slack)", n, grown)
	}
	if got := watched(); got != n {
		t.Errorf("watcher has %d pidfds, want %d", got, n)
	}
	for i, p := range procs {
		if _, err := p.Write([]byte(strconv.Itoa(i+1) + "\n")); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	for i, p := range procs {
		if err := waitExitCode(p, i+1); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	poll.Until(t, 10*time.Second, "the watcher goroutine to end after every exit", func() bool { return watcherGoroutines.Load() == 0 })
	if got := watched(); got != 0 {
		t.Errorf("watcher has %d pidfds after every exit, want 0", got)
	}
}

// TestWatcherConcurrent: processes start and exit from many goroutines
// while the watcher starts and stops; every exit is reported.
func TestWatcherConcurrent(t *testing.T) {
	const workers, rounds = 8, 10
	env := []string{"PATH=" + os.Getenv("PATH"), "LANG=C"}
	run := func(script string) (*Process, error) {
		return Start(Spec{Argv: []string{"/bin/sh", "-c", script}, Env: env, Cols: 80, Rows: 24})
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				code := w*rounds + r
				// long waits for input while quick comes and goes (alone, it
				// would start and stop the watcher).
				long, err := run("read x; exit $x")
				if err != nil {
					t.Error(err)
					return
				}
				quick, err := run("exit " + strconv.Itoa(code))
				if err != nil {
					t.Error(err)
					return
				}
				if err := waitExitCode(quick, code); err != nil {
					t.Errorf("quick %d: %v", code, err)
					return // a process whose exit was lost: Close would hang
				}
				if _, err := long.Write([]byte(strconv.Itoa(code+1) + "\n")); err != nil {
					t.Error(err)
				}
				if err := waitExitCode(long, code+1); err != nil {
					t.Errorf("long %d: %v", code, err)
					return
				}
				for _, p := range []*Process{quick, long} {
					p.Interrupt()
					if err := p.Close(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	poll.Until(t, 10*time.Second, "the watcher goroutine to end after every exit", func() bool { return watcherGoroutines.Load() == 0 })
}

// TestWatcherFallback: without the watcher, a goroutine per process waits
// for the exit.
func TestWatcherFallback(t *testing.T) {
	watcher.mu.Lock()
	watcher.broken = errors.New("test: no watcher")
	watcher.mu.Unlock()
	defer func() {
		watcher.mu.Lock()
		watcher.broken = nil
		watcher.mu.Unlock()
	}()
	p := start(t, "read x; exit $x")
	if got := watched(); got != 0 {
		t.Errorf("watcher has %d pidfds, want 0", got)
	}
	if _, err := p.Write([]byte("4\n")); err != nil {
		t.Fatal(err)
	}
	if err := waitExitCode(p, 4); err != nil {
		t.Error(err)
	}
}

// TestAdoptExit: an adopted child (the upgrade in place) is watched as
// well and reaped with its exit code.
func TestAdoptExit(t *testing.T) {
	master, tty, err := creackpty.Open()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "read x; exit $x")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = cmd.Start()
	_ = tty.Close()
	if err != nil {
		_ = master.Close()
		t.Fatal(err)
	}
	masterFD, err := unix.Dup(int(master.Fd()))
	_ = master.Close()
	if err != nil {
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Adopt(masterFD, pidfd, cmd.Process.Pid, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill(0)
		p.Interrupt()
		_ = p.Close()
	})
	if got := watched(); got != 1 {
		t.Errorf("watcher has %d pidfds, want 1", got)
	}
	if _, err := p.Write([]byte("6\n")); err != nil {
		t.Fatal(err)
	}
	if err := waitExitCode(p, 6); err != nil {
		t.Error(err)
	}
}

// TestReadParks: Read with a wake does not wait for output but hands the
// wait to the watcher; wake runs once, on output, on PauseReading or
// Interrupt (after which Read does not park) and on the exit, and the
// watcher ends once nothing is watched.
func TestReadParks(t *testing.T) {
	poll.Until(t, 10*time.Second, "the watcher goroutines of earlier tests to end", func() bool { return watcherGoroutines.Load() == 0 })
	p := start(t, "read x; echo got-$x; read y; exit 3")
	woken := make(chan struct{}, 4)
	wake := func() { woken <- struct{}{} }
	buf := make([]byte, 4096)
	var out strings.Builder
	// readUntilParked reads what there is until Read parks.
	readUntilParked := func(p *Process) {
		t.Helper()
		for {
			n, err := p.Read(func() []byte { return buf }, func() {}, wake)
			if errors.Is(err, ErrParked) {
				return
			}
			if err != nil {
				t.Fatalf("Read: %v (read %q)", err, out.String())
			}
			out.Write(buf[:n])
		}
	}
	awaitWake := func(why string) {
		t.Helper()
		select {
		case <-woken:
		case <-time.After(10 * time.Second):
			t.Fatalf("no wake 10 s after %s", why)
		}
	}

	readUntilParked(p)
	if got := watched(); got != 2 {
		t.Fatalf("watcher has %d descriptors with a parked reader, want 2 (the pidfd and the master)", got)
	}
	if _, err := p.Write([]byte("7\n")); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(out.String(), "got-7") {
		awaitWake("output")
		readUntilParked(p)
	}

	p.PauseReading()
	awaitWake("PauseReading")
	if _, err := p.Read(func() []byte { return buf }, func() {}, wake); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read after PauseReading = %v, want os.ErrDeadlineExceeded (not parked again)", err)
	}
	p.ResumeReading()
	readUntilParked(p)

	if _, err := p.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	awaitWake("the exit")
	if err := waitExitCode(p, 3); err != nil {
		t.Fatal(err)
	}
	p.SetReadDeadline(func(bool) (time.Time, bool) { return time.Now().Add(10 * time.Second), true })
	for {
		if _, err := p.Read(func() []byte { return buf }, func() {}, wake); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Read after the exit = %v, want io.EOF", err)
			}
			break
		}
	}
	if len(woken) != 0 {
		t.Errorf("%d wakes too many", len(woken))
	}
	p.Interrupt()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the watcher goroutine to end with nothing watched", func() bool { return watcherGoroutines.Load() == 0 })
	if got := watched(); got != 0 {
		t.Errorf("watcher has %d descriptors after the exit, want 0", got)
	}

	// Interrupt (a terminal's end) wakes a parked reader; Read does not park
	// again until the next SetReadDeadline.
	q := start(t, "read x")
	readUntilParked(q)
	q.Interrupt()
	awaitWake("Interrupt")
	if _, err := q.Read(func() []byte { return buf }, func() {}, wake); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read after Interrupt = %v, want os.ErrDeadlineExceeded (not parked again)", err)
	}
}
