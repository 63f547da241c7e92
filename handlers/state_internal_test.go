package handlers

import (
	"bytes"
	"cmp"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/terminals"
)

// restartRig is one address (as a restarted termhost keeps its port, so its
// cookie names) served by a handlers.Server that a test replaces by a new
// one over the same state directory: a restart.
type restartRig struct {
	t     *testing.T
	dir   string
	clk   *fakeClock
	m     *terminals.Manager
	hooks *Hooks // m's
	ts    *httptest.Server
	cur   atomic.Pointer[Server]
	logMu sync.Mutex
	logs  bytes.Buffer
	// nextToken, when set, is the owner token of the next start.
	nextToken string
}

const restartTerminal = "ahp-terminal:/kept"

func newRestartRig(t *testing.T) *restartRig {
	r := &restartRig{t: t, dir: filepath.Join(t.TempDir(), "state", "termhost"),
		clk: &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}
	r.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.cur.Load().ServeHTTP(w, req) }))
	t.Cleanup(func() {
		r.ts.CloseClientConnections()
		r.stop()
		r.ts.Close()
		if r.m != nil {
			r.m.Close()
		}
	})
	r.newManager()
	r.createTerminal()
	return r
}

// newManager replaces the terminals: a plain restart loses them.
func (r *restartRig) newManager() {
	if r.m != nil {
		r.m.Close()
	}
	hooks := new(Hooks)
	m, err := terminals.NewManager(terminals.Config{Shell: "/bin/cat", Env: []string{"PATH=" + os.Getenv("PATH")}, Hooks: hooks.Manager()})
	if err != nil {
		r.t.Fatal(err)
	}
	r.m, r.hooks = m, hooks
}

func (r *restartRig) createTerminal() {
	claim := ahp.ClientClaim("rig")
	if err := r.m.Create(ahp.CreateTerminalParams{Channel: restartTerminal, Claim: &claim}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *restartRig) Write(p []byte) (int, error) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	return r.logs.Write(p)
}

func (r *restartRig) log() string {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	return r.logs.String()
}

