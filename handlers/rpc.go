package handlers

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/terminals"
)

var errUnsupportedVersion = errors.New("unsupported protocol version")

// handle answers one inbound frame. A non-nil result ends the connection.
func (c *conn) handle(frame []byte) error {
	if in, ok := fastInput(frame); ok {
		return c.handleInput(in)
	}
	msg, err := ahp.DecodeMessage(frame)
	switch {
	case errors.Is(err, ahp.ErrParse):
		c.log.Info("rejected frame: not JSON", "bytes", len(frame))
		c.answer(ahp.EncodeError(nil, ahp.Errorf(ahp.CodeParseError, "parse error: the frame is not valid JSON")))
		return nil
	case err != nil:
		c.log.Info("rejected frame: not a JSON-RPC request", "bytes", len(frame))
		var id json.RawMessage
		if msg != nil && msg.ID != nil && msg.Method != "" {
			id = msg.ID
		}
		c.answer(ahp.EncodeError(id, ahp.Errorf(ahp.CodeInvalidRequest, "invalid request: expected one JSON-RPC 2.0 request or notification object")))
		return nil
	}
	if c.lowered.Load() {
		// The person's role was lowered: nothing more from this
		// connection, which is closing (closeRoleLowered).
		if !msg.IsNotification() {
			c.answer(ahp.EncodeError(msg.ID, ahp.Errorf(ahp.CodePermissionDenied, "not allowed: your role changed; reconnect")))
		}
		return nil
	}
	if err := c.pace(c.ctx, msg.Method); err != nil {
		return err // closing
	}
	if msg.IsNotification() {
		c.notification(msg)
		return nil
	}
	if msg.Method == ext.MethodApprovalRequest && c.initialized {
		// Answered when a person answers: the reader goes on meanwhile.
		if rpcErr := c.approvalRequest(msg); rpcErr != nil {
			c.log.Info("request failed", "method", ahp.Clip(msg.Method), "code", rpcErr.Code, "err", ahp.Clip(rpcErr.Message))
			c.answer(ahp.EncodeError(msg.ID, rpcErr))
		}
		return nil
	}
	result, rpcErr := c.request(msg)
	if rpcErr != nil {
		if rpcErr.Code != ahp.CodeMethodNotFound && rpcErr.Code != ahp.CodeNotFound {
			c.log.Info("request failed", "method", ahp.Clip(msg.Method), "code", rpcErr.Code, "err", ahp.Clip(rpcErr.Message))
		}
		frame := ahp.EncodeError(msg.ID, rpcErr)
		if rpcErr.Code == ahp.CodeUnsupportedProtocolVersion {
			// Answer, then close: the version cannot change on this socket.
			c.answer(frame)
			return errUnsupportedVersion
		}
		c.answer(frame)
		return nil
	}
	out, err := ahp.EncodeResult(msg.ID, result, c.shape)
	if err != nil {
		c.answer(ahp.EncodeError(msg.ID, ahp.Errorf(ahp.CodeInternalError, "internal error")))
		c.log.Warn("encode result", "method", ahp.Clip(msg.Method), "err", err)
		return nil
	}
	c.answer(out)
	if msg.Method == ahp.MethodInitialize || msg.Method == ahp.MethodReconnect {
		c.s.watchApprovals(c) // after the answer: the list is no reply to it
		c.s.watchHosts(c)
	}
	return nil
}

// decodeParams unmarshals params into v, with -32602 on failure.
func decodeParams(msg *ahp.Message, v any) *ahp.Error {
	if len(msg.Params) == 0 || string(msg.Params) == "null" {
		return ahp.Errorf(ahp.CodeInvalidParams, "%s needs params", msg.Method)
	}
	if err := json.Unmarshal(msg.Params, v); err != nil {
		return ahp.Errorf(ahp.CodeInvalidParams, "invalid params for %s: %v", msg.Method, err)
	}
	return nil
}

