package handlers

import (
	"encoding/json"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/lockrank"
)

// Approvals (docs/protocol.md, "Approvals"): the pending approvals of the
// server, one registry for every terminal. A requester (termhost mcp's
// connection, or the server itself for a driver's Enter) files one and
// gets its answer; the owner's connections and the drivers who may type
// into its terminal get the list, coalesced; the first answer wins.

// Bounds of the registry.
const (
	maxApprovalsPerRequester = 16
	maxApprovals             = 256
	// approvalLinger is how long an answered approval stays in the list,
	// so that everyone sees who answered.
	approvalLinger = 5 * time.Second
	// approvalInterval is the shortest time between two lists sent to one
	// connection.
	approvalInterval = 100 * time.Millisecond
)

// approvalEntry is one approval and who waits for its answer.
type approvalEntry struct {
	ext.Approval
	requester *conn                    // termhost mcp's, or the driver's whose Enter waits
	done      func(ext.ApprovalResult) // gets the answer once; not called when withdrawn
	timer     *time.Timer              // the timeout, then the linger
}

// approvalSub is a connection that gets the list.
type approvalSub struct {
	scope string    // a share link's terminal, or "" for every terminal
	last  time.Time // when it was last sent a list
	sent  []byte    // that list
	want  bool      // the list may have changed since
}

// approvals is the registry. Its lock ranks as the server's: under it the
// sender pushes to connections (their queue is a leaf); nothing under it
// takes the hub's or the server's lock, and the answers go out after it.
type approvals struct {
	mu      lockrank.Mutex[lockrank.Server]
	byID    map[string]*approvalEntry
	order   []*approvalEntry // oldest first
	subs    map[*conn]*approvalSub
	timer   *time.Timer // the sender's
	armed   bool
	stopped bool
	timers  sync.WaitGroup // callbacks of timers armed or running
}

// approvalRequest answers ext.MethodApprovalRequest: later, when the
// approval is answered or times out (the reader goes on meanwhile). It
// returns an error to answer at once instead.
func (c *conn) approvalRequest(msg *ahp.Message) *ahp.Error {
	if c.role != auth.RoleOwner {
		return c.denied("approval", "only the owner's clients (termhost mcp) can ask for approvals")
	}
	var p ext.ApprovalRequestParams
	if err := decodeParams(msg, &p); err != nil {
		return err
	}
	if err := ahp.CheckTerminalURI(p.Terminal); err != nil {
		return ahp.Errorf(ahp.CodeInvalidParams, "%v", err)
	}
	if err := checkApprovalParams(p); err != nil {
		return err
	}
	if !c.s.m.Exists(p.Terminal) {
		return ahp.Errorf(ahp.CodeNotFound, "no such terminal: %s", p.Terminal)
	}
	kind, name := ext.RequesterOwner, c.PresenceMember().Name
	if c.agentName() != "" {
		kind = ext.RequesterAgent
	}
	if p.RequestedBy != "" {
		name = cleanLabel(p.RequestedBy)
	}
	id := msg.ID
	shape := c.shape
	done := func(res ext.ApprovalResult) {
		frame, err := ahp.EncodeResult(id, res, shape)
		if err != nil {
			c.log.Warn("encode approval result", "err", err)
			return
		}
		// Pushed, not answered: an answer would let out the envelopes a
		// subscribe under way holds back for its own answer.
		c.push(frame)
	}
	a, rpcErr := c.s.fileApproval(c, p, ext.Requester{Kind: kind, Name: name}, done)
	if rpcErr != nil {
		return rpcErr
	}
	c.log.Info("approval requested", "terminal", p.Terminal, "approval", a.ID, "rule", ahp.Clip(p.Rule))
	return nil
}

// checkApprovalParams checks a request's params against the bounds.
func checkApprovalParams(p ext.ApprovalRequestParams) *ahp.Error {
	switch {
	case p.CommandLine == "":
		return ahp.Errorf(ahp.CodeInvalidParams, "commandLine is empty")
	case len(p.CommandLine) > ext.ApprovalMaxCommandLine:
		return ahp.Errorf(ahp.CodeInvalidParams, "commandLine is over %d bytes", ext.ApprovalMaxCommandLine)
	case len(p.Rule) > ext.ApprovalMaxRule || len(p.Reason) > ext.ApprovalMaxRule:
		return ahp.Errorf(ahp.CodeInvalidParams, "rule and reason must be at most %d bytes", ext.ApprovalMaxRule)
	case utf8.RuneCountInString(p.RequestedBy) > ext.ApprovalMaxRequester:
		return ahp.Errorf(ahp.CodeInvalidParams, "requestedBy must be at most %d characters", ext.ApprovalMaxRequester)
	case p.TimeoutMs < 0 || p.TimeoutMs > ext.ApprovalMaxTimeoutMs:
		return ahp.Errorf(ahp.CodeInvalidParams, "timeoutMs must be between 1 and %d", ext.ApprovalMaxTimeoutMs)
	case !utf8.ValidString(p.CommandLine):
		return ahp.Errorf(ahp.CodeInvalidParams, "commandLine is not valid UTF-8")
	}
	return nil
}

