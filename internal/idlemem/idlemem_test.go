package idlemem

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReleaseAfterQuiet: touches in a burst lead to one release once they
// stop, and a touch after it to another; at rest no goroutine is left.
func TestReleaseAfterQuiet(t *testing.T) {
	const quiet = time.Second
	released := make(chan struct{}, 10)
	var count atomic.Int32
	r := NewReleaser(quiet, func() { count.Add(1); released <- struct{}{} })
	for range 20 { // a burst, far shorter than quiet
		r.Touch()
	}
	<-released
	if n := count.Load(); n != 1 {
		t.Errorf("%d releases after one burst, want 1", n)
	}
	r.Touch()
	<-released // activity again: a release again
	if r.Stop() {
		t.Error("Stop found a release pending after it ran")
	}
	r.Touch()
	if !r.Stop() {
		t.Error("Stop found no release pending right after a touch")
	}
}

// TestProcessReleaseGivesMemoryBack: the process releaser's release returns
// freed heap pages to the operating system.
func TestProcessReleaseGivesMemoryBack(t *testing.T) {
	garbage := make([][]byte, 0, 64)
	for range 64 {
		garbage = append(garbage, make([]byte, 256<<10))
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	process.release()
	runtime.ReadMemStats(&after)
	if after.HeapReleased < before.HeapReleased+8<<20 {
		t.Errorf("heap released %d → %d bytes after 16 MiB of garbage, want it given back", before.HeapReleased, after.HeapReleased)
	}
}
