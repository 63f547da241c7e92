package terminals

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/idlemem"
	"github.com/termhost/termhost/internal/lockrank"
	"github.com/termhost/termhost/internal/ondemand"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/pty"
	"github.com/termhost/termhost/terminals/shellint"
)

// Errors callers map to JSON-RPC codes.
var (
	ErrNotFound = hub.ErrNotFound                       // -32008
	ErrExists   = errors.New("terminal already exists") // -32010
	ErrInvalid  = hub.ErrInvalid                        // -32602
	ErrLimit    = errors.New("too many terminals")      // -32009
)

// StartError is a shell or command that could not be started. Its Program
// is safe to show to the client that asked; Err (the errno) is for the log,
// but for a program that does not exist or cannot run, which its message
// says. A command (not the shell) that is not there comes wrapped in
// ErrInvalid: the client's mistake.
type StartError struct {
	Program string
	Err     error
}

func (e *StartError) Error() string {
	switch {
	case errors.Is(e.Err, unix.ENOENT):
		return fmt.Sprintf("command %q not found (no such file)", e.Program)
	case errors.Is(e.Err, unix.EACCES):
		return fmt.Sprintf("command %q cannot be run (not an executable file, or permission denied)", e.Program)
	}
	return "start " + e.Program + ": " + e.Err.Error()
}
func (e *StartError) Unwrap() error { return e.Err }

// Manager composes the terminals: the catalogue of shells on ptys, the hub
// they publish to, claims and dispatch checks, create and dispose.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	hub     *hub.Hub
	scripts string // private directory for generated shell-integration scripts
	// adoptedScripts is a predecessor's (a hand-over), removed at Close.
	adoptedScripts []string

	mu       lockrank.Mutex[lockrank.Terminal]
	terms    map[string]*terminal // reserved, live or being disposed
	closed   bool
	paused   bool           // a hand-over is under way: no Create
	creating sync.WaitGroup // Creates between reserving a URI and publishing it

	presence presence
	sizes    sizeWants // sizepolicy.go

	// secrets checks for secret prompts while agent sessions hold
	// terminals (secret.go); secretsStop ends its wait at Close.
	secrets     *ondemand.Worker
	secretsStop chan struct{}
	stopSecrets sync.Once // Close may run twice (a restart, then cleanup)
}

// NewManager prepares a manager; it spawns nothing until asked.
func NewManager(cfg Config) (*Manager, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(runtimeDir(), "termhost-shell-")
	if err != nil {
		return nil, fmt.Errorf("shell integration dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("shell integration dir: %w", err)
	}
	m := &Manager{
		cfg: cfg, log: cfg.Logger.With("component", "terminals"),
		hub: hub.New(cfg.ReplayBytes), scripts: dir,
		terms: map[string]*terminal{}, presence: presence{count: map[string]int{}},
	}
	m.hub.SetPresence(presenceFrame)
	m.hub.SetCrowdCycle(cfg.CrowdCycle)
	m.secretsStop = make(chan struct{})
	m.secrets = ondemand.New(m.pollSecrets)
	return m, nil
}

// runtimeDir is where the private directory of shell-integration files (the
// scripts and each shell's nonce file) is made: $TMPDIR when set, the
// user's choice; else a RAM-backed directory ($XDG_RUNTIME_DIR, /dev/shm),
// so that a nonce never reaches a disk and its file costs microseconds to
// create (0.3 ms on this project's ext4 /tmp, a tenth of a shell's start);
// else the system's temporary directory.
func runtimeDir() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	for _, d := range []string{os.Getenv("XDG_RUNTIME_DIR"), "/dev/shm"} {
		if filepath.IsAbs(d) && unix.Access(d, unix.W_OK|unix.X_OK) == nil {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				return d
			}
		}
	}
	return os.TempDir()
}

// Config returns the effective configuration.
func (m *Manager) Config() Config { return m.cfg }