// fileApproval adds an approval and tells those who may answer; done gets
// its answer. from is the requester's connection.
func (s *Server) fileApproval(from *conn, p ext.ApprovalRequestParams, by ext.Requester, done func(ext.ApprovalResult)) (ext.Approval, *ahp.Error) {
	timeout := time.Duration(p.TimeoutMs) * time.Millisecond
	if p.TimeoutMs == 0 {
		timeout = ext.ApprovalDefaultTimeoutMs * time.Millisecond
	}
	now := time.Now()
	e := &approvalEntry{Approval: ext.Approval{
		ID: "a" + auth.RandomToken(9), Terminal: p.Terminal, TerminalTitle: s.titleOf(p.Terminal), CommandLine: p.CommandLine,
		RequestedBy: by, Rule: p.Rule, Reason: p.Reason, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(timeout).UnixMilli(),
		State: ext.ApprovalPending,
	}, requester: from, done: done}
	ap := &s.approvals
	ap.mu.Lock()
	mine := 0
	pending := 0
	for _, o := range ap.order {
		if o.State == ext.ApprovalPending {
			pending++
			if o.requester == from {
				mine++
			}
		}
	}
	switch {
	case ap.stopped:
		ap.mu.Unlock()
		return ext.Approval{}, ahp.Errorf(ahp.CodePermissionDenied, "the server is shutting down")
	case mine >= maxApprovalsPerRequester || pending >= maxApprovals:
		ap.mu.Unlock()
		s.metrics.permissionDenied.WithLabelValues("approval").Inc()
		return ext.Approval{}, ahp.Errorf(ahp.CodePermissionDenied, "too many pending approvals (at most %d per requester, %d in all): answer some first", maxApprovalsPerRequester, maxApprovals)
	}
	if ap.byID == nil {
		ap.byID = map[string]*approvalEntry{}
	}
	ap.byID[e.ID] = e
	ap.order = append(ap.order, e)
	ap.timers.Add(1)
	e.timer = time.AfterFunc(timeout, func() { s.expireApproval(e) })
	ap.changedLocked()
	a := e.Approval // it may be answered as soon as the lock is released
	ap.mu.Unlock()
	s.auditApproval(from, audit.ApprovalRequested, a)
	return a, nil
}

// expireApproval ends a pending approval at its timeout, or drops an
// answered one at the end of its linger.
func (s *Server) expireApproval(e *approvalEntry) {
	ap := &s.approvals
	defer ap.timers.Done()
	ap.mu.Lock()
	if ap.stopped || ap.byID[e.ID] != e {
		ap.mu.Unlock()
		return
	}
	if e.State != ext.ApprovalPending {
		ap.mu.Unlock()
		return // answered meanwhile
	}
	a := s.resolveLocked(e, ext.ApprovalTimedOut, nil, "", false)
	ap.mu.Unlock()
	s.auditApproval(nil, audit.ApprovalAnswered, a)
	e.done(ext.ApprovalResult{ID: a.ID, State: a.State})
}

// resolveLocked ends e (pending) with state and starts its linger, after
// which it leaves the list.
func (s *Server) resolveLocked(e *approvalEntry, state string, by *ext.Who, reason string, always bool) ext.Approval {
	ap := &s.approvals
	e.State, e.AnsweredBy, e.DenyReason, e.AlwaysAllow = state, by, reason, always
	e.AnsweredAt = time.Now().UnixMilli()
	if e.timer.Stop() {
		ap.timers.Done()
	}
	ap.timers.Add(1)
	e.timer = time.AfterFunc(approvalLinger, func() { s.dropApproval(e) })
	ap.changedLocked()
	return e.Approval
}

// dropApproval takes an answered approval out of the list.
func (s *Server) dropApproval(e *approvalEntry) {
	ap := &s.approvals
	defer ap.timers.Done()
	ap.mu.Lock()
	defer ap.mu.Unlock()
	if ap.stopped || ap.byID[e.ID] != e {
		return
	}
	delete(ap.byID, e.ID)
	ap.order = slices.DeleteFunc(ap.order, func(o *approvalEntry) bool { return o == e })
	ap.changedLocked()
}

