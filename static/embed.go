//go:build !dev

package static

import (
	"embed"
	"io/fs"
	"time"
)

//go:embed dist
var dist embed.FS

const devMode = false

// modTime is zero for embedded files: caching relies on the ETag and the
// content-hash query, not on Last-Modified.
var modTime time.Time

func distFS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("static: " + err.Error()) // programmer error: the embed pattern is fixed
	}
	return sub
}
