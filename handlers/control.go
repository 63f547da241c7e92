package handlers

import (
	"encoding/json"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/lockrank"
)

// Handing over control (docs/protocol.md, "Presence and control"): a client
// asks the claim holder for a terminal's claim; the holder grants or
// declines; a holder away (no input) for ControlAutoGrant grants by itself.
// The claim itself only ever changes through terminal/claimed, so foreign
// clients see the usual claim changes. The requests are
// ext.MethodRequestControl and ext.MethodAnswerControl; the notification
// ext.NotifyControlRequest goes to the holder and the requester on every
// change.

// controls are the pending control requests of a server.
type controls struct {
	mu      lockrank.Mutex[lockrank.Leaf]
	byID    map[string]*controlRequest
	seq     uint64 // numbers requests in the order they were made
	stopped bool
}

type controlRequest struct {
	id, uri string
	from    string // the requester's clientId
	who     string // the requester's principal: one request per principal and terminal
	member  ext.Member
	holder  string // the clientId asked
	seq     uint64
	timer   *time.Timer
}

// maxControlRequests bounds the requests pending on one terminal (one per
// principal: the owner and each share link).
const maxControlRequests = 16

// controlCommand answers ext.MethodRequestControl and
// ext.MethodAnswerControl. Their params are decoded with one struct, as
// they always were (a missing grant is told from false; channel is not
// read), not with ext's per-method types: invalid params are refused with
// the same messages.
func (c *conn) controlCommand(msg *ahp.Message) (any, *ahp.Error) {
	var p struct {
		Terminal  string `json:"terminal"`
		RequestID string `json:"requestId"`
		Grant     *bool  `json:"grant"`
		Ask       *bool  `json:"ask"` // requestControl: false only takes a claim nobody holds
	}
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	if err := ahp.CheckTerminalURI(p.Terminal); err != nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "%v", err)
	}
	if !c.s.m.Visible(c, p.Terminal) {
		return nil, ahp.Errorf(ahp.CodeNotFound, "no such terminal: %s", p.Terminal)
	}
	if msg.Method == ext.MethodRequestControl {
		return c.requestControl(p.Terminal, p.Ask == nil || *p.Ask)
	}
	if p.RequestID == "" || p.Grant == nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "%s needs requestId and grant", msg.Method)
	}
	return c.answerControl(p.Terminal, p.RequestID, *p.Grant)
}

// requestControl gives the claim at once when nobody holds it (its holder
// is not present) or an agent session does and the owner asks; else it
// asks the holder, or with ask false answers "held" (termhost attach
// without --take).
func (c *conn) requestControl(uri string, ask bool) (any, *ahp.Error) {
	if c.role == auth.RoleViewer {
		return nil, c.denied("control", "view only: this share link cannot take control")
	}
	me := ahp.ClientClaim(c.clientID)
	for range 3 { // the claim may move between the read and the change
		claim, ok := c.s.m.Claim(uri)
		switch {
		case !ok:
			return nil, ahp.Errorf(ahp.CodeNotFound, "no such terminal: %s", uri)
		case claim == me:
			return ext.ControlResult{Status: ext.ControlGranted}, nil
		case claim.Kind != ahp.ClaimClient && c.role != auth.RoleOwner:
			return nil, c.denied("control", "an agent session holds this terminal: only the owner can take it")
		case !ask && (claim.Kind != ahp.ClaimClient || c.s.m.Present(claim.ClientID)):
			return ext.ControlResult{Status: ext.ControlHeld}, nil
		case claim.Kind == ahp.ClaimClient && c.s.m.Present(claim.ClientID):
			return c.s.askHolder(c, uri, claim.ClientID)
		}
		if c.s.m.SetClaim(uri, claim, me) {
			c.record(audit.ControlTaken, uri, nil)
			return ext.ControlResult{Status: ext.ControlGranted}, nil
		}
	}
	return nil, ahp.Errorf(ahp.CodeNotFound, "the terminal's claim keeps changing or the terminal has exited: try again")
}