// Close disposes every terminal and waits for their processes.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var list []string
	for uri, t := range m.terms {
		if t.live {
			list = append(list, uri)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, uri := range list {
		wg.Go(func() { _ = m.Dispose(uri) })
	}
	wg.Wait()
	// A Create that reserved its URI before closed was set kills what it
	// spawned when it sees closed (see Create).
	m.creating.Wait()
	m.stopSecrets.Do(func() { close(m.secretsStop) })
	m.secrets.Stop()
	m.stopReleases()
	m.hub.Close()
	_ = os.RemoveAll(m.scripts)
	m.removeAdoptedScripts()
}

// Create spawns a shell for a new terminal channel.
func (m *Manager) Create(p ahp.CreateTerminalParams) error { return m.CreateAs(p, "") }

// CreateAs is Create by a client whose presence name is agent when it is
// an agent's (see NoteAgent): a session claim's agent is in the catalogue
// that announces the terminal.
func (m *Manager) CreateAs(p ahp.CreateTerminalParams, agent string) error {
	defer idlemem.Touch() // a start leaves garbage: give it back once all is quiet
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	dir, err := m.cfg.resolveCwd(p.Cwd)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	cols, rows := p.Cols, p.Rows
	if cols == 0 {
		cols = 80
	}
	if rows == 0 {
		rows = 24
	}
	title := ""
	if p.Name != nil {
		title = *p.Name
	}
	if title == "" {
		title = shellName(m.cfg.Shell)
	}
	t := &terminal{m: m, uri: p.Channel, log: m.log.With("terminal", p.Channel), rec: &recordTap{}}
	state := ahp.TerminalState{Title: title, Cwd: ahp.FileURI(dir), Cols: cols, Rows: rows,
		Lifecycle: ahp.Running(), Claim: *p.Claim, IsPty: ptr(true)}

	// Reserve the URI before spawning so two creates cannot race.
	if err := m.reserve(t); err != nil {
		return err
	}
	defer m.creating.Done()
	if p.Claim.Kind == ahp.ClaimSession {
		defer m.secrets.Kick() // an agent's terminal: watch for secret prompts
	}

	argv, err := commandFromMeta(p.Meta)
	if err != nil {
		m.unreserve(t)
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	env := shellEnv(m.cfg.Env)
	inj := shellint.Plain(m.cfg.Shell, m.cfg.ShellArgs, env)
	switch {
	case argv != nil:
		// A command instead of a shell (termhost run): its exit is the terminal's.
		inj = shellint.Plain(argv[0], argv[1:], env)
		if p.Name == nil || *p.Name == "" {
			state.Title = shellName(argv[0])
		}
	case m.cfg.ShellIntegration:
		if inj, err = shellint.Inject(m.scripts, m.cfg.Shell, m.cfg.ShellArgs, env); err != nil {
			m.log.Warn("shell integration unavailable", "shell", m.cfg.Shell, "err", err)
			inj = shellint.Plain(m.cfg.Shell, m.cfg.ShellArgs, env)
		}
	}
	t.integrated, t.nonce, t.nonceFile = inj.Nonce != "", inj.Nonce, inj.NonceFile
	t.sh = shellint.NewProcessor(shellint.Options{Nonce: inj.Nonce, Mode: inj.Mode, Clock: m.cfg.Clock, RawData: true})
	t.resized(cols, rows)
	if m.cfg.NoScreenModel {
		t.noScreen = noScreenFlag
	} else {
		t.scr = newScreenTap(cols, rows, m.cfg.Scrollback, m.log)
	}
	if err := t.start(pty.Spec{Argv: inj.Argv, Env: inj.Env, Dir: dir, Cols: cols, Rows: rows}); err != nil {
		m.unreserve(t)
		t.scr.close()
		t.removeNonceFile()
		se := &StartError{Program: inj.Argv[0], Err: err}
		if argv != nil && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES)) {
			// The client named a program that is not there or cannot run:
			// its mistake (-32602), not the server's.
			m.log.Info("spawn: no such program", "argv0", inj.Argv[0], "err", err)
			return fmt.Errorf("%w: %w", ErrInvalid, se)
		}
		m.log.Error("spawn", "argv0", inj.Argv[0], "err", err)
		return se
	}

	recorded := m.recordFromStart(t, state, p.Meta) // before the reader publishes anything (t.started)
	m.mu.Lock()
	if m.closed {
		// Close ran while the shell was spawning and only saw live
		// terminals: this one is ours to end.
		delete(m.terms, p.Channel)
		m.mu.Unlock()
		t.kill(0) // nobody has seen this shell: no grace
		t.rec.discard(t.log)
		return fmt.Errorf("%w: server is shutting down", ErrLimit)
	}
	t.live = true
	meta := map[string]any{} // in the catalogue that announces the terminal
	if recorded {
		meta[MetaRecording] = RecordingOn
	}
	if argv != nil {
		meta[MetaRunsCommand] = true
	}
	if p.Claim.Kind == ahp.ClaimSession {
		meta[MetaAgent] = *t.noteAgent(*p.Claim, agent)
	}
	if err := m.hub.AddTerminalMeta(p.Channel, state, meta, m.cfg.Scrollback, t.taps()...); err != nil {
		panic("terminals: " + err.Error()) // reserve keeps URIs unique
	}
	close(t.started)
	m.mu.Unlock()
	m.log.Info("terminal created", "terminal", p.Channel, "pid", t.proc.Pid(), "cols", cols, "rows", rows)
	return nil
}

