package agent

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// session is one MCP session's AHP side: its own connection to the server
// (so presence shows the agent by its MCP client's name), its session
// claim, the terminals it opened and follows. One pump goroutine takes the
// connection's events and wakes the tool calls waiting on them.
type session struct {
	a      *Agent
	name   string // the MCP client's name, for presence
	person Person // whom it acts for (Config.PersonOf), fixed at its first call
	claim  ahp.Claim
	calls  int64      // tool calls that bound the claim, for turnId/toolCallId
	dialMu sync.Mutex // one dial at a time
	mu     sync.Mutex
	c      *client.Client
	pumpWG sync.WaitGroup
	terms  map[string]*term
	opened map[string]bool
	echoes map[int64]string // rejection reason ("" accepted) of our dispatches, by clientSeq
	wake   chan struct{}    // closed and replaced on every change
	closed bool

	// Hosts (hosts.go). On another host than the home host: its name and
	// URL, the dialler with its own credential and its links' base. On the
	// home host's: the sessions on the other hosts (under mu).
	host, hostURL string
	dial          func(ctx context.Context, opts client.Options) (*client.Client, error)
	base          *url.URL
	others        map[string]*session
}

func newSession(a *Agent, name string) *session {
	id := client.RandomID(8)
	return &session{a: a, name: name, terms: map[string]*term{}, opened: map[string]bool{}, echoes: map[int64]string{},
		wake:  make(chan struct{}),
		claim: ahp.Claim{Kind: ahp.ClaimSession, Session: sessionPrefix + id, Chat: "ahp-chat:/termhost-mcp/" + id}}
}

// sessionPrefix starts the session URI of every termhost mcp session.
const sessionPrefix = "ahp-session:/termhost-mcp/"

// IsAgentSession reports whether a session claim's session is one of
// termhost mcp's.
func IsAgentSession(session string) bool { return strings.HasPrefix(session, sessionPrefix) }

// errClosed ends the calls of a session whose MCP client has gone.
var errClosed = errors.New("the MCP session has ended")

// errOtherPerson refuses a call on a session that acts for someone else.
var errOtherPerson = errors.New("this MCP session acts for another person: start a new session")

// conn returns the live AHP connection, dialling when there is none or the
// last one ended (the client itself rides out short outages; a server
// restart beyond its window needs a new connection and new subscriptions).
func (s *session) conn(ctx context.Context) (*client.Client, error) {
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	s.mu.Lock()
	c, closed := s.c, s.closed
	s.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if c != nil {
		select {
		case <-c.Done():
		default:
			return c, nil
		}
	}
	if c != nil {
		s.pumpWG.Wait()
	}
	opts := client.Options{
		ClientID:             "termhost-mcp-" + client.RandomID(6),
		ClientInfo:           ahp.Implementation{Name: ClientName, Title: s.name, Version: s.a.cfg.Version},
		InitialSubscriptions: []string{ahp.RootURI},
		MirrorBytes:          -1, // the session keeps its own bounded copy (track.go)
	}
	dial := s.a.cfg.Dial
	if s.dial != nil {
		dial = s.dial
	}
	nc, err := dial(context.WithValue(ctx, personKey{}, s.person), opts)
	if err != nil {
		return nil, s.explain(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = nc.Close()
		return nil, errClosed
	}
	s.c = nc
	s.terms = map[string]*term{} // subscriptions belonged to the old connection
	s.pumpWG.Add(1)
	go s.pump(nc)
	return nc, nil
}

// ClientName is the clientInfo name the agent's AHP connections send; the
// server shows them as "Agent · <the MCP client's name>".
const ClientName = "termhost-mcp"

// pump applies the connection's events to the terminals followed.
func (s *session) pump(c *client.Client) {
	defer s.pumpWG.Done()
	defer s.changed()
	for {
		ev, err := c.Next(context.Background()) // ends once the client has finished
		if err != nil {
			return
		}
		now := time.Now()
		s.mu.Lock()
		t := s.terms[ev.Channel]
		switch ev.Kind {
		case client.EventAction:
			env := ev.Envelope
			// Only input is waited for (dispatch); claim changes are not.
			if env.Origin != nil && env.Origin.ClientID == c.ClientID() && env.Action.Type == ahp.TerminalInput {
				if len(s.echoes) > 1024 { // nobody waits for these any more
					clear(s.echoes)
				}
				s.echoes[env.Origin.ClientSeq] = env.RejectionReason
			}
			if t != nil && env.RejectionReason == "" {
				t.apply(env.Action, now)
			}
		case client.EventResync:
			if st, ok := ev.State.(ahp.TerminalState); ok && t != nil {
				nt := newTerm(t.uri, st, now)
				nt.total += t.total // cursors stay monotonic
				nt.busy = t.busy
				s.terms[t.uri] = nt
			}
		case client.EventGone:
			if t != nil {
				t.gone = true
			}
		}
		s.mu.Unlock()
		s.changed()
	}
}

func (s *session) changed() {
	s.mu.Lock()
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
}

// wait calls check under the session lock after every change until it
// reports done, the deadline passes (timedOut) or ctx ends. poll, when
// positive, also re-checks that often (for conditions on the clock).
func (s *session) wait(ctx context.Context, deadline time.Time, poll time.Duration, check func() bool) (timedOut bool, err error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var tick <-chan time.Time
	if poll > 0 {
		tk := time.NewTicker(poll)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return false, errClosed
		}
		if check() {
			s.mu.Unlock()
			return false, nil
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-tick:
		case <-timer.C:
			return true, nil
		case <-ctx.Done():
			return false, fmt.Errorf("the call was cancelled: %w", ctx.Err())
		}
	}
}

