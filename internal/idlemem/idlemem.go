// Package idlemem gives the memory a burst of work left behind back to the
// operating system once the server comes to rest. Opening tabs, terminals
// and connections leaves garbage (decoded requests, encoded snapshots,
// grown stacks) that a Go heap keeps until its next collection, which an
// idle server may not run for minutes, and freed pages that the runtime's
// scavenger returns only slowly: on a shared box that is resident memory
// for nothing. Touch marks activity (connections and terminals coming and
// going, output); a quiet spell of Quiet after the last Touch runs one
// collection and returns every free page, never in the middle of a flood.
package idlemem

import (
	"runtime/debug"
	"sync"
	"time"
)

// Quiet is how long after the last Touch memory is given back: long
// enough that a pause between two bursts of output does not pay for the
// heap's regrowth (page faults, early collections), short enough that an
// idle server is lean soon after its tabs opened.
const Quiet = 10 * time.Second

// Releaser runs release once activity has been quiet for its delay. At
// rest it holds a stopped timer and no goroutine.
type Releaser struct {
	quiet   time.Duration
	release func()

	mu    sync.Mutex
	timer *time.Timer
}

// NewReleaser returns a releaser that calls release quiet after the last
// Touch.
func NewReleaser(quiet time.Duration, release func()) *Releaser {
	return &Releaser{quiet: quiet, release: release}
}

// Touch marks activity: the release waits for quiet from now.
func (r *Releaser) Touch() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer == nil {
		r.timer = time.AfterFunc(r.quiet, r.release)
		return
	}
	r.timer.Reset(r.quiet)
}

// Stop cancels a pending release; it reports whether one was pending.
func (r *Releaser) Stop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.timer != nil && r.timer.Stop()
}

// process is the server's releaser: memory is the process's.
var process = NewReleaser(Quiet, debug.FreeOSMemory)

// Touch marks activity (a connection or a terminal that came or went,
// output published): the process gives its free memory back Quiet after
// the last one. It costs a timer reset.
func Touch() { process.Touch() }
