package poll

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	var n atomic.Int32
	if !Eventually(10*time.Second, func() bool { return n.Add(1) == 3 }) {
		t.Fatalf("a condition true at the third look: not seen (%d looks)", n.Load())
	}
	if got := n.Load(); got != 3 {
		t.Errorf("looked %d times, want 3", got)
	}
	if Eventually(20*time.Millisecond, func() bool { return false }) {
		t.Error("a condition that never holds: reported as held")
	}
	// The last look is after the deadline: a condition that comes true
	// while the waiter sleeps past it still counts.
	var looks atomic.Int32
	if !Eventually(time.Nanosecond, func() bool { return looks.Add(1) == 2 }) {
		t.Error("a condition true at the look after the deadline: not seen")
	}
}

func TestLast(t *testing.T) {
	var n atomic.Int32
	v, ok := Last(10*time.Second, func() (int32, bool) { k := n.Add(1); return k * 10, k == 3 })
	if !ok || v != 30 {
		t.Errorf("a value ready at the third look: got %d, %v; want 30, true", v, ok)
	}
	n.Store(0)
	v, ok = Last(20*time.Millisecond, func() (int32, bool) { return n.Add(1), false })
	if ok || v != n.Load() {
		t.Errorf("a value never ready: got %d, %v; want the last one (%d), false", v, ok, n.Load())
	}
}

// recorder is a testing.TB that records a Fatalf instead of ending the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestValue(t *testing.T) {
	var n atomic.Int32
	r := &recorder{TB: t}
	if v := Value(r, 10*time.Second, "the third look", func() (int32, bool) { k := n.Add(1); return k, k == 3 }); v != 3 || r.failed != "" {
		t.Errorf("a value ready at the third look: got %d, failure %q", v, r.failed)
	}
	Value(r, 20*time.Millisecond, "a value that never comes", func() (string, bool) { return "stale", false })
	if !strings.Contains(r.failed, "a value that never comes") || !strings.Contains(r.failed, "(last: stale)") {
		t.Errorf("failure message %q: want what was waited for and the last value", r.failed)
	}
}
