// Package proctest lists a test process's children from /proc, for tests
// that check no shell or job outlives what should have ended it.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// Children lists this process's children, zombies included: a child not
// yet reaped is still one left behind.
func Children(tb testing.TB) []int {
	tb.Helper()
	return children(tb, true)
}

// LiveChildren lists this process's children that have not exited.
func LiveChildren(tb testing.TB) []int {
	tb.Helper()
	return children(tb, false)
}

func children(tb testing.TB, zombies bool) []int {
	tb.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		tb.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited since ReadDir
		}
		// After the command name, which may hold spaces and parentheses:
		// state, then parent pid.
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == self && (zombies || f[0] != "Z") {
			out = append(out, pid)
		}
	}
	return out
}