// start (re)starts the server with token over the rig's state directory.
func (r *restartRig) start(token string) *Server {
	r.t.Helper()
	r.stop()
	s, err := New(Config{Manager: r.m, Hooks: r.hooks, OwnerToken: token, StateDir: r.dir, clock: r.clk,
		Logger: slog.New(slog.NewTextHandler(r, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		r.t.Fatalf("restart: %v", err)
	}
	r.cur.Store(s)
	return s
}

func (r *restartRig) stop() {
	if s := r.cur.Load(); s != nil {
		r.ts.CloseClientConnections()
		s.Close()
	}
}

// login signs the owner in and returns the session cookie.
func (r *restartRig) login(token string) *http.Cookie {
	r.t.Helper()
	req, _ := http.NewRequest("POST", r.ts.URL+"/auth/login", strings.NewReader(`{"token":"`+token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, ownerCookieBase) {
			return c
		}
	}
	r.t.Fatalf("login: %d, no session cookie", resp.StatusCode)
	return nil
}

// status is the workbench page's status with cookie: 200, or 401 (sign in).
func (r *restartRig) status(cookie *http.Cookie) int {
	r.t.Helper()
	req, _ := http.NewRequest("GET", r.ts.URL+"/", nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// endedWhy is the Termhost-Ended header of the page of the rig's terminal
// requested with cookie (the owner's) or bearer (a share link's token).
func (r *restartRig) endedWhy(cookie *http.Cookie, bearer string) string {
	r.t.Helper()
	req, _ := http.NewRequest("GET", r.ts.URL+terminalPath(restartTerminal), nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get(auth.EndedHeader)
}

// dialShare opens the WebSocket with a share token: nil when it is let in.
func (r *restartRig) dialShare(token string) error {
	ws, _, err := websocket.Dial(r.t.Context(), "ws"+strings.TrimPrefix(r.ts.URL, "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err == nil {
		_ = ws.CloseNow()
	}
	return err
}

const (
	restartToken = "restart-owner-token-1"
	otherToken   = "restart-owner-token-2"
)

// Owner sessions survive a restart with the same owner
// token, and only with it; a signed-out session stays signed out.
func TestOwnerSessionsSurviveRestart(t *testing.T) {
	for _, c := range []struct {
		name       string
		logout     bool
		restartTok string
		want       int
		why        string // the 401's Termhost-Ended
	}{
		{"same token keeps the session", false, restartToken, http.StatusOK, ""},
		{"changed token signs owners out", false, otherToken, http.StatusUnauthorized, auth.EndedTokenChanged},
		{"signed out before the restart stays out", true, restartToken, http.StatusUnauthorized, auth.EndedSignedOut},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRestartRig(t)
			r.start(restartToken)
			cookie := r.login(restartToken)
			if got := r.status(cookie); got != http.StatusOK {
				t.Fatalf("page before the restart: %d", got)
			}
			if c.logout {
				req, _ := http.NewRequest("POST", r.ts.URL+"/auth/logout", strings.NewReader("{}"))
				req.Header.Set("Content-Type", "application/json")
				req.AddCookie(cookie)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			r.start(c.restartTok)
			if got := r.status(cookie); got != c.want {
				t.Errorf("page after a restart with token %q: %d, want %d", c.restartTok, got, c.want)
			}
			if got := r.endedWhy(cookie, ""); got != c.why {
				t.Errorf("the page's %s after the restart: %q, want %q", auth.EndedHeader, got, c.why)
			}
			if c.restartTok == otherToken && !strings.Contains(r.log(), "the owner token changed") {
				t.Errorf("log does not say the owner token changed:\n%s", r.log())
			}
		})
	}
}

// Share links keep their state across a restart: live
// ones work while their terminal lives, revoked and expired ones stay dead
// (and are still known as once valid, not counted as guesses).
func TestShareLinksAcrossRestart(t *testing.T) {
	for _, c := range []struct {
		name string
		// before runs with the first server; it returns the link's token.
		before func(r *restartRig, s *Server) string
		// down happens while no server runs.
		down func(r *restartRig)
		// after runs with the second server, before the link is tried.
		after   func(r *restartRig)
		wantLet bool
		why     string // the 401's Termhost-Ended
	}{
		{"live link still works", func(r *restartRig, s *Server) string {
			_, tok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleViewer, time.Hour)
			return tok
		}, nil, nil, true, ""},
		{"revoked stays revoked", func(r *restartRig, s *Server) string {
			sh, tok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleDriver, 0)
			s.auth.Shares.Revoke(sh.ID)
			return tok
		}, nil, nil, false, auth.EndedRevoked},
		{"expired stays expired", func(r *restartRig, s *Server) string {
			_, tok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleViewer, time.Minute)
			r.clk.Advance(time.Minute)
			return tok
		}, nil, nil, false, auth.EndedExpired},
		{"expires while down", func(r *restartRig, s *Server) string {
			_, tok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleViewer, time.Minute)
			return tok
		}, func(r *restartRig) { r.clk.Advance(time.Minute) }, nil, false, auth.EndedExpired},
		// A new terminal that happens to get the old one's URI is not the
		// old one: its link must not open it.
		{"terminal gone with the restart", func(r *restartRig, s *Server) string {
			_, tok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleViewer, 0)
			return tok
		}, func(r *restartRig) { r.newManager() }, func(r *restartRig) { r.createTerminal() }, false, auth.EndedRestart},
		{"closed by the owner", func(r *restartRig, s *Server) string {
			_, tok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleViewer, 0)
			s.auth.Shares.RevokeTerminal(restartTerminal)
			return tok
		}, nil, nil, false, auth.EndedTerminalClosed},
		{"a new owner token ends every link", func(r *restartRig, s *Server) string {
			_, tok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleDriver, 0)
			r.nextToken = otherToken
			return tok
		}, nil, nil, false, auth.EndedTokenChanged},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRestartRig(t)
			s := r.start(restartToken)
			tok := c.before(r, s)
			r.stop()
			if c.down != nil {
				c.down(r)
			}
			s = r.start(cmp.Or(r.nextToken, restartToken))
			if c.after != nil {
				c.after(r)
			}
			if got := r.endedWhy(nil, tok); got != c.why {
				t.Errorf("the link's page after the restart: %s %q, want %q", auth.EndedHeader, got, c.why)
			}
			if c.why != "" {
				// Opening the link again: the sign-in page says why it ended.
				req, _ := http.NewRequest("POST", r.ts.URL+"/auth/login", strings.NewReader(`{"share":"`+tok+`"}`))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized || strings.TrimSpace(string(body)) != auth.EndedLinkText[c.why] {
					t.Errorf("sign-in with the link after the restart: %d %q, want 401 %q", resp.StatusCode, body, auth.EndedLinkText[c.why])
				}
			}
			err := r.dialShare(tok)
			if c.wantLet && err != nil {
				t.Errorf("link after the restart: %v, want let in", err)
			}
			if !c.wantLet {
				if err == nil || !strings.Contains(err.Error(), "401") {
					t.Errorf("link after the restart: %v, want 401", err)
				}
				if !s.auth.Shares.WasValid(tok) {
					t.Errorf("the dead link is not remembered as once valid: a teammate's retry would count as a guess")
				}
			}
		})
	}
}

