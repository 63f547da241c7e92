// Package statefile keeps small JSON documents in termhost's state directory,
// replaced atomically so that a crash leaves the old or the new document,
// never half of one.
package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// ErrCorrupt wraps a document that exists but cannot be decoded.
var ErrCorrupt = errors.New("corrupt state file")

// File is one JSON document: private to the user (file 0600, directory 0700).
type File struct {
	path string
	// Loosened is the mode dir had when Open found it open to others (and
	// made it 0700), else 0: the caller logs it.
	Loosened os.FileMode
}

// Open prepares dir for the document name: see Private.
func Open(dir, name string) (*File, error) {
	loose, err := Private(dir)
	if err != nil {
		return nil, err
	}
	return &File{path: filepath.Join(dir, name), Loosened: loose}, nil
}

// Private makes sure dir exists and only its owner may enter it: created
// 0700 when missing; one that exists with access for the group or others
// (made by hand, or by an umask) is tightened to 0700 and its old mode
// returned, so that the caller can say so. What is not a directory, or
// cannot be tightened, is an error: termhost does not keep secrets there.
func Private(dir string) (loosened os.FileMode, err error) {
	if dir == "" {
		return 0, errors.New("state: no state directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("state directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, fmt.Errorf("state directory: %w", err)
	}
	if !fi.IsDir() {
		return 0, fmt.Errorf("state directory %s is not a directory", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return 0, fmt.Errorf("state directory %s is open to others (%v) and cannot be made private: %w", dir, perm, err)
		}
		return perm, nil
	}
	return 0, nil
}

// Path is where the document lives.
func (f *File) Path() string { return f.path }

// Load decodes the document into v. A missing document is not an error
// (found is false); one that does not decode wraps ErrCorrupt.
func (f *File) Load(v any) (found bool, err error) {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", f.path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%w %s: %w", ErrCorrupt, f.path, err)
	}
	return true, nil
}

// SetAside renames a document that cannot be used (corrupt, or of a version
// this termhost does not know) to <name>.<why> (replacing an older one), so
// that the next Save does not destroy what a person may want to read.
func (f *File) SetAside(why string) (string, error) {
	aside := f.path + "." + why
	if err := os.Rename(f.path, aside); err != nil {
		return "", fmt.Errorf("set aside %s: %w", f.path, err)
	}
	return aside, nil
}

// Save replaces the document with v: written to a temporary file in the same
// directory, synced, renamed over the old one, then the directory synced so
// that the rename itself survives a power loss.
func (f *File) Save(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", f.path, err)
	}
	dir := filepath.Dir(f.path)
	if err := writeAtomically(f.path, data); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return syncDir(dir)
}

// writeAtomically is renameio.WriteFile without its copying of an existing
// file's mode: the document is always 0600, whatever was there before.
func writeAtomically(path string, data []byte) error {
	t, err := renameio.NewPendingFile(path, renameio.WithStaticPermissions(0o600), renameio.WithTempDir(filepath.Dir(path)))
	if err != nil {
		return err
	}
	defer func() { _ = t.Cleanup() }()
	if _, err := t.Write(data); err != nil {
		return err
	}
	return t.CloseAtomicallyReplace()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