// approvalAnswer answers ext.MethodApprovalAnswer.
func (c *conn) approvalAnswer(msg *ahp.Message) (any, *ahp.Error) {
	if c.role == auth.RoleViewer {
		return nil, c.denied("approval", "view only: a viewer cannot answer approvals")
	}
	var p ext.ApprovalAnswerParams
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	switch {
	case p.ID == "":
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "id is empty")
	case p.Decision != ext.DecisionApprove && p.Decision != ext.DecisionDeny:
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "decision must be %q or %q", ext.DecisionApprove, ext.DecisionDeny)
	case len(p.Reason) > ext.ApprovalMaxRule:
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "reason must be at most %d bytes", ext.ApprovalMaxRule)
	}
	s := c.s
	ap := &s.approvals
	ap.mu.Lock()
	e := ap.byID[p.ID]
	var uri string
	if e != nil {
		uri = e.Terminal
	}
	ap.mu.Unlock()
	if e == nil || !c.mayAnswerOrSee(uri) {
		return nil, ahp.Errorf(ahp.CodeNotFound, "no approval %q", ahp.Clip(p.ID))
	}
	if c.role != auth.RoleOwner {
		claim, _ := s.m.Claim(uri)
		if claim.Kind != ahp.ClaimClient || claim.ClientID != c.clientID {
			return nil, c.denied("approval", "only the owner or whoever has control of the terminal can answer")
		}
		// A driver holds the terminal it types into: without this it could
		// approve its own Enter. requester never changes after filing.
		if e.requester.principal == c.principal {
			return nil, c.denied("approval", "a driver cannot answer its own approval: the owner answers")
		}
	}
	state, reason := ext.ApprovalApproved, ""
	if p.Decision == ext.DecisionDeny {
		state, reason = ext.ApprovalDenied, cleanLabel(p.Reason)
	}
	by := &ext.Who{Name: c.PresenceMember().Name}
	ap.mu.Lock()
	if ap.byID[p.ID] != e {
		ap.mu.Unlock()
		return nil, ahp.Errorf(ahp.CodeNotFound, "no approval %q", ahp.Clip(p.ID))
	}
	if e.State != ext.ApprovalPending {
		err := alreadyAnswered(e.Approval)
		ap.mu.Unlock()
		return nil, err
	}
	a := s.resolveLocked(e, state, by, reason, p.AlwaysAllow && state == ext.ApprovalApproved)
	ap.mu.Unlock()
	s.auditApproval(c, audit.ApprovalAnswered, a)
	c.log.Info("approval answered", "approval", a.ID, "terminal", a.Terminal, "decision", a.State)
	e.done(ext.ApprovalResult{ID: a.ID, State: a.State, AnsweredBy: a.AnsweredBy, DenyReason: a.DenyReason, AlwaysAllow: a.AlwaysAllow})
	return ext.ApprovalAnswerResult{Approval: a}, nil
}

// alreadyAnswered is the -32010 of a second answer, naming the first.
func alreadyAnswered(a ext.Approval) *ahp.Error {
	switch {
	case a.AnsweredBy != nil:
		return ahp.Errorf(ahp.CodeAlreadyExists, "already %s by %s", a.State, a.AnsweredBy.Name)
	case a.State == ext.ApprovalTimedOut:
		return ahp.Errorf(ahp.CodeAlreadyExists, "already timed out")
	}
	return ahp.Errorf(ahp.CodeAlreadyExists, "already %s", a.State)
}

// mayAnswerOrSee reports whether the connection sees the approvals of
// terminal uri: the owner sees all, a driver those of the terminals it may
// type into, a viewer none.
func (c *conn) mayAnswerOrSee(uri string) bool {
	switch c.role {
	case auth.RoleOwner:
		return true
	case auth.RoleDriver:
		return c.scope == "" || c.scope == uri
	}
	return false
}

// approvalList answers ext.MethodApprovalList.
func (c *conn) approvalList() (any, *ahp.Error) {
	if c.role == auth.RoleViewer {
		return nil, c.denied("approval", "view only: a viewer sees no approvals")
	}
	ap := &c.s.approvals
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return ext.ApprovalList{Approvals: ap.listLocked(c.scopeForApprovals())}, nil
}

// scopeForApprovals is the terminal whose approvals a driver link sees, ""
// for all.
func (c *conn) scopeForApprovals() string {
	if c.role == auth.RoleOwner {
		return ""
	}
	return c.scope
}

