//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// conformanceScenarios are the server scenarios of the MCP conformance
// suite (npm @modelcontextprotocol/conformance 0.1.13) that apply to
// termhost's tools server; the others need the suite's own reference
// tools, prompts and resources (test_simple_text, test_reconnection, …) or
// capabilities termhost does not offer (logging, completions, sampling,
// elicitation, resources, prompts).
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"}

// TestMCPConformance runs those scenarios against the real "termhost serve
// --mcp" over Streamable HTTP. The suite has no option for credentials, so
// it reaches /mcp through a loopback reverse proxy that adds the owner
// token, as an agent configured with the token's header would; the proxy
// passes Host and Origin on untouched, and its origin is allowed with
// --allowed-origin, as for any proxy in front of termhost. The DNS
// rebinding scenario's foreign Host and Origin must still be refused.
func TestMCPConformance(t *testing.T) {
	t.Parallel()
	suite, err := filepath.Abs("../node_modules/.bin/conformance")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("the MCP conformance suite is not installed (%v): run npm ci", err)
	}
	bin := buildTermhost(t)
	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyURL := "http://" + proxyLn.Addr().String()
	const token = "conformance-owner-token-0123456789"
	home := t.TempDir()
	serve := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--mcp", "--token", token, "--allowed-origin", proxyURL,
		"--shell", "/bin/bash", "--log-level", "warn")
	serve.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = t.Output()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := regexp.MustCompile(`(https?://\S+)/#token=`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-urls:
	case <-time.After(60 * time.Second):
		t.Fatal("termhost serve printed no login URL")
	}
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	// The proxy answers while it may still be forwarding the request: the
	// MCP server replies as soon as it has the body, before the proxy's
	// transport has read that body's EOF. Full duplex keeps net/http from
	// closing the request body under the transport when the answer starts;
	// without it the transport's write failed ("invalid Read on closed
	// Body"), it closed the connection to termhost mid-answer, and the
	// suite never got its reply (60 s timeout, once in ~50 runs under load).
	// The trace of requests is for the failure message.
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		r.Out.Header.Set("Authorization", "Bearer "+token)
	}, ModifyResponse: func(res *http.Response) error {
		t.Logf("proxy: %s %s session %q: %d %s", res.Request.Method, res.Request.URL.Path,
			res.Request.Header.Get("Mcp-Session-Id")+res.Header.Get("Mcp-Session-Id"), res.StatusCode, res.Header.Get("Content-Type"))
		return nil
	}}
	fullDuplex := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Errorf("proxy: %v", err)
		}
		rp.ServeHTTP(w, r)
	})
	proxy := &http.Server{Handler: fullDuplex, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = proxy.Serve(proxyLn) }()
	t.Cleanup(func() { _ = proxy.Close() })

	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.CommandContext(t.Context(), suite, "server", "--url", proxyURL+"/mcp", "--scenario", scenario, "-o", dir)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			out, err := cmd.CombinedOutput()
			files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
			if more, _ := filepath.Glob(filepath.Join(dir, "checks.json")); len(more) > 0 {
				files = append(files, more...)
			}
			if err != nil || len(files) == 0 {
				t.Fatalf("conformance %s: %v, checks %v\n%s", scenario, err, files, out)
			}
			for _, f := range files {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				var checks []struct {
					ID, Status, ErrorMessage string
					Details                  json.RawMessage
				}
				if err := json.Unmarshal(raw, &checks); err != nil || len(checks) == 0 {
					t.Fatalf("%s: %v\n%s", f, err, raw)
				}
				for _, c := range checks {
					if c.Status != "SUCCESS" && c.Status != "INFO" {
						t.Errorf("conformance %s: check %s is %s: %s\ndetails: %s", scenario, c.ID, c.Status, c.ErrorMessage, c.Details)
					} else {
						t.Logf("conformance %s: check %s %s", scenario, c.ID, c.Status)
					}
				}
			}
		})
	}
}
