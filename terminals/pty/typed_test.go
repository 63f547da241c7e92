package pty

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/poll"
)

// hotFd is the descriptor of the reader's duplicate of the master, or -1.
func hotFd(p *Process) int {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	fd := -1
	if p.hotRC != nil {
		_ = p.hotRC.Control(func(d uintptr) { fd = int(d) })
	}
	return fd
}

// readUntilAsync reads with no deadline until the output has want, and
// sends what it read (or the error that ended it).
func readUntilAsync(p *Process, want string, buf []byte) <-chan string {
	got := make(chan string, 1)
	p.SetReadDeadline(func(bool) (time.Time, bool) { return time.Time{}, true })
	go func() {
		var out []byte
		for !strings.Contains(string(out), want) {
			n, err := p.Read(func() []byte { return buf }, func() {}, nil)
			if err != nil {
				got <- string(out) + "\n" + err.Error()
				return
			}
			out = append(out, buf[:n]...)
		}
		got <- string(out)
	}()
	return got
}

// TestTypedReaderWaitsInRuntimePoller: after a keystroke the reader waits
// for the echo on a duplicate of the master in the runtime poller (so the
// echo wakes the reader itself, not the shared watcher first), with the
// master itself in no epoll set; once keystrokes stop for typedFor, the
// duplicate is closed and the reader waits in the watcher again.
func TestTypedReaderWaitsInRuntimePoller(t *testing.T) {
	p := start(t, `stty -echo; echo ready; while read line; do echo "got:$line"; done`)
	if out, err := readUntil(t, p, "ready"); err != nil {
		t.Fatalf("waiting for ready: %v (read %q)", err, out)
	}
	p.Typed(time.Now())
	got := readUntilAsync(p, "got:x", make([]byte, 256))
	var dup int
	poll.Until(t, 10*time.Second, "the reader to wait on its duplicate in the runtime poller", func() bool {
		p.deadlineMu.Lock()
		waiting := p.hotWaiting
		p.deadlineMu.Unlock()
		dup = hotFd(p)
		return waiting && dup >= 0
	})
	if sets := epollSetsWatching(t, p.master); len(sets) > 0 {
		t.Errorf("master (fd %d) in epoll sets %v while the reader waits on its duplicate", p.master, sets)
	}
	if sets := epollSetsWatching(t, dup); len(sets) != 1 || sets[0] == watcher.epfd {
		t.Errorf("duplicate (fd %d) in epoll sets %v, want the runtime poller's alone", dup, sets)
	}
	if _, err := p.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if out := <-got; !strings.Contains(out, "got:x") {
		t.Fatalf("read %q, want the answer to the input", out)
	}

	// No more keystrokes: past typedFor the reader goes back to the watcher.
	got = readUntilAsync(p, "got:y", make([]byte, 256))
	poll.Until(t, 10*time.Second, "the duplicate to close and the reader to wait in the watcher", func() bool {
		sets := epollSetsWatching(t, p.master)
		return hotFd(p) < 0 && len(sets) == 1 && sets[0] == watcher.epfd
	})
	if _, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(dup)); err == nil && epollHas(t, dup) {
		t.Errorf("duplicate fd %d still in an epoll set after the spell", dup)
	}
	if _, err := p.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	if out := <-got; !strings.Contains(out, "got:y") {
		t.Fatalf("read %q, want the answer to the input", out)
	}
}

// TestTypedInterrupt: a reader waiting on its duplicate is woken by
// Interrupt as by a deadline.
func TestTypedInterrupt(t *testing.T) {
	p := start(t, `stty -echo; echo ready; sleep 600`)
	if out, err := readUntil(t, p, "ready"); err != nil {
		t.Fatalf("waiting for ready: %v (read %q)", err, out)
	}
	p.Typed(time.Now())
	p.SetReadDeadline(func(bool) (time.Time, bool) { return time.Time{}, true })
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		_, err := p.Read(func() []byte { return buf }, func() {}, nil)
		done <- err
	}()
	poll.Until(t, 10*time.Second, "the reader to wait on its duplicate", func() bool {
		p.deadlineMu.Lock()
		defer p.deadlineMu.Unlock()
		return p.hotWaiting
	})
	p.Interrupt()
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read after Interrupt: %v, want os.ErrDeadlineExceeded", err)
	}
}

// TestTypedFlood: a read that fills the buffer (a flood, not an echo)
// closes the reader's duplicate at once, so that a flood does not wake the
// runtime poller for each chunk; Close closes one that is left.
func TestTypedFlood(t *testing.T) {
	p := start(t, `stty -echo; echo ready; read line; head -c 65536 /dev/zero; sleep 600`)
	if out, err := readUntil(t, p, "ready"); err != nil {
		t.Fatalf("waiting for ready: %v (read %q)", err, out)
	}
	p.Typed(time.Now())
	p.SetReadDeadline(func(bool) (time.Time, bool) { return time.Time{}, true })
	afterFull := make(chan int, 1) // the duplicate's fd right after the first full read
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 512)
		for {
			n, err := p.Read(func() []byte { return buf }, func() {}, nil)
			if err != nil {
				done <- err
				return
			}
			if n == len(buf) {
				select {
				case afterFull <- hotFd(p):
				default:
				}
			}
		}
	}()
	poll.Until(t, 10*time.Second, "the reader to wait on its duplicate", func() bool {
		p.deadlineMu.Lock()
		defer p.deadlineMu.Unlock()
		return p.hotWaiting
	})
	if _, err := p.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	if fd := <-afterFull; fd >= 0 {
		t.Errorf("duplicate (fd %d) still open after a full read", fd)
	}
	p.Typed(time.Now()) // the flood drained, the reader waits on a new one
	var dup int
	poll.Until(t, 10*time.Second, "the reader to wait on a duplicate again", func() bool {
		dup = hotFd(p)
		p.deadlineMu.Lock()
		defer p.deadlineMu.Unlock()
		return p.hotWaiting && dup >= 0
	})
	p.Kill(0)
	<-done // woken by the exit
	_ = p.Close()
	if fd := hotFd(p); fd >= 0 {
		t.Errorf("duplicate (fd %d) open after Close", fd)
	}
	if epollHas(t, dup) {
		t.Errorf("duplicate fd %d still watched after Close", dup)
	}
}

// epollHas reports whether any epoll set of this process watches fd.
func epollHas(t *testing.T, fd int) bool { return len(epollSetsWatching(t, fd)) > 0 }
