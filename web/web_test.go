package web

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/static"
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
		{"notallowed", NotAllowed(Page{Version: "1.2.3"}, "Mallory <M>", "mallory@elsewhere.net", "alice@corp.com")},
		{"notallowed-nobody", NotAllowed(Page{BasePath: "/term", Version: "1.2.3"}, "eve@corp.com", "eve@corp.com", "")},
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
	want := `<script id="termhost-config" type="application/json">{"basePath":"/term","terminalId":"id1","version":"v9","role":"driver",` +
		`"playerScript":"/term/static/dist/player.js?v=` + static.Hash("player.js") + `","playerStyle":"/term/static/dist/player.css?v=` + static.Hash("player.css") + `"}`
	if !bytes.Contains(html, []byte(want)) {
		t.Errorf("config script missing or wrong; want %s in\n%s", want, html)
	}
}

// TestConfigHosts: the host list goes into the app's config as given, and
// a host's name or URL that reads "</script>" cannot end the data block
// (the page's script would then run what follows as markup). Only the
// app's pages carry it.
func TestConfigHosts(t *testing.T) {
	evil := ext.HostList{Home: ext.HomeHost{Name: "box1</script><b>"}, Hosts: []ext.Host{{Name: "</script><script>alert(1)</script>", URL: "https://x/</script>&'\"/"}}}
	html := string(render(t, Workbench(Page{Role: "owner", Hosts: &evil})))
	const open = `<script id="termhost-config" type="application/json">`
	_, rest, ok := strings.Cut(html, open)
	if !ok {
		t.Fatalf("no config script in\n%s", html)
	}
	raw, after, _ := strings.Cut(rest, "</script>")
	if !strings.HasPrefix(after, `<script src="`) {
		t.Errorf("the config block ends early: after it comes %.80q", after)
	}
	var c struct {
		Hosts *ext.HostList `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatalf("config %q: %v", raw, err)
	}
	if c.Hosts == nil || !reflect.DeepEqual(*c.Hosts, evil) {
		t.Errorf("config hosts %+v, want %+v", c.Hosts, evil)
	}
	if got := string(render(t, NotFound(Page{Hosts: &evil}))); strings.Contains(got, `"hosts"`) {
		t.Errorf("the not-found page carries the host list:\n%s", got)
	}
	if got := string(render(t, Workbench(Page{Role: "viewer"}))); strings.Contains(got, `"hosts"`) {
		t.Errorf("a page given no list names hosts:\n%s", got)
	}
}

// scriptTagRE matches every <script …> opening tag.
var scriptTagRE = regexp.MustCompile(`<script[^>]*>`)

// Pages run under script-src 'self': every script is a bundle (src) or a
// JSON data block, never inline code.
func TestNoInlineScripts(t *testing.T) {
	tests := []struct {
		name string
		c    templ.Component
		want string // the bundle the page must load ("" for none)
	}{
		{"login", Login(Page{BasePath: "/term"}), "/term/static/dist/login.js?v="},
		{"workbench", Workbench(Page{Role: "owner"}), "/static/dist/app.js?v="},
		{"notfound", NotFound(Page{}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			html := render(t, tc.c)
			for _, tag := range scriptTagRE.FindAll(html, -1) {
				if !bytes.Contains(tag, []byte(` src="`)) && !bytes.Contains(tag, []byte(`type="application/json"`)) {
					t.Errorf("%s: inline script %s in\n%s", tc.name, tag, html)
				}
			}
			if tc.want != "" && !bytes.Contains(html, []byte(`src="`+tc.want)) {
				t.Errorf("%s: no script %s in\n%s", tc.name, tc.want, html)
			}
		})
	}
}

// Only a page rendered for tests loads the test build with the hook: a
// production page never exposes window.__termhost.
func TestTestHooksBundle(t *testing.T) {
	for _, tc := range []struct {
		hooks      bool
		want, deny string
	}{
		{false, "/static/dist/app.js?v=", "app-test.js"},
		{true, "/static/dist/app-test.js?v=", `/static/dist/app.js?`},
	} {
		html := render(t, Workbench(Page{Role: "owner", TestHooks: tc.hooks}))
		if !bytes.Contains(html, []byte(tc.want)) || bytes.Contains(html, []byte(tc.deny)) {
			t.Errorf("Workbench(TestHooks %v): want %s and no %s in\n%s", tc.hooks, tc.want, tc.deny, html)
		}
	}
}

// TestNamesCleaned: a name, an identity or a title with direction or
// control characters shows without them (a right-to-left override would
// show "Owner\u202Eeve" as someone else).
func TestNamesCleaned(t *testing.T) {
	page := string(render(t, NotAllowed(Page{Version: "1.2.3"}, "Mall\u202eory\x1b[31m", "eve\u2066@corp.com", "ali\u200fce")))
	for _, bad := range []string{"\u202e", "\x1b", "\u2066", "\u200f"} {
		if strings.Contains(page, bad) {
			t.Errorf("the not-allowed page holds %q:\n%s", bad, page)
		}
	}
	for _, want := range []string{"Mallory[31m", "eve@corp.com", "alice"} {
		if !strings.Contains(page, want) {
			t.Errorf("the not-allowed page lacks %q", want)
		}
	}
}