// askHolder files a request and tells the holder and the requester. A
// principal (the owner, one share link) has one request per terminal
// however many connections ask, so one link cannot flood the holder, and
// a terminal has at most maxControlRequests.
func (s *Server) askHolder(c *conn, uri, holder string) (any, *ahp.Error) {
	auto := s.cfg.ControlAutoGrant
	s.controls.mu.Lock()
	pending := 0
	for _, r := range s.controls.byID {
		if r.uri != uri {
			continue
		}
		if r.who == c.principal && r.holder == holder {
			s.controls.mu.Unlock()
			return ext.ControlResult{Status: ext.ControlPending, RequestID: r.id, AutoGrantMs: auto.Milliseconds()}, nil
		}
		pending++
	}
	if pending >= maxControlRequests {
		s.controls.mu.Unlock()
		return nil, c.denied("control", "too many pending requests for control of this terminal: try again later")
	}
	r := &controlRequest{id: auth.RandomToken(9), uri: uri, from: c.clientID, who: c.principal, member: c.PresenceMember(), holder: holder}
	if s.controls.byID == nil {
		s.controls.byID = map[string]*controlRequest{}
	}
	s.controls.seq++
	r.seq = s.controls.seq
	if !s.controls.stopped {
		s.controls.byID[r.id] = r
		r.timer = time.AfterFunc(auto, func() { s.autoGrant(r.id) })
	}
	s.controls.mu.Unlock()
	c.log.Info("control requested", "terminal", uri, "request", r.id)
	c.record(audit.ControlRequested, uri, nil)
	s.tellControl(r, ext.ControlNotice{Status: ext.ControlPending, AutoGrantMs: auto.Milliseconds()})
	return ext.ControlResult{Status: ext.ControlPending, RequestID: r.id, AutoGrantMs: auto.Milliseconds()}, nil
}

func (c *conn) answerControl(uri, id string, grant bool) (any, *ahp.Error) {
	s := c.s
	s.controls.mu.Lock()
	r := s.controls.byID[id]
	s.controls.mu.Unlock()
	if r == nil || r.uri != uri {
		return nil, ahp.Errorf(ahp.CodeNotFound, "no pending control request %q on %s", ahp.Clip(id), uri)
	}
	if r.holder != c.clientID || c.ViewOnly() {
		return nil, c.denied("control", "only the client that holds the terminal can answer a control request")
	}
	s.resolveControl(r, grant, false)
	return nil, nil
}

// autoGrant grants a request once the holder has not typed into the
// terminal for ControlAutoGrant; a holder still typing is asked again when
// that much time has passed since its last input.
func (s *Server) autoGrant(id string) {
	s.controls.mu.Lock()
	r := s.controls.byID[id]
	s.controls.mu.Unlock()
	if r == nil {
		return
	}
	idle := time.Since(s.m.LastInput(r.uri, r.holder))
	if wait := s.cfg.ControlAutoGrant - idle; wait > 0 {
		s.controls.mu.Lock()
		if s.controls.byID[id] == r {
			r.timer.Reset(wait)
		}
		s.controls.mu.Unlock()
		return
	}
	s.resolveControl(r, true, true)
}

// resolveControl ends a pending request: granting moves the claim from the
// holder asked to the requester, unless it moved meanwhile.
func (s *Server) resolveControl(r *controlRequest, grant, auto bool) {
	s.controls.mu.Lock()
	if s.controls.byID[r.id] != r {
		s.controls.mu.Unlock()
		return // answered already
	}
	delete(s.controls.byID, r.id)
	r.timer.Stop()
	s.controls.mu.Unlock()
	status := ext.ControlDeclined
	if grant {
		status = ext.ControlCancelled
		requester := ahp.ClientClaim(r.from)
		if s.m.SetClaim(r.uri, ahp.ClientClaim(r.holder), requester) {
			status = ext.ControlGranted
		} else if claim, _ := s.m.Claim(r.uri); claim == requester {
			status = ext.ControlGranted
		}
	}
	s.log.Info("control request answered", "terminal", r.uri, "request", r.id, "status", status, "auto", auto)
	if status == ext.ControlGranted {
		s.recordGrant(r, auto)
	}
	s.tellControl(r, ext.ControlNotice{Status: status, Auto: auto && status == ext.ControlGranted})
}

