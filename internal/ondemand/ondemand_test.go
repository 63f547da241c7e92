package ondemand

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEveryKickIsSeen: items queued from many goroutines, each followed by
// a Kick, are all taken by some run, and the goroutine ends once idle.
func TestEveryKickIsSeen(t *testing.T) {
	const senders, each = 8, 2000
	queue := make(chan int, senders*each)
	var taken atomic.Int64
	w := New(func() {
		for {
			select {
			case <-queue:
				taken.Add(1)
			default:
				return
			}
		}
	})
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				queue <- i
				w.Kick()
			}
		}()
	}
	wg.Wait()
	for w.Running() { // the goroutine ends only after a run that began after the last kick
		runtime.Gosched()
	}
	if got := taken.Load(); got != senders*each {
		t.Fatalf("taken %d of %d items", got, senders*each)
	}
	w.Stop()
}

// TestIdleHoldsNoGoroutine: after its work returns the worker's goroutine
// ends; a later Kick starts a new one; a stopped worker ignores kicks.
func TestIdleHoldsNoGoroutine(t *testing.T) {
	runs := make(chan struct{})
	release := make(chan struct{})
	w := New(func() { runs <- struct{}{}; <-release })
	w.Kick()
	<-runs
	if !w.Running() {
		t.Fatal("not running while its work runs")
	}
	w.Kick() // while running: one more run after this one
	release <- struct{}{}
	<-runs
	release <- struct{}{}
	for w.Running() { // ends by itself: nothing pending
		runtime.Gosched()
	}
	w.Kick()
	<-runs
	release <- struct{}{}
	w.Stop()
	w.Kick() // ignored
	if w.Running() {
		t.Fatal("a stopped worker started a goroutine")
	}
}

// TestClaim: while a caller holds the worker's claim no goroutine starts,
// kicks included; Release starts one if a kick came meanwhile, none
// otherwise; a claim is refused while a goroutine runs or once stopped,
// and Stop waits for a claim to end.
func TestClaim(t *testing.T) {
	var runs atomic.Int64
	release := make(chan struct{})
	w := New(func() { runs.Add(1); <-release })
	if !w.TryClaim() {
		t.Fatal("an idle worker refused a claim")
	}
	if w.TryClaim() {
		t.Fatal("a claimed worker gave a second claim")
	}
	w.Release() // no kick meanwhile: nothing runs
	if w.Running() || runs.Load() != 0 {
		t.Fatal("Release with no kick started the work")
	}

	if !w.TryClaim() {
		t.Fatal("claim refused after Release")
	}
	w.Kick()
	if runs.Load() != 0 {
		t.Fatal("a kick during a claim ran the work")
	}
	w.Release() // the kick: one run on a goroutine of its own
	for runs.Load() == 0 {
		runtime.Gosched()
	}
	if w.TryClaim() {
		t.Fatal("claim given while the work runs on its goroutine")
	}
	release <- struct{}{}
	for w.Running() {
		runtime.Gosched()
	}

	if !w.TryClaim() {
		t.Fatal("claim refused to an idle worker")
	}
	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	for { // Stop has begun: it waits for the claim
		w.mu.Lock()
		stopping := w.stopped
		w.mu.Unlock()
		if stopping {
			break
		}
		runtime.Gosched()
	}
	select {
	case <-stopped:
		t.Fatal("Stop returned while a claim was held")
	default:
	}
	w.Kick() // stopping: no run after the claim ends
	w.Release()
	<-stopped
	if w.TryClaim() {
		t.Fatal("a stopped worker gave a claim")
	}
	if got := runs.Load(); got != 1 {
		t.Fatalf("work ran %d times, want 1", got)
	}
}
