package serve

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/cmdtest"
)

// TestPublicURLInEveryLink runs a real "termhost serve --public-url" as it
// runs behind a reverse proxy, and drives it over loopback as the CLI and
// the agents on the server's machine do: every link they print or return
// starts with the public URL, path prefix included, never with the address
// they dialled; and the agent of serve --mcp can fetch fullOutputUrl with
// the credential it sends to /mcp.
func TestPublicURLInEveryLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string // besides --public-url
		path string   // the server's own base path, as dialled over loopback
	}{
		// nginx strips /term and forwards to the root.
		{"proxy strips the prefix", nil, ""},
		// nginx forwards /term/… as it is.
		{"base path", []string{"--base-path", "/term"}, "/term"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const public = "https://proxy.example/term"
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			_ = ln.Close()
			token := "public-url-test-owner-token"
			args := append([]string{"--listen", addr, "--public-url", public + "/", "--token", token, "--mcp", "--shell-integration", "on"}, tc.args...)
			_, login := startServe(t, args...)
			if login != public+"/#token="+token {
				t.Errorf("login link %q, want it on the public URL %s/", login, public)
			}
			base := "http://" + addr + tc.path
			env := map[string]string{"TERMHOST_SERVER": base, "TERMHOST_TOKEN": token}

			// The AHP client learns the public URL from initialize.
			c, err := client.Dial(t.Context(), base, client.Options{Token: token})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.LinkBase().String(); got != public {
				t.Errorf("client.LinkBase() = %q, want the public URL %q", got, public)
			}
			_ = c.Close()

			code, _, stderr := call(t, env, "run", "--name", "linked", "--record", "--share", "viewer", "--", "sh", "-c", "echo linked")
			if code != 0 {
				t.Fatalf("run: exit %d, stderr %q", code, stderr)
			}
			for _, want := range []*regexp.Regexp{
				regexp.MustCompile(`(?m)^termhost: terminal ` + regexp.QuoteMeta(public) + `/t/[A-Za-z0-9_-]+$`),
				regexp.MustCompile(`(?m)^termhost: recording ` + regexp.QuoteMeta(public) + `/t/[A-Za-z0-9_-]+/recording\.cast$`),
				regexp.MustCompile(`(?m)^termhost: share link \(.*\): ` + regexp.QuoteMeta(public) + `/t/[A-Za-z0-9_-]+#share=\S+$`),
			} {
				if !want.MatchString(stderr) {
					t.Errorf("run printed %q, want a line matching %s", stderr, want)
				}
			}

			// Over serve --mcp, with the owner token as the agent's bearer.
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			callTool := httpMCP(t, base+"/mcp", token, tr)
			opened := callTool("open_terminal", map[string]any{"name": "agent's"})
			id := opened["id"].(string)
			if u := opened["url"].(string); u != public+"/t/"+id {
				t.Errorf("serve --mcp open_terminal url %q, want %s/t/%s", u, public, id)
			}
			ran := callTool("run_command", map[string]any{"terminal": id, "command": "echo full-output-marker"})
			full, _ := ran["fullOutputUrl"].(string)
			if full != public+"/t/"+id+"/output.txt" {
				t.Fatalf("serve --mcp run_command fullOutputUrl %q, want %s/t/%s/output.txt", full, public, id)
			}
			if auth, _ := ran["fullOutputAuth"].(string); !strings.Contains(auth, "Authorization") {
				t.Errorf("serve --mcp run_command fullOutputAuth %q, want it to say which credential fetches fullOutputUrl", auth)
			}
			// The proxy maps the public URL to the server; the agent sends
			// what it sends to /mcp.
			fetch := func(auth string) (int, string) {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+tc.path+strings.TrimPrefix(full, public), nil)
				if err != nil {
					t.Fatal(err)
				}
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = resp.Body.Close() }()
				body, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(body)
			}
			if status, body := fetch("Bearer " + token); status != http.StatusOK || !strings.Contains(body, "full-output-marker") {
				t.Errorf("GET fullOutputUrl with the agent's bearer: HTTP %d %q, want 200 with the output", status, body)
			}
			if status, _ := fetch(""); status != http.StatusUnauthorized {
				t.Errorf("GET fullOutputUrl without a credential: HTTP %d, want 401", status)
			}
			if list := callTool("list_terminals", nil)["terminals"].([]any); len(list) != 1 || list[0].(map[string]any)["url"] != public+"/t/"+id {
				t.Errorf("serve --mcp list_terminals %v, want the terminal at %s/t/%s", list, public, id)
			}

			// Over stdio (termhost mcp), dialling the server over loopback.
			a := startStdioAgent(t, "stdio-agent", base, token)
			opened, text := a.call(t, "open_terminal", map[string]any{"name": "stdio agent's"}, false)
			sid := opened["id"].(string)
			if u := opened["url"].(string); u != public+"/t/"+sid || !strings.Contains(text, public+"/t/"+sid) {
				t.Errorf("termhost mcp open_terminal url %q (%q), want %s/t/%s", u, text, public, sid)
			}
			ran, _ = a.call(t, "run_command", map[string]any{"terminal": sid, "command": "echo stdio"}, false)
			if full := ran["fullOutputUrl"]; full != public+"/t/"+sid+"/output.txt" {
				t.Errorf("termhost mcp run_command fullOutputUrl %v, want %s/t/%s/output.txt", full, public, sid)
			}
			// The agent on stdio holds no credential of the server's: the
			// result does not claim it can fetch the link.
			if auth, ok := ran["fullOutputAuth"]; ok {
				t.Errorf("termhost mcp run_command fullOutputAuth %v, want none: the agent has no credential", auth)
			}

			code, stdout, stderr := call(t, env, "share", sid)
			if code != 0 || !regexp.MustCompile(`^`+regexp.QuoteMeta(public+"/t/"+sid)+`#share=\S+\n$`).MatchString(stdout) {
				t.Errorf("share: exit %d, stdout %q, stderr %q; want the link on the public URL", code, stdout, stderr)
			}

			code, stdout, stderr = call(t, env, "ls", "--json")
			var listed []struct{ ID, URL string } // the fields of ls --json read here
			if code != 0 || json.Unmarshal([]byte(stdout), &listed) != nil || len(listed) != 3 {
				t.Fatalf("ls --json: exit %d, stdout %q, stderr %q; want three terminals", code, stdout, stderr)
			}
			for _, e := range listed {
				if e.URL != public+"/t/"+e.ID {
					t.Errorf("ls --json: %s has url %q, want %s/t/%s", e.ID, e.URL, public, e.ID)
				}
			}
			code, stdout, _ = call(t, env, "ls")
			if code != 0 || strings.Contains(stdout, addr) || !strings.Contains(stdout, public+"/t/"+sid) {
				t.Errorf("ls: exit %d, stdout %q; want every URL on the public URL", code, stdout)
			}

			// attach: its stdin ends at once, which detaches.
			code, _, stderr = call(t, env, "attach", sid)
			if !strings.Contains(stderr, public+"/t/"+sid) || strings.Contains(stderr, addr+tc.path+"/t/") {
				t.Errorf("attach: exit %d, stderr %q; want the terminal's public URL", code, stderr)
			}
			// The links printed are taken back: the configured server
			// stated that public URL. Another host's is still refused,
			// before the terminal is touched.
			code, stdout, stderr = call(t, env, "share", "https://evil.example/term/t/"+sid)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, "is not on the configured server") {
				t.Errorf("share <another host's URL>: exit %d, stdout %q, stderr %q; want it refused", code, stdout, stderr)
			}
			code, stdout, stderr = call(t, env, "share", public+"/t/"+sid)
			if code != 0 || !strings.HasPrefix(stdout, public+"/t/"+sid+"#share=") {
				t.Errorf("share <its public URL>: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			code, _, stderr = call(t, env, "attach", public+"/t/"+sid)
			if code != 0 || !strings.Contains(stderr, "detached from "+public+"/t/"+sid) {
				t.Errorf("attach <its public URL>: exit %d, stderr %q", code, stderr)
			}
			if code, _, stderr = call(t, env, "kill", public+"/t/"+sid); code != 0 {
				t.Errorf("kill <its public URL>: exit %d, stderr %q", code, stderr)
			}
		})
	}
}