// request answers a request with a result (nil = JSON null) or an error.
func (c *conn) request(msg *ahp.Message) (any, *ahp.Error) {
	switch msg.Method {
	case ahp.MethodPing:
		return nil, nil
	case ahp.MethodInitialize:
		if c.initialized {
			return nil, ahp.Errorf(ahp.CodeInvalidRequest, "initialize may only be sent once per connection")
		}
		return c.initialize(msg)
	case ahp.MethodReconnect:
		if c.initialized {
			return nil, ahp.Errorf(ahp.CodeInvalidRequest, "reconnect must be the first request on a connection")
		}
		return c.reconnect(msg)
	}
	if !c.initialized {
		return nil, ahp.Errorf(ahp.CodeInvalidRequest, "%s before initialize: send initialize or reconnect first", msg.Method)
	}
	switch msg.Method {
	case ahp.MethodSubscribe:
		var p ahp.SubscribeParams
		if err := decodeParams(msg, &p); err != nil {
			return nil, err
		}
		if err := p.Validate(); err != nil {
			return nil, ahp.Errorf(ahp.CodeInvalidParams, "invalid subscribe params: %v", err)
		}
		snap, err := c.s.m.Subscribe(c, p.Channel)
		if err != nil {
			if c.scope != "" && errors.Is(err, terminals.ErrNotFound) {
				c.s.metrics.permissionDenied.WithLabelValues("subscribe").Inc()
			}
			return nil, c.rpcError(err)
		}
		return ahp.SubscribeResult{Snapshot: &snap}, nil
	case ahp.MethodCreateTerminal:
		var p ahp.CreateTerminalParams
		if err := decodeParams(msg, &p); err != nil {
			return nil, err
		}
		if c.role != auth.RoleOwner {
			return nil, c.denied("command", "a share link cannot create terminals")
		}
		if err := p.Validate(); err != nil {
			return nil, ahp.Errorf(ahp.CodeInvalidParams, "invalid createTerminal params: %v", err)
		}
		if err := p.CheckShape(c.shape); err != nil {
			return nil, ahp.Errorf(ahp.CodeInvalidParams, "invalid createTerminal params: %v", err)
		}
		c.bindClaim(p.Claim)
		if err := c.s.m.CreateAs(p, c.agentName()); err != nil {
			return nil, c.rpcError(err)
		}
		c.record(audit.TerminalCreated, p.Channel, nil)
		return nil, nil
	case ahp.MethodDisposeTerminal:
		var p ahp.ChannelParams
		if err := decodeParams(msg, &p); err != nil {
			return nil, err
		}
		if err := p.Validate(); err != nil {
			return nil, ahp.Errorf(ahp.CodeInvalidParams, "invalid disposeTerminal params: %v", err)
		}
		if c.role != auth.RoleOwner {
			return nil, c.denied("command", "a share link cannot dispose terminals")
		}
		if err := ahp.CheckTerminalURI(p.Channel); err != nil {
			return nil, ahp.Errorf(ahp.CodeInvalidParams, "%v", err)
		}
		title := c.s.titleOf(p.Channel)
		if err := c.s.m.Dispose(p.Channel); err != nil {
			return nil, c.rpcError(err)
		}
		c.record(audit.TerminalDisposed, p.Channel, func(e *audit.Event) { e.Title = title })
		for _, sh := range c.s.auth.Shares.RevokeTerminal(p.Channel) {
			c.s.disconnectShare(sh.ID, "the terminal was disposed")
		}
		return nil, nil
	case ext.MethodRequestControl, ext.MethodAnswerControl:
		return c.controlCommand(msg)
	case ext.MethodShareCreate, ext.MethodShareList, ext.MethodShareRevoke:
		if c.role != auth.RoleOwner {
			return nil, c.denied("command", "only the owner can manage share links")
		}
		return c.shareCommand(msg)
	case ext.MethodRecord:
		return c.recordCommand(msg)
	case ext.MethodScreen:
		return c.screen(msg)
	case ext.MethodPresence:
		return c.presenceCommand()
	case ext.MethodApprovalAnswer:
		return c.approvalAnswer(msg)
	case ext.MethodApprovalList:
		return c.approvalList()
	case ahp.MethodListSessions:
		return ahp.ListSessionsResult{Items: []json.RawMessage{}}, nil
	case ahp.MethodAuthenticate:
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "this server has no protected resources to authenticate")
	}
	return nil, ahp.Errorf(ahp.CodeMethodNotFound, "method %q is not implemented by this terminal server", msg.Method)
}

func (c *conn) initialize(msg *ahp.Message) (any, *ahp.Error) {
	var p ahp.InitializeParams
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "invalid initialize params: %v", err)
	}
	version, shape, ok := ahp.Negotiate(p.ProtocolVersions)
	if !ok {
		c.log.Info("unsupported protocol versions", "offered", ahp.Clip(strings.Join(p.ProtocolVersions, ",")))
		return nil, ahp.UnsupportedVersionError()
	}
	binary := hasCapability(p.Capabilities, ext.CapabilityBinaryData)
	if !c.s.remember(p.ClientID, c.principal, version, shape, binary) {
		return nil, errClientIDTaken(p.ClientID)
	}
	c.begin(p.ClientID, version, shape, binary)
	c.presence.info = c.s.clientInfo(p.ClientID, p.ClientInfo)
	c.recordConnect()
	if c.agentName() != "" {
		c.s.separateAgent(c, p.ClientID)
	}
	seq, snaps := c.s.m.Initialize(c, p.InitialSubscriptions)
	c.log.Debug("initialized", "client", ahp.Clip(p.ClientID), "version", version)
	return ahp.InitializeResult{ProtocolVersion: version, ServerSeq: seq, Snapshots: snaps,
		ServerInfo: &ahp.Implementation{Name: "termhost", Version: c.s.cfg.Version}, Meta: c.s.initializeMeta(c.presenceIDFor(p.ClientID))}, nil
}

