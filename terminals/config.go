package terminals

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/termhost/termhost/terminals/shellint"
)

// Config configures a Manager. Zero values get the product defaults.
type Config struct {
	Shell            string   // --shell; else $SHELL, the passwd entry, /bin/sh
	ShellArgs        []string // extra arguments for the shell (tests use --norc via integration off)
	Cwd              string   // --cwd; else $HOME
	Roots            []string // if set, a requested cwd must lie under one of these
	Scrollback       int      // bytes of content per terminal (default 1 MiB)
	MaxTerminals     int      // default 64
	ShellIntegration bool     // inject bash/zsh/fish integration
	Env              []string // base environment for shells (default os.Environ())
	DisposeGrace     time.Duration
	ReplayBytes      int // replay ring budget (default 4 MiB)
	InputQueue       int // bytes of input queued per terminal (default 1 MiB; see InputStall)
	Logger           *slog.Logger
	Clock            shellint.Clock // nil = real clock
	// CrowdCycle is how often a crowd's viewers get the output that waited
	// for them (default hub.DefaultCrowdCycle; see hub.Paced).
	CrowdCycle time.Duration
	// RecordDir is where recordings are kept (<state-dir>/recordings); ""
	// disables recording. RecordAll records every terminal from its start;
	// RecordMax caps each file (default 64 MiB); RecordClock stamps events
	// (nil = real clock).
	RecordDir   string
	RecordAll   bool
	RecordMax   int64
	RecordClock func() time.Time
	// NoScreenModel turns off the VT model kept of each terminal (package
	// screen), which gives joiners the exact screen and answers
	// x-termhost/screen. It is fed on demand, off the pty's path.
	NoScreenModel bool
	// Tap, when set, sees every raw pty read before processing (tests
	// compare it with what clients receive). It must not keep b.
	Tap func(uri string, b []byte)

	// Hooks are the calls the Manager makes into the server in front of
	// it; the zero value is none.
	Hooks Hooks

	// ClaimGrace is how long a claim stays with a client that has no
	// connection left before it is handed on (default 10 s).
	ClaimGrace time.Duration

	// SizePolicy decides a terminal's size with several clients connected:
	// SizeHolder (default) or SizeSmallest (sizepolicy.go).
	SizePolicy string

	// InputHold bounds how long input typed into a new shell with
	// integration waits for its first prompt (default 5 s, see
	// inputHold); input to anything else never waits.
	InputHold time.Duration

	// InputStall: input past InputQueue waits for room (the dispatch is
	// Full, its connection is not read meanwhile: docs/protocol.md, "Input
	// flow control"), unless the program has taken nothing from its full
	// queue for this long (default 30 s, see inputStall): then it is
	// refused.
	InputStall time.Duration
}

// Hooks are the calls a Manager makes into the server in front of it
// (package handlers), fixed when the Manager is built. That server is built
// after the Manager, from it, and may be rebuilt over the same Manager, so
// what it gives here are forwarders that reach whichever server currently
// serves (handlers.Hooks). A nil hook is a server without that part.
type Hooks struct {
	// ClaimHeir hands the claim of uri, whose holder (the clientId gone)
	// stayed away for the claim grace, on to a client that asked for it
	// (handlers' control requests) and reports whether it did. When it did
	// not, or is nil, a successor gets the claim.
	ClaimHeir func(uri, gone string) bool
	// PersonOf names the person behind a clientId (people signed in by
	// single sign-on), so that the commands run while they hold a terminal
	// are marked with their name, as an agent's are. nil names nobody.
	PersonOf func(clientID string) (name string, ok bool)
}