// A corrupt or truncated state file is reported and set aside; the server
// starts with no sign-ins and saves a good file again.
func TestCorruptStateFileStartsEmpty(t *testing.T) {
	for _, c := range []struct{ name, content string }{
		{"truncated", `{"version":1,"owner":{"salt":"00`},
		{"garbage", "\x00\x01not json"},
		{"bad digest", `{"version":1,"sessions":[{"hash":"abc","expires":"2030-01-01T00:00:00Z"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRestartRig(t)
			r.start(restartToken)
			cookie := r.login(restartToken)
			r.stop()
			path := filepath.Join(r.dir, auth.StateFileName)
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			r.start(restartToken)
			if log := r.log(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "corrupt") || !strings.Contains(log, path) {
				t.Errorf("log does not report the corrupt file %s:\n%s", path, log)
			}
			if b, err := os.ReadFile(path + ".corrupt"); err != nil || string(b) != c.content {
				t.Errorf("set-aside file: %q, %v; want the corrupt content", b, err)
			}
			if got := r.status(cookie); got != http.StatusUnauthorized {
				t.Errorf("old session after a corrupt file: %d, want 401", got)
			}
			cookie = r.login(restartToken)
			r.start(restartToken)
			if got := r.status(cookie); got != http.StatusOK {
				t.Errorf("a session opened after the corrupt start, after another restart: %d, want 200", got)
			}
		})
	}
}

// The state directory is created 0700 and the file 0600; it holds no secret
// in the clear.
func TestStateFilePrivate(t *testing.T) {
	r := newRestartRig(t)
	s := r.start(restartToken)
	cookie := r.login(restartToken)
	_, shareTok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleViewer, 0)
	path := filepath.Join(r.dir, auth.StateFileName)
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{r.dir, 0o700}, {path, 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("mode of %s = %o, want %o", c.path, got, c.want)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{"owner token": restartToken, "session id": cookie.Value, "share token": shareTok} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the state file holds the %s in the clear", name)
		}
	}
}

// TestStateFileTampered: what the server loads is
// checked. A share link edited to "owner" in the file is dropped, not made
// an owner credential; a file of an unknown version is set aside, not
// overwritten; a state directory open to others is made private.
func TestStateFileTampered(t *testing.T) {
	t.Run("share role edited to owner", func(t *testing.T) {
		r := newRestartRig(t)
		s := r.start(restartToken)
		_, tok, _ := s.auth.Shares.Create(restartTerminal, auth.RoleViewer, 0)
		r.stop()
		path := filepath.Join(r.dir, auth.StateFileName)
		b, _ := os.ReadFile(path)
		edited := bytes.Replace(b, []byte(`"role":"viewer"`), []byte(`"role":"owner"`), 1)
		if bytes.Equal(b, edited) {
			t.Fatalf("no viewer role in %s", b)
		}
		_ = os.WriteFile(path, edited, 0o600)
		r.start(restartToken)
		if err := r.dialShare(tok); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("the tampered link: %v, want 401", err)
		}
		req, _ := http.NewRequest("GET", r.ts.URL+"/", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode == http.StatusOK {
			t.Errorf("the tampered link opens the owner's workbench: %v, %v", resp, err)
		} else {
			resp.Body.Close()
		}
		if !strings.Contains(r.log(), "invalid role") {
			t.Errorf("the log does not say the link was dropped:\n%s", r.log())
		}
	})
	t.Run("unknown version set aside", func(t *testing.T) {
		r := newRestartRig(t)
		r.start(restartToken)
		r.stop()
		path := filepath.Join(r.dir, auth.StateFileName)
		future := `{"version":7,"owner":{},"sessions":[],"shares":[],"gone":[],"more":"of the future"}`
		_ = os.WriteFile(path, []byte(future), 0o600)
		r.start(restartToken)
		if b, err := os.ReadFile(path + ".v7"); err != nil || string(b) != future {
			t.Errorf("set-aside file: %q, %v; want the version 7 document", b, err)
		}
		if b, _ := os.ReadFile(path); strings.Contains(string(b), "future") {
			t.Errorf("the new state file still holds the old one: %s", b)
		}
	})
	t.Run("loose directory made private", func(t *testing.T) {
		r := newRestartRig(t)
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(r.dir, 0o755)
		r.start(restartToken)
		if fi, _ := os.Stat(r.dir); fi.Mode().Perm() != 0o700 {
			t.Errorf("state directory mode %v, want 0700", fi.Mode().Perm())
		}
		if !strings.Contains(r.log(), "open to other users") {
			t.Errorf("the log does not say the directory was tightened:\n%s", r.log())
		}
	})
}
