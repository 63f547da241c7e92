package sso

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/termhost/termhost/internal/watchfile"
)

// Directory is the roles in force: the command line's lists plus, when
// set, a roles file's, re-read by Reload (SIGHUP) and whenever the file
// changes. New requests get the new roles; OnChange tells the server,
// which closes the connections of people whose role was lowered. The watcher skips an empty file (a write in
// place in progress); SIGHUP (Reload) applies one.
type Directory struct {
	base Roles
	path string
	log  *slog.Logger
	cur  atomic.Pointer[Roles]

	mu      sync.Mutex
	version uint64
	changed chan struct{} // closed and replaced on every successful load
	hooks   map[*func(*Roles)]bool
}

// OnChange calls f with the new roles after every successful load, on
// the loading goroutine, before Reload returns (so that what follows a
// SIGHUP already sees the change applied); remove stops it.
func (d *Directory) OnChange(f func(*Roles)) (remove func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hooks == nil {
		d.hooks = map[*func(*Roles)]bool{}
	}
	key := &f
	d.hooks[key] = true
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		delete(d.hooks, key)
	}
}

// NewDirectory loads the roles: base plus the file at path, if any. A file
// that does not parse is an error here; later, a bad edit keeps the roles
// in force (and is logged).
func NewDirectory(base Roles, path string, log *slog.Logger) (*Directory, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Directory{base: base, path: path, log: log.With("component", "roles"), changed: make(chan struct{})}
	if err := d.Reload(); err != nil {
		return nil, err
	}
	return d, nil
}

// WithLogger makes d log to log (the roles are loaded before the server's
// logger exists).
func (d *Directory) WithLogger(log *slog.Logger) *Directory {
	d.log = log.With("component", "roles")
	return d
}

// Roles are the roles in force.
func (d *Directory) Roles() *Roles { return d.cur.Load() }

// Changed is closed at the next successful load.
func (d *Directory) Changed() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// Reload re-reads the roles file.
func (d *Directory) Reload() error { return d.load(false) }

// errEmpty: the watcher saw an empty file, most likely truncated by a write
// in place that is still going on (its next event reloads).
var errEmpty = errors.New("roles file is empty")

func (d *Directory) load(skipEmpty bool) error {
	r := d.base.Merge(Roles{})
	if d.path != "" {
		data, err := os.ReadFile(d.path)
		if err != nil {
			return fmt.Errorf("read roles file: %w", err)
		}
		if skipEmpty && len(bytes.TrimSpace(data)) == 0 {
			return errEmpty
		}
		fr, err := ParseRoles(data)
		if err != nil {
			return fmt.Errorf("roles file %s: %w", d.path, err)
		}
		r = r.Merge(fr)
		if fr.Contact != "" {
			r.Contact = fr.Contact
		}
	}
	d.cur.Store(&r)
	d.mu.Lock()
	d.version++
	close(d.changed)
	d.changed = make(chan struct{})
	hooks := make([]func(*Roles), 0, len(d.hooks))
	for f := range d.hooks {
		hooks = append(hooks, *f)
	}
	d.mu.Unlock()
	for _, f := range hooks {
		f(&r)
	}
	d.log.Info("roles loaded", "owners", len(r.Owners), "drivers", len(r.Drivers), "viewers", len(r.Viewers), "file", d.path)
	return nil
}

// Watch re-reads the roles file whenever it changes, until ctx ends; the
// returned wait waits for the watcher to end. It watches the file's
// directory, so an editor's or a deploy tool's write-and-rename is seen as
// well as a write in place. The watch is in place when Watch returns.
// Without a file there is nothing to watch.
func (d *Directory) Watch(ctx context.Context) (wait func(), err error) {
	if d.path == "" {
		return func() {}, nil
	}
	wait, err = watchfile.Watch(ctx, d.path, func() {
		if err := d.load(true); err != nil && !errors.Is(err, errEmpty) {
			// A half-written file or a typo: keep the roles in force.
			d.log.Warn("roles file not reloaded; the previous roles stay in force", "err", err)
		}
	}, func(err error) { d.log.Warn("watching the roles file", "err", err) })
	if err != nil {
		return nil, fmt.Errorf("watch roles file: %w", err)
	}
	return wait, nil
}
