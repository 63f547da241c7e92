package handlers

import (
	"errors"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/lockrank"
	"github.com/termhost/termhost/web"
)

// signInEvery is how long a person's requests count as one sign-in for
// the audit trail: a person seen again after this long signed in again.
const signInEvery = time.Hour

// people remembers when each SSO person was last admitted (audit sign-ins).
type people struct {
	mu   lockrank.Mutex[lockrank.Leaf]
	seen map[string]time.Time
}

// firstSince reports whether person was not seen within signInEvery, and
// notes them seen now.
func (p *people) firstSince(person string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string]time.Time{}
	}
	last, ok := p.seen[person]
	p.seen[person] = now
	if len(p.seen) > 100000 { // bounded: forget who left long ago
		for k, t := range p.seen {
			if now.Sub(t) > signInEvery {
				delete(p.seen, k)
			}
		}
	}
	return !ok || now.Sub(last) > signInEvery
}

// authenticateSSO identifies a request under --auth proxy. A request whose
// identity header is there but not to be believed (from a peer that is not
// a trusted proxy, sent twice, under a lookalike name, a list) is refused
// outright, whatever else it carries, and counts as a failed credential. A
// token or cookie (the CLI, break-glass sign-in, share links for people
// outside SSO) works as under --auth token. Otherwise the person the proxy
// names gets the role their identity matches; one in no list comes back
// with Person set and Role empty (the "not allowed" page).
func (s *Server) authenticateSSO(w http.ResponseWriter, r *http.Request, terminal string) (auth.Principal, bool, bool) {
	person, err := s.cfg.SSO.Identify(r)
	if errors.Is(err, sso.ErrProfile) {
		// A believable header naming no identity that can be compared
		// safely (a lookalike letter …): "not allowed", whatever else the
		// request carries; never mapped onto another identity.
		if s.people.firstSince("\x00"+person.Name, time.Now()) {
			s.cfg.Audit.Record(audit.Event{Event: audit.SignInRefused, Who: person.Name, Remote: s.clientAddr(r), Detail: err.Error()})
		}
		return auth.Principal{Person: person.Name, Name: person.Name}, false, false
	}
	if err != nil && !errors.Is(err, sso.ErrNoIdentity) {
		// Counted against the client (behind a trusted proxy, the address
		// it forwards), never the proxy: that would lock everyone out.
		addr := s.clientAddr(r)
		lim := s.auth.Limiter(addr)
		if s.tooManyFailures(w, lim) {
			return auth.Principal{}, false, true
		}
		auth.RecordFailure(lim)
		s.metrics.authFailures.WithLabelValues("identity_header").Inc()
		s.log.Warn("refused a request: "+err.Error(), "remote", addr, "path", ahp.Clip(r.URL.Path))
		s.cfg.Audit.Record(audit.Event{Event: audit.SignInRefused, Remote: addr, Detail: err.Error()})
		return auth.Principal{}, false, false
	}
	var who auth.Principal
	if err == nil {
		who = auth.Principal{Role: s.cfg.Roles.Roles().RoleOf(person.ID), Person: person.ID, Name: person.Name}
	}
	if presentsCredential(r, s.cookieNames(r)) {
		cred, ok, limited := s.authenticateToken(w, r, terminal)
		if limited {
			return cred, false, true
		}
		// A share link counts where it gives more than the person's SSO
		// role, on its own terminal; never to narrow an SSO role elsewhere.
		if ok && (who.Role == "" || cred.Share == nil || terminal != "" && rank(cred.Role) > rank(who.Role)) {
			cred.Person, cred.Name = who.Person, who.Name
			return cred, true, false
		}
		if who.Role == "" {
			return who, false, false
		}
	}
	if err != nil {
		return auth.Principal{}, false, false
	}
	if s.people.firstSince(person.ID, time.Now()) {
		e := audit.Event{Event: audit.SignIn, Who: person.ID, Name: person.Name, Role: who.Role, Remote: s.clientAddr(r)}
		if who.Role == "" {
			e.Event, e.Detail = audit.SignInRefused, "in no role list"
		}
		s.cfg.Audit.Record(e)
	}
	who.FromRoles = true
	return who, who.Role != "", false
}

// applyRoles closes, with closeRoleLowered, every open connection of a
// person whose role the roles in force lower (or take away); from the
// moment it is decided the connection refuses every request (rpc.go), so
// nothing owner-only (a share link, a terminal) is done from it after.
// Its client reconnects with the role it now has, if any. A raised role
// leaves connections alone: the next one gets it.
func (s *Server) applyRoles(roles *sso.Roles) {
	s.mu.Lock()
	var lowered []*conn
	for c := range s.byPerson {
		if rank(roles.RoleOf(c.person)) < rank(c.role) {
			lowered = append(lowered, c)
		}
	}
	s.mu.Unlock()
	told := map[string]bool{}
	for _, c := range lowered {
		if c.lower(roles.RoleOf(c.person)) && !told[c.person] {
			told[c.person] = true
			s.cfg.Audit.Record(audit.Event{Event: audit.RoleChanged, Who: c.person, Name: c.name, Role: roles.RoleOf(c.person),
				Detail: "lowered from " + c.role + ": open connections closed"})
		}
	}
}

// lower refuses everything more from c and closes it with
// closeRoleLowered (now is the person's new role); false when it already was.
func (c *conn) lower(now string) bool {
	if c.lowered.Swap(true) {
		return false
	}
	c.log.Info("closing a connection: its person's role was lowered", "person", c.person, "was", c.role, "now", now)
	c.closeWith(closeRoleLowered, "your role changed: reconnect")
	return true
}

