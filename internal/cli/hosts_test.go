package cli

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/cmdtest"
)

// box is a real termhost serve process behind a reverse proxy that
// records the credentials every request to it carries.
type box struct {
	name, token string
	url         string // the proxy's, as the hosts file names it
	mu          sync.Mutex
	creds       map[string]bool // Authorization headers and cookies seen
}

func (b *box) seen() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]bool{}
	for k := range b.creds {
		out[k] = true
	}
	return out
}

// startBox runs termhost serve named name with its own token and state,
// and the hosts file (if any), behind a recording proxy.
func startBox(t *testing.T, name, token string, args ...string) *box {
	t.Helper()
	_, login := cmdtest.StartServe(t, []string{"TERMHOST_TOKEN=" + token}, nil, append([]string{"--host-name", name}, args...)...)
	direct, _, _ := strings.Cut(login, "/#token=")
	b := &box{name: name, token: token, creds: map[string]bool{}}
	target, _ := url.Parse(direct)
	rp := httputil.NewSingleHostReverseProxy(target)
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		if h := r.Header.Get("Authorization"); h != "" {
			b.creds[h] = true
		}
		for _, c := range r.Cookies() {
			b.creds["cookie "+c.Value] = true
		}
		b.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	b.url = ps.URL
	return b
}

// deadURL is a loopback URL nothing listens on.
func deadURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String() + "/"
	_ = ln.Close()
	return u
}

