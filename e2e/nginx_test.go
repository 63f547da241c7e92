//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
)

// nginxPath finds nginx. Missing nginx fails the test: the reverse-proxy
// deployment is only checked here.
func nginxPath(t *testing.T) string {
	t.Helper()
	return toolPath(t, "nginx", "TERMHOST_NGINX", "/usr/sbin/nginx", "nginx-light")
}

// toolPath finds a program the tests need: $env, then the Debian path,
// then PATH. A missing one fails the test, naming the package (.ci/deps
// installs it).
func toolPath(t *testing.T, name, env, debianPath, pkg string) string {
	t.Helper()
	for _, p := range []string{os.Getenv(env), debianPath} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Fatalf("%s not found: install the Debian package %q (apt-get install -y %s) or set %s", name, pkg, pkg, env)
	return ""
}

// layout is how nginx exposes termhost.
type layout struct {
	name string
	// prefix is where termhost appears on nginx: "" (at /) or "/term".
	prefix string
	// basePath is termhost's --base-path.
	basePath string
	// strip: nginx strips the prefix and sends X-Forwarded-Prefix; termhost
	// trusts 127.0.0.1 and serves at "/".
	strip bool
}

var (
	atRoot      = layout{name: "root"}
	underPrefix = layout{name: "prefix", prefix: "/term", basePath: "/term"}
	stripPrefix = layout{name: "strip", prefix: "/term", strip: true}
)

// nginxConfig is a self-contained nginx config: everything nginx writes
// goes to the test's directory (.Dir); one process, in the foreground.
// httpBlock is what goes inside the http block (upstreams and servers).
func nginxConfig(name, httpBlock string) *template.Template {
	return template.Must(template.New(name).Parse(`daemon off;
master_process off;
worker_processes 1;
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log info;
events { worker_connections 256; }
http {
	access_log {{.Dir}}/access.log;
	client_body_temp_path {{.Dir}}/client_body;
	proxy_temp_path {{.Dir}}/proxy;
	fastcgi_temp_path {{.Dir}}/fastcgi;
	uwsgi_temp_path {{.Dir}}/uwsgi;
	scgi_temp_path {{.Dir}}/scgi;
` + httpBlock + "}\n"))
}

// nginxConf proxies one termhost at a layout's location.
var nginxConf = nginxConfig("nginx", `	upstream backend { server {{.Backend}}; }
	server {
		listen 127.0.0.1:{{.Port}};
		# The location block is the README's nginx snippet.
		location {{.Location}} {
			proxy_pass {{.Pass}};
			proxy_http_version 1.1;
			proxy_set_header Upgrade $http_upgrade;
			proxy_set_header Connection "upgrade";
			proxy_set_header Host $host;
{{- if .Strip}}
			proxy_set_header X-Forwarded-Prefix {{.Prefix}};
{{- end}}
			proxy_read_timeout 3600s;
			proxy_buffering off;
		}
	}
`)

// nginx is one nginx process started by a test.
type nginx struct {
	URL  string // http://127.0.0.1:port (no prefix)
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startNginx runs nginx in front of backend ("127.0.0.1:port") in the given
// layout, and stops it (and waits for it) in t.Cleanup.
func startNginx(t *testing.T, l layout, backend string) *nginx {
	t.Helper()
	data := map[string]any{"Backend": backend, "Strip": l.strip, "Prefix": l.prefix,
		"Location": "/", "Pass": "http://backend"}
	if l.prefix != "" {
		data["Location"] = l.prefix + "/"
		if l.strip {
			data["Pass"] = "http://backend/" // replaces the matched /term/ with /
		}
	}
	return startNginxWith(t, nginxConf, data)
}

// startNginxWith runs nginx with the config tmpl renders from data (see
// runNginx), trying other ports while the one picked was taken meanwhile.
func startNginxWith(t *testing.T, tmpl *template.Template, data map[string]any) *nginx {
	t.Helper()
	bin := nginxPath(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		n, err := runNginx(t, bin, tmpl, data)
		if err == nil {
			return n
		}
		lastErr = err
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	t.Fatalf("start nginx: %v", lastErr)
	return nil
}

// runNginx runs nginx with the config conf renders from data plus Dir (the
// test's directory for everything nginx writes) and Port (a free port).
func runNginx(t *testing.T, bin string, tmpl *template.Template, data map[string]any) (*nginx, error) {
	dir := t.TempDir()
	port := freePort(t)
	data["Dir"], data["Port"] = dir, port
	var conf bytes.Buffer
	if err := tmpl.Execute(&conf, data); err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	n := &nginx{URL: "http://127.0.0.1:" + strconv.Itoa(port), dir: dir, cmd: cmd, done: make(chan struct{})}
	var exitErr error
	go func() { exitErr = cmd.Wait(); close(n.done) }()
	errorLog := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return stderr.String() + string(b)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-n.done:
			return nil, fmt.Errorf("nginx exited (%v):\n%s\nconfig:\n%s", exitErr, errorLog(), conf.String())
		default:
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			n.stop()
			return nil, fmt.Errorf("nginx did not listen on %d within 10 s:\n%s", port, errorLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		n.stop()
		if t.Failed() {
			t.Logf("nginx error log:\n%s", errorLog())
		}
	})
	return n, nil
}

// stop ends the nginx process this test started (fast shutdown, then kill)
// and waits for it.
func (n *nginx) stop() {
	select {
	case <-n.done:
		return
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(5 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

// accessLog is what nginx logged so far (a WebSocket is logged when it ends).
func (n *nginx) accessLog() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "access.log"))
	return string(b)
}

// newNginxEnv is termhost with an owner token behind a real nginx in layout
// l, with PublicURL set to nginx's URL; browser starts Chromium too.
func newNginxEnv(t *testing.T, l layout, browser bool) *env {
	t.Helper()
	token := "e2e-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var ngx *nginx
	// nginx needs the backend's address and termhost needs nginx's. nginx's
	// cleanup, registered after the server's, runs first.
	s := testserver.NewAt(t, func(backendURL string) []testserver.Option {
		ngx = startNginx(t, l, strings.TrimPrefix(backendURL, "http://"))
		return []testserver.Option{shellOptions(), testserver.Token(token), testserver.TestHooks(),
			testserver.Handlers(func(c *handlers.Config) {
				c.Version, c.BasePath, c.PublicURL = "e2e", l.basePath, ngx.URL+l.prefix
				if l.strip {
					c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
				}
			})}
	})
	e := &env{t: t, m: s.Manager, hooks: s.Hooks, srv: s.Handler, backend: s.Server, URL: ngx.URL + l.prefix, home: s.Home, token: token, nginx: ngx}
	if browser {
		t.Cleanup(e.startBrowser())
	}
	return e
}

// get fetches a URL without the browser (no cookies).
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}
