package debugtrace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/trace"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTraceForAWhile: a trace starts, records what runs meanwhile and ends
// by itself once its time is up, leaving a complete trace file.
func TestTraceForAWhile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.out")
	tr, err := Start(path, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !trace.IsEnabled() {
		t.Fatal("not tracing after Start")
	}
	trace.Log(context.Background(), "test", "traced")
	<-tr.Done()
	if trace.IsEnabled() {
		t.Fatal("still tracing once done")
	}
	if err := tr.Stop(); err != nil { // after the timer: the same result
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b, []byte("traced")) {
		t.Fatalf("not a trace with the logged event: %d bytes starting %q", len(b), b[:min(len(b), 16)])
	}
}

// TestStopEarly: Stop ends the trace before its time (a server shutting
// down) and a new one can start.
func TestStopEarly(t *testing.T) {
	dir := t.TempDir()
	tr, err := Start(filepath.Join(dir, "a"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(filepath.Join(dir, "b"), time.Hour); err == nil {
		t.Fatal("a second trace started while one runs")
	}
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tr.Done():
	default:
		t.Fatal("not done after Stop")
	}
	tr, err = Start(filepath.Join(dir, "c"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(filepath.Join(dir, "d"), 0); err == nil {
		t.Fatal("a trace of no duration started")
	}
}
