package poll

import (
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
