// Package static serves the browser bundles that esbuild writes into
// static/dist (see build.mjs). The default build embeds them; the "dev" build
// tag serves them from disk instead (static_dev.go).
//
// Every asset URL carries a content hash (URL); a request whose ?v= matches
// the file's current hash is cached for a year as immutable, anything else
// briefly, so a new release is never masked by a stale browser cache.
//
// build.mjs writes a brotli (.br) and a gzip (.gz) copy of every bundle; a
// request is answered with the smallest one its Accept-Encoding allows
// (Content-Encoding, Vary: Accept-Encoding), which makes a first visit
// about a fifth of the bundles' size.
package static

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
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
	encoding := ""
	if enc, ok := precompressed(name); ok {
		// Caches must key the answer on the request's encodings.
		h.Add("Vary", "Accept-Encoding")
		if encoding = pickEncoding(r.Header.Get("Accept-Encoding"), enc); encoding != "" {
			b = enc[encoding]
			h.Set("Content-Encoding", encoding)
		}
	}
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
		tag := sum
		if encoding != "" {
			tag += "-" + encoding // each encoding is its own representation
		}
		h.Set("ETag", `"`+tag+`"`)
	}
	// ServeContent handles HEAD, Range and If-None-Match (via the ETag).
	http.ServeContent(w, r, name, modTime, bytes.NewReader(b))
}

// encodings are the precompressed copies build.mjs writes, best first.
var encodings = []struct{ name, ext string }{{"br", ".br"}, {"gzip", ".gz"}}

// precompressed returns the precompressed copies of a file by encoding
// (none with -tags dev: a watch build does not refresh them).
func precompressed(name string) (map[string][]byte, bool) {
	if devMode {
		return nil, false
	}
	out := map[string][]byte{}
	for _, e := range encodings {
		if b, err := fs.ReadFile(files, name+e.ext); err == nil {
			out[e.name] = b
		}
	}
	return out, len(out) > 0
}

// pickEncoding is the first of our encodings (br, then gzip) that the
// Accept-Encoding header accepts with a non-zero q, and that we have; ""
// for the identity. "*" accepts any encoding not named.
func pickEncoding(accept string, have map[string][]byte) string {
	q := map[string]float64{}
	for part := range strings.SplitSeq(accept, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		weight := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			weight = f
		}
		if coding = strings.ToLower(strings.TrimSpace(coding)); coding != "" {
			q[coding] = weight
		}
	}
	for _, e := range encodings {
		if _, ok := have[e.name]; !ok {
			continue
		}
		w, named := q[e.name]
		if !named {
			w, named = q["*"]
		}
		if named && w > 0 {
			return e.name
		}
	}
	return ""
}
