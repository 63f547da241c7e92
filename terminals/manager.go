// Package terminals owns the server's shells: pty spawn, resize and kill, shell
// integration, claims, each terminal channel's state and scrollback, the root
// catalogue, and the one action stream (serverSeq, subscribers, replay) that
// every connection reads.
package terminals

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/shellint"
)

// Errors callers map to JSON-RPC codes.
var (
	ErrNotFound = errors.New("no such terminal")        // -32008
	ErrExists   = errors.New("terminal already exists") // -32010
	ErrInvalid  = errors.New("invalid request")         // -32602
	ErrLimit    = errors.New("too many terminals")      // -32009
)

// Manager is the set of terminals and the hub they publish to.
type Manager struct {
	cfg      Config
	log      *slog.Logger
	hub      *hub
	scripts  string // private directory for generated shell-integration scripts
	closeErr error

	// guarded by hub.mu
	terms   map[string]*terminal
	order   []string       // catalogue order (creation order)
	clients map[string]int // live connections per clientId
	closed  bool

	creating sync.WaitGroup // Creates between reserving a URI and publishing it
}

// NewManager prepares a manager; it spawns nothing until asked.
func NewManager(cfg Config) (*Manager, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "termhost-shell-")
	if err != nil {
		return nil, fmt.Errorf("shell integration dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("shell integration dir: %w", err)
	}
	return &Manager{
		cfg: cfg, log: cfg.Logger.With("component", "terminals"),
		hub: newHub(cfg.ReplayBytes), scripts: dir,
		terms: map[string]*terminal{}, clients: map[string]int{},
	}, nil
}

// Config returns the effective configuration.
func (m *Manager) Config() Config { return m.cfg }

// Close disposes every terminal and waits for their processes.
func (m *Manager) Close() {
	m.hub.mu.Lock()
	m.closed = true
	list := make([]*terminal, 0, len(m.terms))
	for _, uri := range m.order {
		list = append(list, m.terms[uri])
	}
	m.hub.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range list {
		wg.Add(1)
		go func() { defer wg.Done(); _ = m.Dispose(t.uri) }()
	}
	wg.Wait()
	// A Create that reserved its URI before closed was set kills what it
	// spawned when it sees closed (see Create).
	m.creating.Wait()
	_ = os.RemoveAll(m.scripts)
}

