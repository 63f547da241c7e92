package web

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/a-h/templ"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// hashRE masks the content hashes of the bundles so the goldens do not change
// with every rebuild of static/dist.
var hashRE = regexp.MustCompile(`\?v=[0-9a-f]{12}`)

func render(t *testing.T, c templ.Component) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		c    templ.Component
	}{
		{"workbench", Workbench(Page{Version: "1.2.3", Role: "owner"})},
		{"workbench-terminal-basepath", Workbench(Page{BasePath: "/term", TerminalID: "abc123", Version: "1.2.3", Role: "driver"})},
		{"workbench-viewer-escaping", Workbench(Page{BasePath: "/term/", TerminalID: `x"</script><b>`, Version: "dev", Role: "viewer"})},
		{"notfound", NotFound(Page{TerminalID: "gone42", Version: "1.2.3", Role: "owner"})},
		{"notfound-basepath", NotFound(Page{BasePath: "/term", TerminalID: "<img>", Version: "1.2.3", Role: "viewer"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hashRE.ReplaceAll(render(t, tc.c), []byte("?v=HASH"))
			path := filepath.Join("testdata", tc.name+".golden.html")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./web -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: rendered HTML differs from %s (go test ./web -update to accept)\n--- got ---\n%s\n--- want ---\n%s", tc.name, path, got, want)
			}
		})
	}
}

func TestAssetsHashed(t *testing.T) {
	html := render(t, Workbench(Page{BasePath: "/term"}))
	for _, name := range []string{"app.js", "vendor.js", "app.css", "vendor.css"} {
		re := regexp.MustCompile(`"/term/static/dist/` + regexp.QuoteMeta(name) + `\?v=[0-9a-f]{12}"`)
		if !re.Match(html) {
			t.Errorf("Workbench(BasePath /term): no hashed URL for %s in\n%s", name, html)
		}
	}
	nf := render(t, NotFound(Page{}))
	if bytes.Contains(nf, []byte("app.js")) || bytes.Contains(nf, []byte("vendor.js")) {
		t.Errorf("NotFound loads the app bundles:\n%s", nf)
	}
	if !bytes.Contains(nf, []byte(`href="/"`)) {
		t.Errorf("NotFound has no link to the workbench:\n%s", nf)
	}
}

func TestConfigJSON(t *testing.T) {
	html := render(t, Workbench(Page{BasePath: "/term/", TerminalID: "id1", Version: "v9", Role: "driver"}))
	want := `<script id="termhost-config" type="application/json">{"basePath":"/term","terminalId":"id1","version":"v9","role":"driver"}`
	if !bytes.Contains(html, []byte(want)) {
		t.Errorf("config script missing or wrong; want %s in\n%s", want, html)
	}
}