func (c *conn) reconnect(msg *ahp.Message) (any, *ahp.Error) {
	var p ahp.ReconnectParams
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "invalid reconnect params: %v", err)
	}
	rec, err := c.s.resume(p.ClientID, c.principal)
	if err != nil {
		c.s.metrics.reconnects.WithLabelValues("rejected").Inc()
		return nil, err
	}
	c.begin(p.ClientID, rec.version, rec.shape, rec.binary)
	c.presence.info = c.s.clientInfo(p.ClientID, nil)
	c.recordConnect()
	if c.agentName() != "" {
		c.s.separateAgent(c, p.ClientID)
	}
	res := c.s.m.Reconnect(c, p)
	c.s.metrics.reconnects.WithLabelValues(res.Kind.String()).Inc()
	return res.Result(), nil
}

// begin records the negotiated protocol state for this connection (the
// server has counted it as a live connection of clientID).
func (c *conn) begin(clientID, version string, shape ahp.Shape, binary bool) {
	c.mu.Lock() // the writer reads clientID for its log (loggedClient)
	c.initialized, c.clientID, c.version, c.shape, c.binary = true, clientID, version, shape, binary
	c.mu.Unlock()
	if c.person != "" {
		c.s.persons.Store(clientID, c.personName()) // marks their commands (sso.go)
	}
}

// hasCapability reports whether initialize's capabilities (presence flags,
// e.g. {"mcpApps":{}}) name capability with a value other than null.
func hasCapability(capabilities json.RawMessage, capability string) bool {
	var flags map[string]json.RawMessage
	if json.Unmarshal(capabilities, &flags) != nil {
		return false
	}
	v, ok := flags[capability]
	return ok && string(v) != "null"
}

// notification handles unsubscribe and dispatchAction; others are ignored.
func (c *conn) notification(msg *ahp.Message) {
	if !c.initialized {
		c.log.Debug("notification before initialize ignored", "method", ahp.Clip(msg.Method))
		return
	}
	switch msg.Method {
	case ahp.MethodUnsubscribe:
		var p ahp.ChannelParams
		if decodeParams(msg, &p) == nil && p.Validate() == nil {
			c.s.m.Unsubscribe(c, p.Channel)
		}
	case ahp.MethodDispatchAction:
		var p ahp.DispatchActionParams
		if err := decodeParams(msg, &p); err != nil || p.Channel == "" || len(p.Action) == 0 {
			c.log.Info("dropped malformed dispatchAction", "client", ahp.Clip(c.clientID))
			return
		}
		c.dispatch(ahp.Origin{ClientID: c.clientID, ClientSeq: p.ClientSeq}, p.Channel, p.Action)
	default:
		c.log.Debug("unknown notification ignored", "method", ahp.Clip(msg.Method))
	}
}

// denied counts and builds a -32009 for a role refusal.
func (c *conn) denied(kind, msg string) *ahp.Error {
	c.s.metrics.permissionDenied.WithLabelValues(kind).Inc()
	c.log.Info("permission denied", "client", ahp.Clip(c.clientID), "role", c.role, "what", msg)
	return ahp.Errorf(ahp.CodePermissionDenied, "%s", msg)
}

// dispatch decodes a dispatched action and hands it to the manager. An action
// that cannot be decoded is rejected to its dispatcher, when the channel is
// one it may see (a dispatch to any other is dropped silently, as AHP says);
// a refusal by role is counted here, outside the hub lock.
func (c *conn) dispatch(origin ahp.Origin, uri string, raw json.RawMessage) {
	if err := ahp.CheckChannel(uri); err != nil {
		c.s.m.Reject(c, origin, uri, rawAction(raw), err.Error())
		return
	}
	var a ahp.Action
	if err := json.Unmarshal(raw, &a); err != nil {
		reason := err.Error()
		if !errors.Is(err, ahp.ErrInvalidAction) {
			reason = "invalid action: " + reason
		}
		if c.s.m.Visible(c, uri) {
			c.s.m.Reject(c, origin, uri, rawAction(raw), reason)
		}
		return
	}
	c.dispatchAction(origin, uri, a, raw)
}