// Create spawns a shell for a new terminal channel.
func (m *Manager) Create(p ahp.CreateTerminalParams) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	dir, err := m.cfg.resolveCwd(p.Cwd)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
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
	t := &terminal{m: m, uri: p.Channel, log: m.log.With("terminal", p.Channel), content: newContent(m.cfg.Scrollback)}
	t.state = ahp.TerminalState{Title: title, Cwd: FileURI(dir), Cols: cols, Rows: rows,
		Lifecycle: ahp.Running(), Claim: *p.Claim, IsPty: ptr(true)}

	// Reserve the URI before spawning so two creates cannot race.
	m.hub.mu.Lock()
	switch {
	case m.closed:
		m.hub.mu.Unlock()
		return fmt.Errorf("%w: server is shutting down", ErrLimit)
	case m.terms[p.Channel] != nil:
		m.hub.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrExists, p.Channel)
	case len(m.terms) >= m.cfg.MaxTerminals:
		m.hub.mu.Unlock()
		return fmt.Errorf("%w: the server allows at most %d", ErrLimit, m.cfg.MaxTerminals)
	}
	t.disposed = true // not live until spawned
	m.terms[p.Channel] = t
	m.creating.Add(1) // before closed can be set: Close waits for it
	m.hub.mu.Unlock()
	defer m.creating.Done()

	argv, err := commandFromMeta(p.Meta)
	if err != nil {
		m.hub.mu.Lock()
		delete(m.terms, p.Channel)
		m.hub.mu.Unlock()
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	env := shellEnv(m.cfg.Env)
	inj := shellint.Plain(m.cfg.Shell, m.cfg.ShellArgs, env)
	switch {
	case argv != nil:
		// A command instead of a shell (termhost run): its exit is the terminal's.
		inj = shellint.Plain(argv[0], argv[1:], env)
		if p.Name == nil || *p.Name == "" {
			t.state.Title = shellName(argv[0])
		}
	case m.cfg.ShellIntegration:
		if inj, err = shellint.Inject(m.scripts, m.cfg.Shell, m.cfg.ShellArgs, env); err != nil {
			m.log.Warn("shell integration unavailable", "shell", m.cfg.Shell, "err", err)
			inj = shellint.Plain(m.cfg.Shell, m.cfg.ShellArgs, env)
		}
	}
	t.integrated = inj.Nonce != ""
	t.proc = shellint.NewProcessor(shellint.Options{Nonce: inj.Nonce, Mode: inj.Mode, Clock: m.cfg.Clock})
	if err := t.start(inj.Argv, inj.Env, dir, cols, rows); err != nil {
		m.hub.mu.Lock()
		delete(m.terms, p.Channel)
		m.hub.mu.Unlock()
		m.log.Error("spawn", "argv0", inj.Argv[0], "err", err)
		return fmt.Errorf("start %s: %w", inj.Argv[0], err)
	}

	m.hub.mu.Lock()
	if m.closed {
		// Close ran while the shell was spawning and only saw published
		// terminals: this one is ours to end.
		delete(m.terms, p.Channel)
		m.hub.mu.Unlock()
		t.kill(0) // nobody has seen this shell: no grace
		return fmt.Errorf("%w: server is shutting down", ErrLimit)
	}
	t.disposed = false
	close(t.started)
	m.order = append(m.order, p.Channel)
	m.hub.channels[p.Channel] = &channel{subs: map[Subscriber]struct{}{}}
	m.publishCatalogueLocked()
	m.hub.mu.Unlock()
	m.log.Info("terminal created", "terminal", p.Channel, "pid", t.cmd.Process.Pid, "cols", cols, "rows", rows)
	return nil
}

// Dispose kills a terminal's shell and removes its channel.
func (m *Manager) Dispose(uri string) error {
	m.hub.mu.Lock()
	t := m.terms[uri]
	if t == nil || (t.disposed && !slices.Contains(m.order, uri)) {
		m.hub.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotFound, uri)
	}
	t.disposed = true
	delete(m.terms, uri)
	m.order = slices.DeleteFunc(m.order, func(u string) bool { return u == uri })
	delete(m.hub.channels, uri)
	m.hub.ring.forget(uri)
	m.publishCatalogueLocked()
	m.hub.mu.Unlock()
	t.kill(m.cfg.DisposeGrace)
	m.log.Info("terminal disposed", "terminal", uri)
	return nil
}

// publishOutput publishes an action produced by a terminal's shell. It
// returns the claim holder's backlog so the owner can pause reading the pty
// while the driver falls behind.
func (m *Manager) publishOutput(t *terminal, a ahp.Action) int {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	if t.disposed || (a.Type == ahp.TerminalTitleChanged && t.titlePinned) {
		return 0
	}
	m.applyLocked(t, a)
	m.hub.publishLocked(t.uri, a, nil)
	if a.Type == ahp.TerminalTitleChanged {
		m.publishCatalogueLocked()
	}
	return m.holderBacklogLocked(t)
}

// holderBacklog is the largest send backlog among the claim holder's
// connections subscribed to the terminal.
func (m *Manager) holderBacklog(t *terminal) int {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	return m.holderBacklogLocked(t)
}

