// Package poll waits in tests for a condition that other goroutines or
// processes make true, for as long as a loaded 2-core machine may need.
package poll

import (
	"testing"
	"time"
)

// interval is the time between two looks at the condition: it bounds how
// late a wait notices, not how long it waits.
const interval = 5 * time.Millisecond

// Eventually reports whether cond holds within d, looking every interval.
func Eventually(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(interval) {
		if time.Now().After(deadline) {
			return cond()
		}
	}
	return true
}

// Until waits for cond and fails tb, naming what it waited for, when cond
// does not hold within d.
func Until(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Eventually(d, cond) {
		tb.Fatalf("after %v: still waiting for %s", d, what)
	}
}