// trackPerson counts in an open connection whose role came from the roles
// (applyRoles sees it from now on), and lowers it at once if they changed
// since its request was authenticated.
func (s *Server) trackPerson(c *conn) (untrack func()) {
	s.mu.Lock()
	s.byPerson[c] = true
	s.mu.Unlock()
	if now := s.cfg.Roles.Roles().RoleOf(c.person); rank(now) < rank(c.role) {
		c.lower(now)
	}
	return func() {
		s.mu.Lock()
		delete(s.byPerson, c)
		s.mu.Unlock()
	}
}

// notAllowed answers someone signed in by SSO but in no role list: a page
// naming them and whom to ask (403), never a blank screen.
func (s *Server) notAllowed(w http.ResponseWriter, r *http.Request, page web.Page, who auth.Principal) {
	s.metrics.authFailures.WithLabelValues("not_allowed").Inc()
	render(w, r, http.StatusForbidden, web.NotAllowed(page, who.Name, who.Person, s.cfg.Roles.Roles().Whom()))
}

// who is how the audit trail names a connection's principal: the person's
// identity, "owner" or "share:<id>".
func (c *conn) who() string {
	if c.person != "" {
		return c.person
	}
	return c.principal
}

// auditEvent is an event of this connection on terminal uri ("" for none),
// with the terminal's current title.
func (c *conn) auditEvent(kind, uri string) audit.Event {
	e := audit.Event{Event: kind, Who: c.who(), Name: c.PresenceMember().Name, Role: c.role, Remote: c.remote, Terminal: uri, Share: c.shareID}
	if uri != "" {
		e.Title = c.s.titleOf(uri)
	}
	return e
}

// record appends an event of this connection to the audit trail.
func (c *conn) record(kind, uri string, edit func(*audit.Event)) {
	if c.s.cfg.Audit == nil {
		return
	}
	e := c.auditEvent(kind, uri)
	if edit != nil {
		edit(&e)
	}
	c.s.cfg.Audit.Record(e)
}

// recordConnect puts the connection's connect in the audit trail, at the
// time it was accepted, once: when the client has said who it is
// (initialize or reconnect), so that it has the name its disconnect will
// have (a CLI is its user@host, not "Owner"), or at the end for a
// connection that never did.
func (c *conn) recordConnect() {
	c.connectOnce.Do(func() {
		c.record(audit.Connect, c.connectedTo, func(e *audit.Event) { e.Time = c.connectedAt })
	})
}

// titleOf is a terminal's title, "" when it is gone.
func (s *Server) titleOf(uri string) string {
	for _, t := range s.m.Terminals() {
		if t.Resource == uri {
			return t.Title
		}
	}
	return ""
}

// presenceIDFor is the presence id of this connection as clientID: one per
// person (a person's several tabs count once), else one per client.
func (c *conn) presenceIDFor(clientID string) string {
	if c.person != "" {
		return presenceIDOfPerson(c.person)
	}
	return presenceIDOfClient(clientID)
}

// recordDownload puts a recording or output download in the audit trail.
func (s *Server) recordDownload(r *http.Request, who auth.Principal, uri string) {
	if s.cfg.Audit == nil {
		return
	}
	e := audit.Event{Event: audit.RecordingDownload, Who: who.ID(), Name: who.Name, Role: who.Role, Remote: s.clientAddr(r),
		Terminal: uri, Title: s.titleOf(uri), Detail: path.Base(r.URL.Path)}
	if who.Person != "" {
		e.Who = who.Person
	}
	if who.Share != nil {
		e.Share = who.Share.ID
	}
	s.cfg.Audit.Record(e)
}

// recordAction puts an accepted dispatch in the audit trail: input (its
// size, never its bytes), a rename, control taken.
func (c *conn) recordAction(uri string, a ahp.Action) {
	switch a.Type {
	case ahp.TerminalInput:
		if c.s.cfg.Audit != nil {
			// Summed per person and terminal up to the end of a line
			// (audit.InputWindow): not a line per key.
			e := c.auditEvent(audit.Input, uri)
			e.Bytes = len(a.Data)
			c.s.cfg.Audit.Input(e, strings.ContainsAny(a.Data, "\r\n"))
		}
	case ahp.TerminalTitleChanged:
		c.record(audit.TerminalRenamed, uri, nil) // the title is the new one
	case ahp.TerminalClaimed:
		if a.Claim.Kind == ahp.ClaimClient && a.Claim.ClientID == c.clientID {
			c.record(audit.ControlTaken, uri, nil)
		}
	}
}

// recordGrant puts a granted control request in the audit trail: who got
// control (the requester), and whether the holder granted it or its wait ran out.
func (s *Server) recordGrant(r *controlRequest, auto bool) {
	if s.cfg.Audit == nil {
		return
	}
	e := audit.Event{Event: audit.ControlGranted, Who: strings.TrimPrefix(r.who, "person:"), Name: r.member.Name, Role: r.member.Kind,
		Terminal: r.uri, Title: s.titleOf(r.uri), Detail: "granted by the holder"}
	if auto {
		e.Detail = "granted: the holder did not answer"
	}
	s.cfg.Audit.Record(e)
}

// personOf is the manager's person namer (terminals.Hooks.PersonOf):
// the display name of the SSO person whose client clientID is.
func (s *Server) personOf(clientID string) (string, bool) {
	v, ok := s.persons.Load(clientID)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// rank orders roles: viewer < driver < owner.
func rank(role string) int {
	switch role {
	case auth.RoleOwner:
		return 3
	case auth.RoleDriver:
		return 2
	case auth.RoleViewer:
		return 1
	}
	return 0
}