func (m *Manager) holderBacklogLocked(t *terminal) int {
	ch := m.hub.channels[t.uri]
	if ch == nil || t.state.Claim.Kind != ahp.ClaimClient {
		return 0
	}
	most := 0
	for s := range ch.subs {
		// The clientId is bound to one principal by the server; a view-only
		// connection never paces the shell.
		if s.ClientID() == t.state.Claim.ClientID && !s.ViewOnly() {
			most = max(most, s.Backlog())
		}
	}
	return most
}

// terminalExited reports a process exit and updates the catalogue.
func (m *Manager) terminalExited(t *terminal, code *int) {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	if t.disposed {
		return
	}
	a := ahp.Action{Type: ahp.TerminalExited, ExitCode: code}
	m.applyLocked(t, a)
	m.hub.publishLocked(t.uri, a, nil)
	m.publishCatalogueLocked()
	m.log.Info("terminal exited", "terminal", t.uri, "exitCode", fmtCode(code))
}

// applyLocked runs the reducer on a terminal's state (content in its store).
func (m *Manager) applyLocked(t *terminal, a ahp.Action) {
	switch a.Type {
	case ahp.TerminalData, ahp.TerminalCommandExecuted, ahp.TerminalCommandFinished, ahp.TerminalCleared:
		t.content.apply(a)
		if a.Type == ahp.TerminalCommandExecuted {
			t.state.SupportsCommandDetection = ptr(true)
		}
	default:
		t.state = ahp.ReduceTerminal(t.state, a)
	}
}

func (m *Manager) catalogueLocked() []ahp.TerminalInfo {
	list := make([]ahp.TerminalInfo, 0, len(m.order))
	for _, uri := range m.order {
		t := m.terms[uri]
		list = append(list, ahp.TerminalInfo{Resource: uri, Title: t.state.Title, Claim: t.state.Claim, Lifecycle: t.state.Lifecycle})
	}
	return list
}

// publishCatalogueLocked sends the full catalogue as root/terminalsChanged.
func (m *Manager) publishCatalogueLocked() {
	a := ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: m.catalogueLocked()}
	m.hub.root = ahp.ReduceRoot(m.hub.root, a)
	m.hub.publishLocked(ahp.RootURI, a, nil)
}

// Terminals returns the catalogue.
func (m *Manager) Terminals() []ahp.TerminalInfo {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	return m.catalogueLocked()
}

// Exists reports whether a terminal channel exists.
func (m *Manager) Exists(uri string) bool {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	t := m.terms[uri]
	return t != nil && !t.disposed
}

// ServerSeq is the current value of the action sequence counter.
func (m *Manager) ServerSeq() int64 {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	return m.hub.seq
}

// ClaimedClients returns the clientIds that terminals' client claims name.
func (m *Manager) ClaimedClients() map[string]bool {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	out := map[string]bool{}
	for _, t := range m.terms {
		if c := t.state.Claim; c.Kind == ahp.ClaimClient {
			out[c.ClientID] = true
		}
	}
	return out
}

// Connected and Disconnected count live connections per clientId, so a claim
// held by a client that has gone can be taken over.
func (m *Manager) Connected(clientID string) {
	m.hub.mu.Lock()
	m.clients[clientID]++
	m.hub.mu.Unlock()
}

// Disconnected undoes Connected.
func (m *Manager) Disconnected(clientID string) {
	m.hub.mu.Lock()
	if m.clients[clientID]--; m.clients[clientID] <= 0 {
		delete(m.clients, clientID)
	}
	m.hub.mu.Unlock()
}

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

// rawAction keeps an undecodable dispatched action so it can be echoed back.
func rawAction(raw json.RawMessage) ahp.Action {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &head)
	if len(raw) == 0 || raw[0] != '{' {
		raw = json.RawMessage(`{"type":""}`)
	}
	return ahp.Action{Type: head.Type, Raw: raw}
}

// MetaCommand is the createTerminal _meta key of termhost's extension that
// runs a command in the new terminal instead of a shell:
// "_meta": {"termhost/command": ["make", "build"]}.
const MetaCommand = "termhost/command"

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