// listLocked is the list a connection with scope sees.
func (ap *approvals) listLocked(scope string) []ext.Approval {
	out := []ext.Approval{}
	for _, e := range ap.order {
		if scope == "" || e.Terminal == scope {
			out = append(out, e.Approval)
		}
	}
	return out
}

// watchApprovals makes an initialized connection that may see approvals
// get the list (at once when it is not empty).
func (s *Server) watchApprovals(c *conn) {
	if c.role == auth.RoleViewer {
		return
	}
	ap := &s.approvals
	ap.mu.Lock()
	defer ap.mu.Unlock()
	if ap.stopped {
		return
	}
	if ap.subs == nil {
		ap.subs = map[*conn]*approvalSub{}
	}
	if ap.subs[c] != nil {
		return
	}
	sub := &approvalSub{scope: c.scopeForApprovals(), sent: []byte(`[]`)}
	ap.subs[c] = sub
	if len(ap.listLocked(sub.scope)) > 0 {
		sub.want = true
		ap.armLocked(0)
	}
}

// approvalsLeft withdraws the approvals a closed connection asked for and
// stops sending it the list.
func (s *Server) approvalsLeft(c *conn) {
	ap := &s.approvals
	ap.mu.Lock()
	delete(ap.subs, c)
	var gone []ext.Approval
	for _, e := range ap.order {
		if e.requester == c && e.State == ext.ApprovalPending {
			gone = append(gone, s.resolveLocked(e, ext.ApprovalWithdrawn, nil, "", false))
		}
	}
	ap.mu.Unlock()
	for _, a := range gone {
		s.auditApproval(c, audit.ApprovalAnswered, a)
	}
}

// changedLocked marks the list changed for every connection and arms the
// sender.
func (ap *approvals) changedLocked() {
	for _, sub := range ap.subs {
		sub.want = true
	}
	ap.armLocked(0)
}

// armLocked runs the sender after d, unless it is armed already.
func (ap *approvals) armLocked(d time.Duration) {
	if ap.armed || ap.stopped {
		return
	}
	ap.armed = true
	ap.timers.Add(1)
	if ap.timer == nil {
		ap.timer = time.AfterFunc(d, ap.send)
	} else {
		ap.timer.Reset(d)
	}
}

// send sends the list to every connection that wants it and was last sent
// one at least approvalInterval ago, and arms itself for the others.
func (ap *approvals) send() {
	defer ap.timers.Done()
	ap.mu.Lock()
	defer ap.mu.Unlock()
	ap.armed = false
	if ap.stopped {
		return
	}
	now := time.Now()
	next := time.Duration(-1)
	lists := map[string][]byte{}
	for c, sub := range ap.subs {
		if !sub.want {
			continue
		}
		if wait := sub.last.Add(approvalInterval).Sub(now); wait > 0 {
			if next < 0 || wait < next {
				next = wait
			}
			continue
		}
		sub.want = false
		list, ok := lists[sub.scope]
		if !ok {
			list, _ = json.Marshal(ap.listLocked(sub.scope))
			lists[sub.scope] = list
		}
		if string(list) == string(sub.sent) {
			continue // nothing it sees changed
		}
		sub.sent, sub.last = list, now
		frame, err := ahp.EncodeNotification(ext.NotifyApprovals, json.RawMessage(`{"approvals":`+string(list)+`}`), ahp.Current)
		if err != nil {
			continue
		}
		c.push(frame)
	}
	if next >= 0 {
		ap.armLocked(next)
	}
}

// stop ends every timer (Server.Close): the requesters' connections are
// closed already.
func (ap *approvals) stop() {
	ap.mu.Lock()
	ap.stopped = true
	if ap.armed && ap.timer.Stop() {
		ap.armed = false
		ap.timers.Done()
	}
	for _, e := range ap.order {
		if e.timer.Stop() {
			ap.timers.Done()
		}
	}
	ap.mu.Unlock()
	ap.timers.Wait()
}

// auditApproval puts a request or an answer in the audit trail: by c, or
// by the server (c nil: a timeout).
func (s *Server) auditApproval(c *conn, kind string, a ext.Approval) {
	if s.cfg.Audit == nil {
		return
	}
	var e audit.Event
	if c != nil {
		e = c.auditEvent(kind, a.Terminal)
	} else {
		e = audit.Event{Event: kind, Who: "server", Terminal: a.Terminal, Title: s.titleOf(a.Terminal)}
	}
	e.Approval, e.Command, e.Rule = a.ID, a.CommandLine, a.Rule
	if kind == audit.ApprovalAnswered {
		e.Decision, e.Reason = a.State, a.DenyReason
	}
	s.cfg.Audit.Record(e)
}
