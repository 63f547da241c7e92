package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// Targets (ids and URLs) and which token goes to which server.

func TestURLTargetOnConfiguredServer(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "byurl", c.ClientID())
	// The URL is on the configured server's origin (the scheme written in
	// capitals): the owner token goes there.
	code, _, stderr := call(t, ownerEnv(ts), "kill", "HTTP"+strings.TrimPrefix(ts.URL, "http")+"/t/"+id)
	if code != 0 {
		t.Fatalf("kill <url on the configured server>: exit %d, %s", code, stderr)
	}
}

// recorder is a second HTTP server that keeps every Authorization header
// it receives and refuses the upgrade.
type recorder struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auths = append(r.auths, req.Header.Get("Authorization"))
		r.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.auths)
}

// TestOwnerTokenOnlyToConfiguredServer: a pasted URL naming another origin
// never receives the owner token, wherever it comes from; a share link's
// URL brings its own token.
func TestOwnerTokenOnlyToConfiguredServer(t *testing.T) {
	ts := newTestServer(t)
	evil := newRecorder(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	stateToken := filepath.Join(dir, "state", "termhost", "token")
	for _, p := range []string{tokenFile, stateToken} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(testToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	envToken := map[string]string{"TERMHOST_TOKEN": testToken}
	stateDir := map[string]string{"XDG_STATE_HOME": dir + "/state"}
	refused := "is not on the configured server"
	tests := []struct {
		name string
		env  map[string]string
		cmd  string
		args []string
	}{
		{"attach, default server, TERMHOST_TOKEN", envToken, "attach", []string{evil.URL + "/t/abc"}},
		{"kill, default server, TERMHOST_TOKEN", envToken, "kill", []string{evil.URL + "/t/abc"}},
		{"share, default server, TERMHOST_TOKEN", envToken, "share", []string{evil.URL + "/t/abc"}},
		{"attach, --token-file", nil, "attach", []string{"--token-file", tokenFile, evil.URL + "/t/abc"}},
		{"attach, local state token to another loopback port", stateDir, "attach", []string{evil.URL + "/t/abc"}},
		{"attach, TERMHOST_SERVER elsewhere", ownerEnv(ts), "attach", []string{evil.URL + "/base/t/abc"}},
		{"kill, --server elsewhere", envToken, "kill", []string{"--server", ts.URL, evil.URL + "/t/abc"}},
		{"attach, same host other port", ownerEnv(ts), "attach", []string{strings.Replace(evil.URL, "http:", "https:", 1) + "/t/abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := call(t, tt.env, tt.cmd, tt.args...)
			if code != exitUsage || stdout != "" {
				t.Errorf("termhost %s %q: exit %d, stdout %q; want 2 and nothing", tt.cmd, tt.args, code, stdout)
			}
			oneLine(t, tt.cmd, stderr, refused)
			if got := evil.got(); len(got) != 0 {
				t.Fatalf("the other server received %d requests with Authorization %q, want none", len(got), got)
			}
		})
	}

	// A share link's URL on another server: its own token goes there, the
	// owner token does not.
	code, _, stderr := call(t, envToken, "attach", evil.URL+"/t/abc#share=link-secret")
	if code != exitUsage || !strings.Contains(stderr, "refused the token") {
		t.Errorf("attach <share link elsewhere>: exit %d, %q; want the link's server to refuse it", code, stderr)
	}
	if got := evil.got(); !slices.Equal(got, []string{"Bearer link-secret"}) {
		t.Errorf("the share link's server received Authorization %q, want only the link's token", got)
	}
}

// TestShareLinkURLUsesItsToken: a share link's URL works without the owner
// token, with the link's rights.
func TestShareLinkURLUsesItsToken(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "linked", c.ClientID())
	link, err := createShare(t.Context(), c, id, "viewer", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := call(t, nil, "kill", link.URL)
	if code != exitUsage || !strings.Contains(stderr, "a share link cannot dispose terminals") {
		t.Errorf("kill <viewer link>: exit %d, %q; want the server to refuse the link", code, stderr)
	}
	if _, ok := ts.info(ahp.TerminalURI(id)); !ok {
		t.Errorf("kill <viewer link> disposed the terminal")
	}
}

func TestTokenPrecedence(t *testing.T) {
	dir := t.TempDir()
	write := func(name, tok string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagFile := write("flag-token", "from-flag")
	write("state/termhost/token", "from-state")
	local, _ := client.ParseServer("http://127.0.0.1:7681")
	remote, _ := client.ParseServer("https://dev.example.com")
	tests := []struct {
		name string
		file string
		env  map[string]string
		base string
		want string
	}{
		{"flag wins", flagFile, map[string]string{"TERMHOST_TOKEN": "from-env", "XDG_STATE_HOME": dir + "/state"}, "local", "from-flag"},
		{"env next", "", map[string]string{"TERMHOST_TOKEN": "from-env", "XDG_STATE_HOME": dir + "/state"}, "local", "from-env"},
		{"local state file", "", map[string]string{"XDG_STATE_HOME": dir + "/state"}, "local", "from-state"},
		{"never to a remote server", "", map[string]string{"XDG_STATE_HOME": dir + "/state"}, "remote", ""},
		{"missing state file", "", map[string]string{"XDG_STATE_HOME": dir + "/none"}, "local", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _, _ := testApp(t, tt.env)
			base := local
			if tt.base == "remote" {
				base = remote
			}
			got, err := a.resolveToken(&connFlags{tokenFile: tt.file}, base)
			if err != nil || got != tt.want {
				t.Errorf("token() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestClientChosenTerminalURI: a terminal at a URI its client chose (VS Code's
// agenthost-terminal:/<uuid>) is listed, shared and killed by that URI or
// its page URL.
func TestClientChosenTerminalURI(t *testing.T) {
	const uri = "agenthost-terminal:/0b1e2c3d-1111-4222-8333-444455556666"
	pageURL := func(ts *testServer) string { return ts.URL + "/t/" + url.PathEscape(uri) }
	tests := []struct {
		name string
		arg  func(ts *testServer) string
	}{
		{"by URI", func(*testServer) string { return uri }},
		{"by page URL", pageURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			c := ts.dial(t)
			claim := ahp.ClientClaim(c.ClientID())
			if _, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: uri, Claim: &claim}); err != nil {
				t.Fatalf("createTerminal %s: %v", uri, err)
			}
			code, stdout, stderr := call(t, ownerEnv(ts), "ls", "--json")
			var got []lsEntry
			if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || len(got) != 1 {
				t.Fatalf("ls --json: exit %d, %v, %s %s", code, err, stdout, stderr)
			}
			if got[0].ID != uri || got[0].URL != pageURL(ts) {
				t.Errorf("ls entry id %q url %q, want %q and %q", got[0].ID, got[0].URL, uri, pageURL(ts))
			}
			code, stdout, stderr = call(t, ownerEnv(ts), "share", tt.arg(ts))
			if code != 0 || !strings.HasPrefix(stdout, pageURL(ts)+"#share=") {
				t.Errorf("share %s: exit %d, %q %s; want a link to %s", tt.arg(ts), code, stdout, stderr, pageURL(ts))
			}
			if code, _, stderr := call(t, ownerEnv(ts), "kill", tt.arg(ts)); code != 0 || ts.m.Exists(uri) {
				t.Errorf("kill %s: exit %d, %s; exists after: %v", tt.arg(ts), code, stderr, ts.m.Exists(uri))
			}
		})
	}
}
