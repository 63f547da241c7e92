// Package debugtrace writes an execution trace (runtime/trace) of the
// running program for a while, for `termhost serve --debug-trace`: how a
// keystroke's echo or a flood of output goes through the server's
// goroutines, read with `go tool trace` (docs/BENCHMARKS.md). Nothing of it
// runs unless asked for.
package debugtrace

import (
	"errors"
	"fmt"
	"os"
	"runtime/trace"
	"sync"
	"time"
)

// Tracer is a trace being written.
type Tracer struct {
	f     *os.File
	timer *time.Timer
	once  sync.Once
	done  chan struct{}
	err   error
}

// Start traces the program into a new file at path for d, or until Stop.
// Only one trace can run at a time in a program.
func Start(path string, d time.Duration) (*Tracer, error) {
	if d <= 0 {
		return nil, errors.New("the trace's duration must be positive")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("trace: %w", err)
	}
	t := &Tracer{f: f, done: make(chan struct{})}
	t.timer = time.AfterFunc(d, t.end)
	return t, nil
}

// Stop ends the trace (at once, or when its time is up) and closes its
// file; it returns the file's error. Every call after the first waits for
// the first and returns the same.
func (t *Tracer) Stop() error {
	t.timer.Stop()
	t.end()
	<-t.done
	return t.err
}

// end stops the trace and closes its file, once.
func (t *Tracer) end() {
	t.once.Do(func() {
		trace.Stop()
		t.err = t.f.Close()
		close(t.done)
	})
}

// Done is closed once the trace is written.
func (t *Tracer) Done() <-chan struct{} { return t.done }