// TestHostsAcrossBoxes: a home box whose hosts file names a second box,
// a stopped third box and itself. ls --all lists both boxes' terminals
// with their host (text and JSON) and reports the others on stderr, exit
// 0; attach, kill and run --host reach the second box with its own token,
// which only the second box ever sees, as only the home box sees the
// home's; an unknown host is a usage error.
func TestHostsAcrossBoxes(t *testing.T) {
	box2 := startBox(t, "box-2", "box2-secret-token")
	hostsFile := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hostsFile, []byte("home http://example.invalid/home/\nbox-2 "+box2.url+"/\nbox3 "+deadURL(t)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := startBox(t, "home", "home-secret-token", "--hosts", hostsFile)

	for _, b := range []*box{home, box2} {
		c, err := client.Dial(t.Context(), b.url, client.Options{Token: b.token, InitialSubscriptions: []string{ahp.RootURI}})
		if err != nil {
			t.Fatal(err)
		}
		claim := ahp.ClientClaim(c.ClientID())
		if _, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: ahp.TerminalURI("on-" + b.name), Claim: &claim}); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
	env := map[string]string{"TERMHOST_SERVER": home.url, "TERMHOST_TOKEN": home.token, "TERMHOST_TOKEN_BOX_2": box2.token}

	code, stdout, stderr := call(t, env, "ls", "--all")
	if code != 0 {
		t.Fatalf("ls --all: exit %d, %q", code, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^HOST\s+ID\s+NAME`),
		regexp.MustCompile(`(?m)^home\s+on-home\s`),
		regexp.MustCompile(`(?m)^box-2\s+on-box-2\s.*` + regexp.QuoteMeta(box2.url) + `/t/on-box-2$`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("ls --all stdout lacks %s:\n%s", want, stdout)
		}
	}
	if !strings.HasPrefix(stderr, "termhost ls: box3: unreachable: ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("ls --all stderr = %q, want one line saying box3 is unreachable", stderr)
	}

	code, stdout, _ = call(t, env, "ls", "--all", "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); code != 0 || err != nil {
		t.Fatalf("ls --all --json: exit %d, %v\n%s", code, err, stdout)
	}
	got := map[string]string{}
	for _, r := range rows {
		if e, ok := r["error"].(string); ok {
			got[r["host"].(string)] = "error: " + e
		} else {
			got[r["host"].(string)] = r["id"].(string)
		}
	}
	if got["home"] != "on-home" || got["box-2"] != "on-box-2" || !strings.HasPrefix(got["box3"], "error: unreachable") || len(got) != 3 {
		t.Errorf("ls --all --json by host = %v", got)
	}

	// Without box-2's token: it needs sign-in; ls still succeeds.
	noTok := map[string]string{"TERMHOST_SERVER": home.url, "TERMHOST_TOKEN": home.token}
	code, _, stderr = call(t, noTok, "ls", "--all")
	if code != 0 || !strings.Contains(stderr, "termhost ls: box-2: host box-2 needs sign-in: set TERMHOST_TOKEN_BOX_2") {
		t.Errorf("ls --all without box-2's token: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = call(t, noTok, "kill", "box-2/on-box-2")
	if code != exitUsage || !strings.Contains(stderr, "needs sign-in") {
		t.Errorf("kill box-2/… without its token: exit %d, %q", code, stderr)
	}

	code, stdout, stderr = call(t, env, "run", "--host", "box-2", "--name", "remote", "--", "sh", "-c", "echo ran-on-$0; exit 3", "box2")
	if code != 3 || !strings.Contains(stdout, "ran-on-box2") || !strings.Contains(stderr, box2.url+"/t/") {
		t.Errorf("run --host box-2: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = call(t, env, "attach", "box-2/on-box-2")
	if code != 0 || !strings.Contains(stderr, "detached from "+box2.url+"/t/on-box-2") {
		t.Errorf("attach box-2/on-box-2: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = call(t, env, "kill", "box-2/on-box-2")
	if code != 0 || stderr != "termhost: closed terminal on-box-2\n" {
		t.Errorf("kill box-2/on-box-2: exit %d, %q", code, stderr)
	}
	code, stdout, _ = call(t, env, "ls", "--all", "--json")
	if code != 0 || strings.Contains(stdout, `"on-box-2"`) || !strings.Contains(stdout, `"on-home"`) {
		t.Errorf("after kill box-2/on-box-2, ls --all --json: %s", stdout)
	}
	code, _, stderr = call(t, env, "kill", "home/on-home")
	if code != 0 {
		t.Errorf("kill home/on-home (the home host by name): exit %d, %q", code, stderr)
	}
	code, _, stderr = call(t, env, "kill", "nosuch/x")
	if code != exitUsage || !strings.Contains(stderr, `unknown host "nosuch": the server lists home (home), box-2, box3`) {
		t.Errorf("kill nosuch/x: exit %d, %q", code, stderr)
	}
	code, _, stderr = call(t, env, "run", "--host", "nosuch", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, `unknown host "nosuch"`) {
		t.Errorf("run --host nosuch: exit %d, %q", code, stderr)
	}

	// Each box saw its own token and nothing else.
	for _, b := range []*box{home, box2} {
		for cred := range b.seen() {
			if cred != "Bearer "+b.token {
				t.Errorf("%s saw the credential %q", b.name, cred)
			}
		}
		if !b.seen()["Bearer "+b.token] {
			t.Errorf("%s never saw its own token", b.name)
		}
	}
}

// TestMCPAcrossHosts: termhost mcp aimed at a home box whose hosts file
// names a second box and a stopped one: the tools open and run on the
// second box when given its host, list_terminals lists both boxes' with
// their host and says the stopped one is unreachable, an unknown host is
// a sentence, and each box only ever sees its own token.
func TestMCPAcrossHosts(t *testing.T) {
	box2 := startBox(t, "box-2", "box2-mcp-secret-token", "--shell-integration", "on")
	hostsFile := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hostsFile, []byte("box-2 "+box2.url+"/\nbox3 "+deadURL(t)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := startBox(t, "home", "home-mcp-secret-token", "--shell-integration", "on", "--hosts", hostsFile)
	cmd := exec.Command(cmdtest.Binary(t), "mcp", "--server", home.url)
	cmd.Env = []string{"TERMHOST_TOKEN=" + home.token, "TERMHOST_TOKEN_BOX_2=" + box2.token, "HOME=" + t.TempDir()}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fleet-agent", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	callTool := func(name string, args map[string]any) (map[string]any, string) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if res.IsError {
			return nil, text
		}
		return res.StructuredContent.(map[string]any), text
	}
	remote, _ := callTool("open_terminal", map[string]any{"host": "box-2", "name": "remote"})
	if remote == nil || remote["host"] != "box-2" || !strings.HasPrefix(remote["url"].(string), box2.url+"/t/") {
		t.Fatalf("open_terminal on box-2: %v", remote)
	}
	rid := remote["id"].(string)
	out, text := callTool("run_command", map[string]any{"host": "box-2", "terminal": rid, "command": "echo on-$((1+1))"})
	if out == nil || out["output"] != "on-2" {
		t.Fatalf("run_command on box-2: %v %s", out, text)
	}
	local, _ := callTool("open_terminal", map[string]any{"name": "local"})
	if local == nil {
		t.Fatal("open_terminal on the home box failed")
	}
	// Without its host, the id names a terminal of the home box, where
	// the agent opened no such terminal.
	if out, text := callTool("read_terminal", map[string]any{"terminal": rid}); out != nil || !strings.Contains(text, "terminal "+rid+" was not opened by this agent") {
		t.Errorf("read_terminal of box-2's terminal without its host: %v %q, want refused on the home box", out, text)
	}
	list, text := callTool("list_terminals", map[string]any{})
	byHost := map[string]string{}
	for _, v := range list["terminals"].([]any) {
		m := v.(map[string]any)
		byHost[m["host"].(string)] += m["id"].(string)
	}
	if byHost["home"] != local["id"] || byHost["box-2"] != rid || len(byHost) != 2 {
		t.Errorf("list_terminals by host = %v, want home's and box-2's terminals\n%s", byHost, text)
	}
	unreachable, _ := list["unreachable"].([]any)
	if len(unreachable) != 1 || unreachable[0].(map[string]any)["host"] != "box3" || !strings.Contains(text, "host box3: cannot reach") {
		t.Errorf("list_terminals unreachable = %v, text %q; want box3", unreachable, text)
	}
	if _, text := callTool("open_terminal", map[string]any{"host": "nosuch"}); !strings.Contains(text, `unknown host "nosuch": the hosts are home, box-2, box3`) {
		t.Errorf("open_terminal on an unknown host: %q", text)
	}
	if out, text := callTool("close_terminal", map[string]any{"host": "box-2", "terminal": rid}); out == nil {
		t.Errorf("close_terminal on box-2: %s", text)
	}
	for _, b := range []*box{home, box2} {
		for cred := range b.seen() {
			if cred != "Bearer "+b.token {
				t.Errorf("%s saw the credential %q", b.name, cred)
			}
		}
	}
}