func (c *Config) setDefaults() {
	if c.Shell == "" {
		c.Shell = DefaultShell()
	}
	if c.Cwd == "" {
		c.Cwd, _ = os.UserHomeDir()
		if c.Cwd == "" {
			c.Cwd = "/"
		}
	}
	if c.Scrollback == 0 {
		c.Scrollback = 1 << 20
	}
	if c.MaxTerminals == 0 {
		c.MaxTerminals = 64
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	if c.DisposeGrace == 0 {
		c.DisposeGrace = 2 * time.Second
	}
	if c.ClaimGrace == 0 {
		c.ClaimGrace = 10 * time.Second
	}
	if c.SizePolicy == "" {
		c.SizePolicy = SizeHolder
	}
	if c.ReplayBytes == 0 {
		c.ReplayBytes = 4 << 20
	}
	if c.InputQueue == 0 {
		c.InputQueue = 1 << 20
	}
	if c.InputStall == 0 {
		c.InputStall = inputStall
	}
	if c.InputHold == 0 {
		c.InputHold = inputHold
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// DefaultShell is $SHELL, else the user's passwd shell, else /bin/sh.
func DefaultShell() string {
	if s := os.Getenv("SHELL"); s != "" {
		return s
	}
	if u, err := user.Current(); err == nil {
		if s := passwdShell(u.Username); s != "" {
			return s
		}
	}
	return "/bin/sh"
}

func passwdShell(name string) string {
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 7 && f[0] == name {
			return f[6]
		}
	}
	return ""
}

// shellEnv is the environment of a new shell: the base environment without the
// server's own secrets, with the terminal variables set.
func shellEnv(base []string) []string {
	env := make([]string, 0, len(base)+3)
	lang := ""
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "TERMHOST_"), k == "TERM", k == "COLORTERM":
			continue
		case k == "LANG":
			lang = v
			continue
		}
		env = append(env, kv)
	}
	if lang == "" {
		lang = "C.UTF-8"
	}
	return append(env, "TERM=xterm-256color", "COLORTERM=truecolor", "LANG="+lang)
}

// errBadCwd is wrapped for every unusable requested cwd.
var errBadCwd = errors.New("bad cwd")

// ErrConfig is wrapped by NewManager for a configuration it cannot run with.
var ErrConfig = errors.New("invalid configuration")

// validate checks the roots and that the default cwd lies under them, so a
// terminal created without a cwd cannot start outside the roots.
func (c *Config) validate() error {
	if err := checkSizePolicy(c.SizePolicy); err != nil {
		return err
	}
	if len(c.Roots) == 0 {
		return nil
	}
	for _, root := range c.Roots {
		if info, err := os.Stat(root); err != nil || !info.IsDir() {
			return fmt.Errorf("%w: root %s is not an existing directory", ErrConfig, root)
		}
	}
	if err := c.checkRoots(c.Cwd); err != nil {
		return fmt.Errorf("%w: default cwd: %v", ErrConfig, err)
	}
	return nil
}

// resolveCwd turns a createTerminal cwd URI into an existing directory allowed
// by the configured roots.
func (c *Config) resolveCwd(uri string) (string, error) {
	if uri == "" {
		return c.Cwd, nil
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) {
		return "", fmt.Errorf("%w: cwd must be a file:///absolute/path URI, got %q", errBadCwd, uri)
	}
	dir := filepath.Clean(u.Path)
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		return "", fmt.Errorf("%w: %s is not an existing directory", errBadCwd, dir)
	}
	if err := c.checkRoots(dir); err != nil {
		return "", fmt.Errorf("%w: %v", errBadCwd, err)
	}
	return dir, nil
}

// checkRoots accepts dir when there are no roots or when dir, with every
// symlink resolved, is one of the roots or lies under one.
func (c *Config) checkRoots(dir string) error {
	if len(c.Roots) == 0 {
		return nil
	}
	real, err := realPath(dir)
	if err != nil {
		return err
	}
	for _, root := range c.Roots {
		if r, err := realPath(root); err == nil && within(real, r) {
			return nil
		}
	}
	return fmt.Errorf("%s is outside the allowed roots (%s)", dir, strings.Join(c.Roots, ", "))
}

// realPath is the absolute path of p with every symlink resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return real, nil
}

// within reports whether path is root or lies under it (both absolute and
// clean). A plain prefix test would refuse everything under "/" and accept
// /srv/ab for the root /srv/a.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