// follow subscribes to a terminal (once) and returns its tracker.
func (s *session) follow(ctx context.Context, uri string) (*client.Client, *term, error) {
	c, err := s.conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	t := s.terms[uri]
	vanished := t != nil && (t.gone || !inCatalogue(c, uri))
	if vanished {
		delete(s.terms, uri)
	}
	s.mu.Unlock()
	if vanished {
		_ = c.Unsubscribe(ctx, uri)
		return nil, nil, fmt.Errorf("there is no terminal %s (it was closed): list_terminals shows the open ones", ahp.TerminalIDOf(uri))
	}
	if t != nil {
		return c, t, nil
	}
	snap, err := c.Subscribe(ctx, uri)
	if err != nil {
		if client.IsNotFound(err) {
			return nil, nil, fmt.Errorf("there is no terminal %s (it was closed?): list_terminals shows the open ones", ahp.TerminalIDOf(uri))
		}
		return nil, nil, s.a.explain(err)
	}
	st, _ := snap.State.(ahp.TerminalState)
	s.mu.Lock()
	defer s.mu.Unlock()
	if t = s.terms[uri]; t == nil || t.gone {
		t = newTerm(uri, st, time.Now())
		s.terms[uri] = t
	}
	return c, t, nil
}

// dispatch sends an action and waits for the server's echo: a rejection
// comes back as an error with the server's reason.
func (s *session) dispatch(ctx context.Context, c *client.Client, uri string, a ahp.Action) error {
	seq, err := c.Dispatch(ctx, uri, a)
	if err != nil {
		return s.a.explain(err)
	}
	var reason string
	timedOut, err := s.wait(ctx, time.Now().Add(dispatchTimeout), 0, func() bool {
		r, ok := s.echoes[seq]
		if ok {
			reason = r
			delete(s.echoes, seq)
		}
		return ok
	})
	switch {
	case err != nil:
		return err
	case timedOut:
		return fmt.Errorf("the server did not confirm %s within %s; try again", a.Type, dispatchTimeout)
	case reason != "":
		return &rejectedError{reason}
	}
	return nil
}

const dispatchTimeout = 10 * time.Second

// rejectedError is an action the server refused.
type rejectedError struct{ reason string }

func (e *rejectedError) Error() string { return "the server refused it: " + e.reason }

// close ends the AHP connection and waits for the pump.
func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	c := s.c
	others := s.others
	s.mu.Unlock()
	for _, o := range others {
		o.close()
	}
	if c != nil {
		s.release(c)
		_ = c.Close()
	}
	s.pumpWG.Wait()
	s.changed()
}

// release detaches the terminals still bound to one of this session's tool
// calls: the session claim stays (people see whose terminal it was), the
// tool call binding goes.
func (s *session) release(c *client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.mu.Lock()
	var uris []string
	for uri := range s.opened {
		uris = append(uris, uri)
	}
	s.mu.Unlock()
	for _, uri := range uris {
		if st, ok := c.Terminal(uri); ok && st.Claim.Session == s.claim.Session && st.Claim.ToolCallID != "" {
			_, _ = c.Dispatch(ctx, uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: s.claim})
		}
	}
}