// taps are what t plugs into its hub channel (see hub.Tap): the recorder,
// and the screen model if it has one.
func (t *terminal) taps() []hub.Tap {
	if t.scr == nil {
		return []hub.Tap{t.rec}
	}
	return []hub.Tap{t.rec, t.scr}
}

// reserve records t under its URI, not live yet, and counts a Create in.
func (m *Manager) reserve(t *terminal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return fmt.Errorf("%w: server is shutting down", ErrLimit)
	case m.paused:
		return fmt.Errorf("%w: server is restarting", ErrLimit)
	case m.terms[t.uri] != nil:
		return fmt.Errorf("%w: %s", ErrExists, t.uri)
	case len(m.terms) >= m.cfg.MaxTerminals:
		return fmt.Errorf("%w: the server allows at most %d", ErrLimit, m.cfg.MaxTerminals)
	}
	m.terms[t.uri] = t
	m.creating.Add(1) // before closed can be set: Close waits for it
	return nil
}

func (m *Manager) unreserve(t *terminal) {
	m.mu.Lock()
	delete(m.terms, t.uri)
	m.mu.Unlock()
}

// Dispose kills a terminal's shell and removes its channel.
func (m *Manager) Dispose(uri string) error {
	m.mu.Lock()
	t := m.terms[uri]
	if t == nil || !t.live {
		m.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotFound, uri)
	}
	t.live = false
	delete(m.terms, uri)
	m.mu.Unlock()
	m.hub.RemoveTerminal(uri)
	m.sizes.forget(uri)
	t.kill(m.cfg.DisposeGrace)
	t.rec.discard(t.log)
	m.log.Info("terminal disposed", "terminal", uri)
	return nil
}

// live returns the terminal of a channel if it exists.
func (m *Manager) live(uri string) *terminal {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.terms[uri]; t != nil && t.live {
		return t
	}
	return nil
}

// Terminals returns the catalogue.
func (m *Manager) Terminals() []ahp.TerminalInfo { return m.hub.Terminals() }

// Exists reports whether a terminal channel exists.
func (m *Manager) Exists(uri string) bool { return m.live(uri) != nil }

// ServerSeq is the current value of the action sequence counter.
func (m *Manager) ServerSeq() int64 { return m.hub.Seq() }

// ClaimedClients returns the clientIds that terminals' client claims name.
func (m *Manager) ClaimedClients() map[string]bool { return m.hub.ClaimedClients() }

func shellName(shell string) string {
	for i := len(shell) - 1; i >= 0; i-- {
		if shell[i] == '/' {
			return shell[i+1:]
		}
	}
	return shell
}

func ptr[T any](v T) *T { return &v }

func fmtCode(code *int) any {
	if code == nil {
		return "none"
	}
	return *code
}

// MetaCommand is the createTerminal _meta key of termhost's extension that
// runs a command in the new terminal instead of a shell:
// "_meta": {"termhost/command": ["make", "build"]}.
const MetaCommand = ext.MetaCommand

// MetaRunsCommand is the catalogue _meta key set (true) on a terminal that
// runs a command instead of a shell: it has no prompt, so shell integration
// reports no command lines, and clients say so instead of blaming it.
const MetaRunsCommand = ext.MetaRunsCommand

func commandFromMeta(meta json.RawMessage) ([]string, error) {
	if len(meta) == 0 {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil {
		return nil, fmt.Errorf("_meta must be an object")
	}
	raw, ok := m[MetaCommand]
	if !ok {
		return nil, nil
	}
	var argv []string
	if err := json.Unmarshal(raw, &argv); err != nil || len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("_meta %q must be a non-empty array of strings", MetaCommand)
	}
	if !strings.Contains(argv[0], "/") {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, fmt.Errorf("command %q not found in PATH", argv[0])
		}
		argv[0] = path
	}
	return argv, nil
}
