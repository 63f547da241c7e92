// Package watchfile tells a configuration file's owner when the file
// changes, so that it re-reads it: the roles file, the approval rules and
// the hosts file all use it.
package watchfile

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// Watch calls changed whenever the file at path is written, created or
// renamed over, until ctx ends; failed calls the watcher's own errors.
// Both run on the watcher's goroutine, one at a time; the returned wait
// waits for it to end. Watch watches the file's directory, so an editor's
// or a deploy tool's write-and-rename is seen as well as a write in place.
// The watch is in place when Watch returns.
func Watch(ctx context.Context, path string, changed func(), failed func(error)) (wait func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	dir, name := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == name && ev.Has(fsnotify.Write|fsnotify.Create|fsnotify.Rename) {
					changed()
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				failed(err)
			}
		}
	}()
	return func() { <-done }, nil
}
