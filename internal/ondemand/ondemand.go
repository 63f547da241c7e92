// Package ondemand runs a worker goroutine only while it has work, so that
// an idle owner (most terminals, most of the time) holds no goroutine and
// no stack.
package ondemand

import "sync"

// Worker runs its work function on a goroutine of its own after each Kick.
// Kicks that come while it runs make it run once more, so work queued
// before a Kick is always seen by a run that starts after it.
type Worker struct {
	work func()

	mu      sync.Mutex
	running bool // a goroutine exists
	pending bool // a Kick since the running work started
	stopped bool
	wg      sync.WaitGroup
}

// New returns a worker of work, which should do what is queued and return.
func New(work func()) *Worker { return &Worker{work: work} }

// Kick makes work run after this call: on a new goroutine, or again on the
// running one. A stopped worker ignores it.
func (w *Worker) Kick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.pending = true
	if w.running {
		return
	}
	w.running = true
	w.wg.Add(1)
	go w.loop()
}

func (w *Worker) loop() {
	defer w.wg.Done()
	for {
		w.mu.Lock()
		if !w.pending || w.stopped {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.pending = false
		w.mu.Unlock()
		w.work()
	}
}

// TryClaim makes the caller's goroutine the worker, when no goroutine of
// the worker runs and it is not stopped: the caller then does the work it
// wants and calls Release. Kicks meanwhile start no goroutine; Release
// starts one if any came. False: a goroutine runs (or the worker is
// stopped); the caller Kicks as usual.
func (w *Worker) TryClaim() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running || w.stopped {
		return false
	}
	w.running = true
	w.pending = false
	w.wg.Add(1)
	return true
}

// Release ends a TryClaim: work runs on a goroutine of its own if a Kick
// came since.
func (w *Worker) Release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending && !w.stopped {
		go w.loop() // takes over the claim's count in wg
		return
	}
	w.running = false
	w.wg.Done()
}

// Stop ends the kicks and waits for a running work function to return (its
// owner makes it return, e.g. by cancelling a context it watches).
func (w *Worker) Stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.wg.Wait()
}

// Running reports whether a goroutine of the worker exists now.
func (w *Worker) Running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}
