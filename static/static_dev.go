//go:build dev

package static

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// With -tags dev the bundles are read from static/dist on disk, so
// `npm run watch` and a browser reload are enough after an edit.
const devMode = true

var modTime time.Time

func distFS() fs.FS {
	dir := os.Getenv("TERMHOST_STATIC_DIR")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "dist")
	}
	return os.DirFS(dir)
}
