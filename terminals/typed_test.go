package terminals

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
)

// TestKeystrokeEchoWakesTheReader: after a keystroke the terminal's reader
// waits for the echo on a descriptor of its own in the runtime poller (the
// echo then wakes the reader's goroutine, not the shared watcher's, which
// woke the reader's: docs/BENCHMARKS.md, "Where a keystroke's echo goes"),
// and the master itself is in no epoll set meanwhile.
func TestKeystrokeEchoWakesTheReader(t *testing.T) {
	m := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	uri := "ahp-terminal:/typed"
	rec := claimedTerminal(t, m, uri)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	seq := int64(0)
	send := func(data string) {
		seq++
		if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: seq}, uri, input(t, data), Policy{}); got != Accepted {
			t.Fatalf("input %d: %v, want accepted", seq, got)
		}
	}
	send("stty raw -echo; echo RE''ADY; cat\r")
	if err := rec.waitOutput(ctx, "READY"); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	term := m.terms[uri]
	m.mu.Unlock()
	master := -1
	if err := term.proc.Control(func(fd uintptr) { master = int(fd) }); err != nil {
		t.Fatal(err)
	}
	send("#")
	if err := rec.waitOutput(ctx, "#"); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the reader to wait for output on a descriptor of its own, the master in no epoll set", func() bool {
		self, others := epollWatchesOf(t, master)
		return !self && others == 1
	})
	send("%")
	if err := rec.waitOutput(ctx, "#%"); err != nil {
		t.Fatal(err)
	}
}

// epollWatchesOf reports whether an epoll set of this process watches the
// descriptor fd of a pty master, and how many other descriptors of the
// same file are watched (by inode, as /proc shows them).
func epollWatchesOf(t *testing.T, fd int) (self bool, others int) {
	t.Helper()
	info, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	ino := ""
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "ino:" {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			ino = strconv.FormatUint(n, 16) // epoll's fdinfo writes it in hex
		}
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		set, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		for _, line := range strings.Split(string(set), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "tfd:" || !strings.Contains(line, " ino:"+ino+" ") {
				continue
			}
			if f[1] == strconv.Itoa(fd) {
				self = true
			} else {
				others++
			}
		}
	}
	return self, others
}
