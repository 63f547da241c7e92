package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/google/renameio/v2"

	"github.com/termhost/termhost/internal/watchfile"
)

// File is the policy of a rules file (or the defaults alone, without one),
// re-read by Reload (SIGHUP) and whenever the file changes; a file that no
// longer parses keeps the policy in force (and is logged).
type File struct {
	path string
	log  *slog.Logger
	cur  atomic.Pointer[Policy]

	mu      sync.Mutex // serializes loads and AlwaysAllow's writes
	loads   uint64
	changed chan struct{}
}

// Open loads the rules file at path ("": the defaults only). A missing
// file is no rules yet (AlwaysAllow creates it); one that does not parse
// is an error.
func Open(path string, log *slog.Logger) (*File, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &File{path: path, log: log.With("component", "approval rules"), changed: make(chan struct{})}
	f.cur.Store(&Policy{})
	if err := f.Reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// Path is the rules file's path, "" without one.
func (f *File) Path() string { return f.path }

// Policy is the policy in force.
func (f *File) Policy() *Policy { return f.cur.Load() }

// Evaluate decides on a command line with the policy in force.
func (f *File) Evaluate(commandLine string) Result { return f.Policy().Evaluate(commandLine) }

// Changed is closed at the next successful load.
func (f *File) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// Reload re-reads the rules file.
func (f *File) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loadLocked(false)
}

var errEmpty = errors.New("rules file is empty")

func (f *File) loadLocked(skipEmpty bool) error {
	if f.path == "" {
		return nil
	}
	data, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("read rules file: %w", err)
	}
	if skipEmpty && len(bytes.TrimSpace(data)) == 0 {
		return errEmpty
	}
	p, err := Parse(data)
	if err != nil {
		return fmt.Errorf("rules file %s: %w", f.path, err)
	}
	f.cur.Store(p)
	f.loads++
	close(f.changed)
	f.changed = make(chan struct{})
	f.log.Info("approval rules loaded", "rules", len(p.rules), "file", f.path)
	return nil
}

// AlwaysAllow adds "key": true to the rules file (creating it) and loads
// it: what a person's "always allow" answer does. Without a rules file it
// is an error.
func (f *File) AlwaysAllow(key string) error {
	if f.path == "" {
		return errors.New("no rules file to add the rule to (--approve-rules)")
	}
	if key == "" {
		return errors.New("no rule to add")
	}
	if _, err := Parse(fmt.Appendf(nil, `{%q: true}`, key)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	data, err := os.ReadFile(f.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read rules file: %w", err)
	}
	out, err := withRule(data, key)
	if err != nil {
		return fmt.Errorf("rules file %s: %w", f.path, err)
	}
	if err := renameio.WriteFile(f.path, out, 0o600); err != nil {
		return fmt.Errorf("write rules file: %w", err)
	}
	return f.loadLocked(false)
}

// withRule is the rules file data with "key": true set, keeping the rest
// of the text as written (its order, spacing and other rules).
func withRule(data []byte, key string) ([]byte, error) {
	entry, _ := json.Marshal(key)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return fmt.Appendf(nil, "{\n  %s: true\n}\n", entry), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, ok := obj[key]; ok {
		// Set the existing key to true: rewrite the object (its order is lost).
		obj[key] = json.RawMessage("true")
		out, err := json.MarshalIndent(obj, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	}
	end := bytes.LastIndexByte(trimmed, '}')
	body := bytes.TrimSpace(trimmed[1:end])
	var b bytes.Buffer
	b.Write(bytes.TrimRight(trimmed[:end], " \t\r\n"))
	if len(body) > 0 {
		b.WriteByte(',')
	}
	fmt.Fprintf(&b, "\n  %s: true\n}\n", entry)
	return b.Bytes(), nil
}

// Watch re-reads the rules file whenever it changes, until ctx ends; the
// returned wait waits for the watcher to end. It watches the file's
// directory, so a write-and-rename is seen as well as a write in place.
// The watch is in place when Watch returns.
func (f *File) Watch(ctx context.Context) (wait func(), err error) {
	if f.path == "" {
		return func() {}, nil
	}
	wait, err = watchfile.Watch(ctx, f.path, func() {
		f.mu.Lock()
		err := f.loadLocked(true)
		f.mu.Unlock()
		if err != nil && !errors.Is(err, errEmpty) {
			f.log.Warn("rules file not reloaded; the previous rules stay in force", "err", err)
		}
	}, func(err error) { f.log.Warn("watching the rules file", "err", err) })
	if err != nil {
		return nil, fmt.Errorf("watch rules file: %w", err)
	}
	return wait, nil
}