// controlLeft runs when a connection of clientID closed: once the client
// has none left, its own requests are cancelled. Requests waiting for it
// as the holder stay: it keeps the claim for the grace period (a network
// blip, an eviction, an upgrade's reconnect), then controlHeir grants them.
func (s *Server) controlLeft(clientID string) {
	if s.m.Connections(clientID) > 0 {
		return
	}
	var mine []*controlRequest
	s.controls.mu.Lock()
	for _, r := range s.controls.byID {
		if r.from == clientID {
			mine = append(mine, r)
		}
	}
	s.controls.mu.Unlock()
	for _, r := range mine {
		s.controls.mu.Lock()
		live := s.controls.byID[r.id] == r
		delete(s.controls.byID, r.id)
		r.timer.Stop()
		s.controls.mu.Unlock()
		if live {
			s.tellControl(r, ext.ControlNotice{Status: ext.ControlCancelled})
		}
	}
}

// controlHeir is the manager's claim heir (terminals.Hooks.ClaimHeir):
// when the holder of uri stayed gone for the grace period, the oldest
// request waiting for it whose requester is still connected is granted.
func (s *Server) controlHeir(uri, gone string) bool {
	var waiting []*controlRequest
	s.controls.mu.Lock()
	for _, r := range s.controls.byID {
		if r.uri == uri && r.holder == gone {
			waiting = append(waiting, r)
		}
	}
	s.controls.mu.Unlock()
	var first *controlRequest
	for _, r := range waiting { // presence is asked after: controls.mu is a leaf
		if s.m.Connections(r.from) > 0 && (first == nil || r.seq < first.seq) {
			first = r
		}
	}
	if first == nil {
		return false
	}
	s.resolveControl(first, true, true)
	claim, _ := s.m.Claim(uri)
	if claim != ahp.ClientClaim(first.from) {
		return false
	}
	s.controlClaimMoved(uri) // the others waiting for the holder that left
	return true
}

// controlClaimMoved ends the requests of a terminal whose claim a client
// moved (the owner took it, the holder handed it over): the holder asked no
// longer holds it, so they are granted if the requester got it, else
// cancelled.
func (s *Server) controlClaimMoved(uri string) {
	claim, _ := s.m.Claim(uri)
	var stale []*controlRequest
	s.controls.mu.Lock()
	for _, r := range s.controls.byID {
		if r.uri == uri && claim != ahp.ClientClaim(r.holder) {
			stale = append(stale, r)
		}
	}
	s.controls.mu.Unlock()
	for _, r := range stale {
		s.resolveControl(r, true, false) // the claim is not the holder's: this only reports where it went
	}
}

// stop drops every pending request (Close).
func (cs *controls) stop() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.stopped = true
	for id, r := range cs.byID {
		r.timer.Stop()
		delete(cs.byID, id)
	}
}

// tellControl sends ext.NotifyControlRequest to the connections of the
// holder and of the requester that watch the terminal.
func (s *Server) tellControl(r *controlRequest, n ext.ControlNotice) {
	n.Terminal, n.RequestID, n.From = r.uri, r.id, r.member
	frame := controlFrame(n)
	for _, sub := range s.m.Subscribers(r.uri) {
		if c, ok := sub.(*conn); ok && (c.clientID == r.from || c.clientID == r.holder && !c.ViewOnly()) {
			c.push(frame)
		}
	}
}

// controlFrame is the ext.NotifyControlRequest notification of n, by the
// envelope encoder. Its params are encoded by encoding/json, as they always
// were: a share link's label in From keeps its <, > and & escaped.
func controlFrame(n ext.ControlNotice) []byte {
	frame, err := ahp.EncodeNotification(ext.NotifyControlRequest, json.RawMessage(mustMarshal(n)), ahp.Current)
	if err != nil {
		panic("handlers: encode control notice: " + err.Error()) // plain strings always encode
	}
	return frame
}

// push queues a notification of our own from any goroutine. Unlike answer
// it leaves held envelopes alone: it answers no request and depends on no
// snapshot.
func (c *conn) push(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enqueueLocked(outFrame{raw: frame, size: len(frame)}, true)
}
