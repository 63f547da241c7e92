package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

func TestURL(t *testing.T) {
	for _, name := range []string{"app.js", "app.css", "vendor.js", "vendor.css"} {
		t.Run(name, func(t *testing.T) {
			b, err := fs.ReadFile(files, name)
			if err != nil {
				t.Fatalf("dist/%s missing (run npm run build): %v", name, err)
			}
			sum := sha256.Sum256(b)
			want := "dist/" + name + "?v=" + hex.EncodeToString(sum[:])[:12]
			if got := URL(name); got != want {
				t.Errorf("URL(%q) = %q, want %q", name, got, want)
			}
		})
	}
	if got := URL("nope.js"); got != "dist/nope.js" {
		t.Errorf(`URL("nope.js") = %q, want "dist/nope.js"`, got)
	}
}

func TestHandler(t *testing.T) {
	h := Handler()
	appJS := URL("app.js")
	v := appJS[strings.Index(appJS, "?v=")+3:]
	tests := []struct {
		name, method, target string
		code                 int
		contentType, cache   string
	}{
		{"hashed js", "GET", "/" + appJS, 200, "text/javascript; charset=utf-8", immutableCache},
		{"unhashed js", "GET", "/dist/app.js", 200, "text/javascript; charset=utf-8", shortCache},
		{"wrong hash", "GET", "/dist/app.js?v=000000000000", 200, "text/javascript; charset=utf-8", shortCache},
		{"css", "GET", "/" + URL("app.css"), 200, "text/css; charset=utf-8", immutableCache},
		{"sourcemap", "GET", "/" + URL("app.js.map"), 200, "application/json; charset=utf-8", immutableCache},
		{"head", "HEAD", "/dist/app.js?v=" + v, 200, "text/javascript; charset=utf-8", immutableCache},
		{"missing", "GET", "/dist/nope.js", 404, "", ""},
		{"dir", "GET", "/dist/", 404, "", ""},
		{"outside dist", "GET", "/static.go", 404, "", ""},
		{"traversal", "GET", "/dist/../static.go", 404, "", ""},
		{"post", "POST", "/dist/app.js", 405, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, nil))
			if rec.Code != tc.code {
				t.Fatalf("%s %s: code %d, want %d", tc.method, tc.target, rec.Code, tc.code)
			}
			if tc.code != 200 {
				return
			}
			if got := rec.Header().Get("Content-Type"); got != tc.contentType {
				t.Errorf("%s: Content-Type %q, want %q", tc.target, got, tc.contentType)
			}
			if got := rec.Header().Get("Cache-Control"); got != tc.cache {
				t.Errorf("%s: Cache-Control %q, want %q", tc.target, got, tc.cache)
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s: no nosniff", tc.target)
			}
		})
	}

	t.Run("etag revalidation", func(t *testing.T) {
		req := httptest.NewRequest("GET", "/dist/app.js", nil)
		req.Header.Set("If-None-Match", `"`+v+`"`)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			t.Errorf("If-None-Match current hash: code %d, want 304", rec.Code)
		}
	})
}

func TestHashFormat(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{12}$`)
	for name, h := range fileHashes() {
		if !re.MatchString(h) {
			t.Errorf("hash of %s = %q", name, h)
		}
	}
}

// Every bundle and stylesheet has gzip and brotli copies that decode to it
// (build.mjs writes them; a stale copy would serve an old app).
func TestPrecompressedCopiesMatch(t *testing.T) {
	decoders := map[string]func(io.Reader) (io.Reader, error){
		".gz": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		".br": func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
	}
	for _, name := range []string{"app.js", "app-test.js", "vendor.js", "login.js", "app.css", "vendor.css"} {
		for ext, decode := range decoders {
			t.Run(name+ext, func(t *testing.T) {
				want, err := fs.ReadFile(files, name)
				if err != nil {
					t.Fatal(err)
				}
				enc, err := fs.ReadFile(files, name+ext)
				if err != nil {
					t.Fatalf("%s%s missing (run npm run build): %v", name, ext, err)
				}
				r, err := decode(bytes.NewReader(enc))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r)
				if err != nil {
					t.Fatalf("decode %s%s: %v", name, ext, err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s%s decodes to %d bytes that differ from %s (%d bytes): run npm run build", name, ext, len(got), name, len(want))
				}
			})
		}
	}
}

func TestContentEncoding(t *testing.T) {
	h := Handler()
	plain, _ := fs.ReadFile(files, "app.js")
	br, _ := fs.ReadFile(files, "app.js.br")
	gz, _ := fs.ReadFile(files, "app.js.gz")
	tests := []struct {
		name, accept, target string
		wantEncoding         string
		wantBody             []byte
	}{
		{"brotli preferred", "gzip, deflate, br, zstd", "/" + URL("app.js"), "br", br},
		{"gzip only", "gzip", "/" + URL("app.js"), "gzip", gz},
		{"brotli refused", "br;q=0, gzip;q=0.5", "/" + URL("app.js"), "gzip", gz},
		{"wildcard", "*", "/" + URL("app.js"), "br", br},
		{"wildcard minus brotli", "br;q=0, *", "/" + URL("app.js"), "gzip", gz},
		{"none", "", "/" + URL("app.js"), "", plain},
		{"identity only", "identity", "/" + URL("app.js"), "", plain},
		{"case and spaces", " GZIP ; q=1 ", "/" + URL("app.js"), "gzip", gz},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tc.target, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if got := rec.Header().Get("Content-Encoding"); got != tc.wantEncoding {
				t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", tc.accept, got, tc.wantEncoding)
			}
			if got := rec.Header().Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Accept-Encoding %q: Vary %q, want Accept-Encoding", tc.accept, got)
			}
			if got := rec.Header().Get("Content-Type"); got != "text/javascript; charset=utf-8" {
				t.Errorf("Accept-Encoding %q: Content-Type %q", tc.accept, got)
			}
			if !bytes.Equal(rec.Body.Bytes(), tc.wantBody) {
				t.Errorf("Accept-Encoding %q: body of %d bytes, want the %q copy (%d bytes)", tc.accept, rec.Body.Len(), tc.wantEncoding, len(tc.wantBody))
			}
		})
	}
	t.Run("source maps are not precompressed", func(t *testing.T) {
		req := httptest.NewRequest("GET", "/dist/app.js.map", nil)
		req.Header.Set("Accept-Encoding", "br, gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Header().Get("Content-Encoding"); got != "" {
			t.Errorf("app.js.map: Content-Encoding %q, want none", got)
		}
	})
}
