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
