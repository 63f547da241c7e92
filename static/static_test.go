package static

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
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