// TestServeLogsPublicURL: behind a reverse proxy, what serve logs and
// prints for people (the start-up line, the login link, the line of an
// upgrade in place) names the public URL, never the listener.
func TestServeLogsPublicURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := &upgradeServer{exe: filepath.Join(dir, "termhost"), stateDir: filepath.Join(dir, "state"), log: filepath.Join(dir, "log")}
	copyFile(t, cmdtest.Binary(t), s.exe, 0o755)
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	s.first = exec.Command(s.exe, "serve", "--listen", "127.0.0.1:0", "--shell", "/bin/bash", "--shell-integration", "off",
		"--token", testToken, "--state-dir", s.stateDir, "--log-level", "info", "--public-url", "https://proxy.example/term/")
	s.first.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "xdg")}
	s.first.Stdout, s.first.Stderr = logFile, logFile
	if err := s.first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(t) })
	waitFor(t, "the login link", func() bool { return strings.Contains(s.logText(), "https://proxy.example/term/#token="+testToken+"\n") })
	line := func(msg string) string {
		for _, l := range strings.Split(s.logText(), "\n") {
			if strings.Contains(l, `msg="`+msg+`"`) {
				return l
			}
		}
		return ""
	}
	if l := line("termhost listening"); !strings.Contains(l, " url=https://proxy.example/term/ ") || !strings.Contains(l, " websocket=wss://proxy.example/term/ws ") {
		t.Errorf("start-up line %q, want the public URL and WebSocket", l)
	}
	if err := s.first.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upgrade in the log", func() bool { return line("termhost upgraded in place") != "" })
	if l := line("termhost upgraded in place"); !strings.Contains(l, " url=https://proxy.example/term/ ") || strings.Contains(l, "127.0.0.1") {
		t.Errorf("upgrade line %q, want the public URL", l)
	}
}