// dispatchAction is dispatch once the action is decoded (raw: as sent).
func (c *conn) dispatchAction(origin ahp.Origin, uri string, a ahp.Action, raw json.RawMessage) {
	if err := ahp.CheckChannel(uri); err != nil {
		c.s.m.Reject(c, origin, uri, rawAction(raw), err.Error())
		return
	}
	a = c.echoable(uri, a, raw)
	if c.gateDriverInput(origin, uri, a) {
		return // held for an approval (approvedrivers.go)
	}
	out := c.dispatchOnce(origin, uri, a)
	for out == terminals.Full { // input the terminal has no room for yet
		if !c.awaitInput(uri, len(a.Data)) {
			return // closing
		}
		out = c.dispatchOnce(origin, uri, a)
	}
	switch out {
	case terminals.RefusedByRole:
		c.s.metrics.permissionDenied.WithLabelValues("dispatch").Inc()
	case terminals.Accepted:
		if a.Type == ahp.TerminalClaimed {
			c.s.controlClaimMoved(uri)
			c.s.m.NoteAgent(uri, a.Claim, c.agentName())
		}
		c.recordAction(uri, a)
	}
}

// dispatchOnce hands a decoded action to the manager, once. The
// confirmation of terminal/input to this connection is written on this
// goroutine, right after the keystroke went to the pty (writeHeld).
func (c *conn) dispatchOnce(origin ahp.Origin, uri string, a ahp.Action) terminals.Outcome {
	if a.Type != ahp.TerminalInput {
		return c.s.m.Dispatch(c, origin, uri, a, c.policy())
	}
	c.holdKicks()
	defer c.writeHeld()
	return c.s.m.Dispatch(c, origin, uri, a, c.policy())
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

// policy is the role check for dispatches: owners may dispatch anything and
// take any terminal's claim, drivers every terminal action a client may
// dispatch, viewers nothing. An accepted claim binds the clientId it names.
func (c *conn) policy() terminals.Policy {
	bind := func(a ahp.Action) {
		if a.Type == ahp.TerminalClaimed {
			c.bindClaim(&a.Claim)
		}
	}
	switch c.role {
	case auth.RoleOwner:
		return terminals.Policy{TakeClaim: true, Agent: c.PresenceMember().Kind == ext.KindAgent, Accepted: bind}
	case auth.RoleDriver:
		return terminals.Policy{Accepted: bind, Refuse: func(a ahp.Action) string {
			if strings.HasPrefix(a.Type, "terminal/") {
				return ""
			}
			return "a driver link may only act on its terminal"
		}}
	default:
		return terminals.Policy{Refuse: func(a ahp.Action) string {
			if c.person != "" {
				return "view only: a viewer cannot " + verb(a.Type)
			}
			return "view only: this share link cannot " + verb(a.Type)
		}}
	}
}

// bindClaim binds the clientId a client claim names to this connection's
// principal when no principal uses it yet, so that nobody else can later
// take that clientId and with it the claim. (The connection's own clientId
// is bound already.)
func (c *conn) bindClaim(claim *ahp.Claim) {
	if claim != nil && claim.Kind == ahp.ClaimClient && claim.ClientID != "" && claim.ClientID != c.clientID {
		c.s.bindClaimed(claim.ClientID, c.principal)
	}
}

func verb(actionType string) string {
	switch actionType {
	case ahp.TerminalInput:
		return "type"
	case ahp.TerminalResized:
		return "resize the terminal"
	case ahp.TerminalClaimed:
		return "take control"
	case ahp.TerminalTitleChanged:
		return "rename the terminal"
	case ahp.TerminalCleared:
		return "clear the terminal"
	}
	return "change anything"
}

// rpcError turns a manager error into a JSON-RPC error whose message is
// safe to send: the manager's own sentinels carry messages written for the
// client; a program that could not start is named (only the owner creates
// terminals) without the system error; anything else is "internal error".
// The detail goes to the log.
func (c *conn) rpcError(err error) *ahp.Error {
	code := ahp.CodeInternalError
	switch {
	case errors.Is(err, terminals.ErrNotFound), errors.Is(err, terminals.ErrNoScreen):
		code = ahp.CodeNotFound
	case errors.Is(err, terminals.ErrExists):
		code = ahp.CodeAlreadyExists
	case errors.Is(err, terminals.ErrInvalid):
		code = ahp.CodeInvalidParams
	case errors.Is(err, terminals.ErrLimit):
		code = ahp.CodePermissionDenied
	}
	if code != ahp.CodeInternalError {
		return &ahp.Error{Code: code, Message: err.Error()}
	}
	c.log.Warn("internal error", "err", err)
	if se, ok := errors.AsType[*terminals.StartError](err); ok {
		return ahp.Errorf(code, "internal error: cannot start %s", se.Program)
	}
	return ahp.Errorf(code, "internal error")
}

// errClientIDTaken is the -32602 for a clientId that another principal
// already uses (or that a terminal's claim names on its behalf).
func errClientIDTaken(clientID string) *ahp.Error {
	return ahp.Errorf(ahp.CodeInvalidParams, "clientId %q belongs to another user or share link: choose a fresh clientId", ahp.Clip(clientID))
}
