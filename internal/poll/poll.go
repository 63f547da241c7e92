// Package poll waits in tests for a condition that other goroutines or
// processes make true, for as long as a loaded 2-core machine may need.
//
// The waits are bounds, not expectations: a condition that holds returns at
// once, so a bound only decides how long a broken test takes to fail. Two
// full CI suites share the machine's 2 cores at times (load 10 and more):
// use Short or Long rather than a bound of its own unless the test says why.
package poll

import (
	"testing"
	"time"
)

const (
	// Short bounds a wait for what the test just caused and that takes
	// no real work: a file the recorder writes, a process started or
	// killed, a socket listening, a goroutine parking.
	Short = 10 * time.Second
	// Long bounds a wait for real work on a loaded machine: a shell
	// starting, a program built, megabytes through a terminal.
	Long = time.Minute
)

// interval is the time between two looks at the condition: it bounds how
// late a wait notices, not how long it waits.
const interval = 5 * time.Millisecond

// Eventually reports whether cond holds within d, looking every interval.
func Eventually(d time.Duration, cond func() bool) bool {
	_, ok := Last(d, func() (struct{}, bool) { return struct{}{}, cond() })
	return ok
}

// Last looks at f every interval until it reports ok or d has passed,
// and returns what it returned last: the value the wait was for, or the
// last value seen, for the failure message.
func Last[T any](d time.Duration, f func() (T, bool)) (T, bool) {
	deadline := time.Now().Add(d)
	for {
		v, ok := f()
		if ok {
			return v, true
		}
		if time.Now().After(deadline) {
			// The last look is after the deadline: a condition that
			// came true while the waiter slept past it still counts.
			return f()
		}
		time.Sleep(interval)
	}
}

// Until waits for cond and fails tb, naming what it waited for, when cond
// does not hold within d.
func Until(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Eventually(d, cond) {
		tb.Fatalf("after %v: still waiting for %s", d, what)
	}
}

// Value waits for f to report ok and returns its value; it fails tb,
// naming what it waited for and the last value seen, when f does not
// within d.
func Value[T any](tb testing.TB, d time.Duration, what string, f func() (T, bool)) T {
	tb.Helper()
	v, ok := Last(d, f)
	if !ok {
		tb.Fatalf("after %v: still waiting for %s (last: %v)", d, what, v)
	}
	return v
}
