package watchfile_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/watchfile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWatch: a write in place and a write-and-rename of the file each call
// back; the watcher ends with its context; a directory that does not exist
// is an error at once.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hosts")
	if err := os.WriteFile(path, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls, before atomic.Int64
	ctx, cancel := context.WithCancel(t.Context())
	wait, err := watchfile.Watch(ctx, path, func() { calls.Add(1) }, func(error) {})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() { cancel(); wait() }()
	if err := os.WriteFile(path, []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, poll.Short, "a call for the write in place", func() bool { return calls.Load() > 0 })
	before.Store(calls.Load())
	tmp := filepath.Join(dir, "hosts.tmp")
	if err := os.WriteFile(tmp, []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, poll.Short, "a call for the rename over the file", func() bool { return calls.Load() > before.Load() })

	if _, err := watchfile.Watch(ctx, filepath.Join(dir, "gone", "hosts"), func() {}, func(error) {}); err == nil {
		t.Error("Watch of a file in a missing directory: no error")
	}
}
