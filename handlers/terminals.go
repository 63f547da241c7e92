package handlers

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals"
	"github.com/termhost/termhost/terminals/screen"
)

// Terminals is what the server asks of the terminals it serves: the
// catalogue, subscriptions, dispatch, claims and presence. *terminals.Manager
// is the one implementation; tests where a real shell is not the point may
// give their own.
type Terminals interface {
	// Catalogue, create and dispose.
	Terminals() []ahp.TerminalInfo
	Exists(uri string) bool
	CreateAs(p ahp.CreateTerminalParams, agent string) error
	Dispose(uri string) error
	Content(uri string) (string, bool)
	Screen(ctx context.Context, s terminals.Subscriber, uri string) (screen.State, error)
	Config() terminals.Config
	SizePolicy() string

	// Subscriptions.
	Initialize(s terminals.Subscriber, uris []string) (int64, []ahp.Snapshot)
	Subscribe(s terminals.Subscriber, uri string) (ahp.Snapshot, error)
	Reconnect(s terminals.Subscriber, p ahp.ReconnectParams) terminals.Recovery
	Unsubscribe(s terminals.Subscriber, uri string)
	UnsubscribeAll(s terminals.Subscriber)
	Subscribers(uri string) []terminals.Subscriber
	Visible(s terminals.Subscriber, uri string) bool

	// Actions and input.
	Dispatch(s terminals.Subscriber, origin ahp.Origin, uri string, a ahp.Action, policy terminals.Policy) terminals.Outcome
	Reject(s terminals.Subscriber, origin ahp.Origin, uri string, a ahp.Action, reason string)
	AwaitInput(ctx context.Context, uri string, n int)
	LastInput(uri, clientID string) time.Time

	// Claims and agents.
	Claim(uri string) (claim ahp.Claim, ok bool)
	// AtPrompt: the shell reports its commands and runs none (a driver's
	// line is a command line, approvedrivers.go).
	AtPrompt(uri string) bool
	SetClaim(uri string, from, to ahp.Claim) bool
	ClaimedClients() map[string]bool
	NoteAgent(uri string, claim ahp.Claim, name string)

	// Connections and presence (the one count claims use).
	Connected(clientID string)
	ConnectionLost(clientID string) int
	ConnectionClosedByClient(clientID string) int
	Connections(clientID string) int
	Present(clientID string) bool
	Presence(s terminals.Subscriber) []terminals.PresenceList

	// Recordings.
	RecordingPath(uri string) string
	SetRecording(uri string, on bool) error
}

var _ Terminals = (*terminals.Manager)(nil)

// Hooks connect a terminals.Manager to the Server built over it, for the
// calls the Manager makes into the server (terminals.Hooks: who inherits a
// claim, the names of SSO people). The Manager takes its hooks when it is
// built and the Server needs the Manager to be built, so Hooks come first
// and forward to the server:
//
//	var hooks handlers.Hooks
//	m, _ := terminals.NewManager(terminals.Config{..., Hooks: hooks.Manager()})
//	srv, _ := handlers.New(handlers.Config{Manager: m, Hooks: &hooks, ...})
//
// Until New has built a Server with them, the hooks answer as a server
// without them would: nobody inherits, nobody is named. A later Server built
// over the same Manager and Hooks (one that serves on after a refused
// upgrade) takes them over. The zero value is ready to use.
type Hooks struct {
	srv atomic.Pointer[Server]
}

// Manager returns the hooks to give terminals.Config.Hooks.
func (h *Hooks) Manager() terminals.Hooks {
	return terminals.Hooks{ClaimHeir: h.claimHeir, PersonOf: h.personOf}
}

func (h *Hooks) claimHeir(uri, gone string) bool {
	if s := h.srv.Load(); s != nil {
		return s.controlHeir(uri, gone)
	}
	return false
}

func (h *Hooks) personOf(clientID string) (string, bool) {
	if s := h.srv.Load(); s != nil {
		return s.personOf(clientID)
	}
	return "", false
}
