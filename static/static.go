// Package static serves the browser bundles that esbuild writes into
// static/dist (see build.mjs). The default build embeds them; the "dev" build
// tag serves them from disk instead (static_dev.go).
//
// Every asset URL carries a content hash (URL); a request whose ?v= matches
// the file's current hash is cached for a year as immutable, anything else
// briefly, so a new release is never masked by a stale browser cache.
package static

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

const (
	immutableCache = "public, max-age=31536000, immutable"
	shortCache     = "no-cache"
	hashLen        = 12
)

// contentTypes maps the extensions esbuild emits to their types, so the
// answer does not depend on the host's mime tables.
var contentTypes = map[string]string{
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".map":   "application/json; charset=utf-8",
	".json":  "application/json; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".woff2": "font/woff2",
	".txt":   "text/plain; charset=utf-8",
}

// files is the dist directory (embedded, or on disk with -tags dev).
var files fs.FS = distFS()

var (
	hashesOnce sync.Once
	hashes     map[string]string
)

// fileHashes returns name → first 12 hex digits of the sha256 of each file,
// computed once. With -tags dev it is recomputed on every call (files change).
func fileHashes() map[string]string {
	if devMode {
		return computeHashes()
	}
	hashesOnce.Do(func() { hashes = computeHashes() })
	return hashes
}

func computeHashes() map[string]string {
	m := map[string]string{}
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		m[p] = hex.EncodeToString(sum[:])[:hashLen]
		return nil
	})
	return m
}

// URL returns the path of a dist file relative to the static mount, with its
// content hash: "dist/app.js?v=0123456789ab". An unknown name is returned
// without a hash (and will 404).
func URL(name string) string {
	name = strings.TrimPrefix(name, "/")
	if h, ok := fileHashes()[name]; ok {
		return "dist/" + name + "?v=" + h
	}
	return "dist/" + name
}

// Hash returns the content hash of a dist file, or "" if there is none.
func Hash(name string) string {
	return fileHashes()[strings.TrimPrefix(name, "/")]
}

// Handler serves the dist files. Mount it with the static prefix stripped,
// e.g. http.StripPrefix(base+"/static/", static.Handler()); it then answers
// "dist/<name>". Only GET and HEAD are allowed; directories are not listed.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	name, ok := strings.CutPrefix(p, "dist/")
	if !ok || name == "" {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	ext := path.Ext(name)
	ct, ok := contentTypes[ext]
	if !ok {
		ct = mime.TypeByExtension(ext)
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", "nosniff")
	sum := fileHashes()[name]
	if v := r.URL.Query().Get("v"); v != "" && v == sum {
		h.Set("Cache-Control", immutableCache)
	} else {
		h.Set("Cache-Control", shortCache)
	}
	if sum != "" {
		h.Set("ETag", `"`+sum+`"`)
	}
	// ServeContent handles HEAD, Range and If-None-Match (via the ETag).
	http.ServeContent(w, r, name, modTime, bytes.NewReader(b))
}
