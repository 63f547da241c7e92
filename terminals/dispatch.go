package terminals

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/termhost/termhost/ahp"
)

// Policy decides, per connection, whether it may dispatch an action at all
// (roles). It returns a rejection reason, or "" to allow.
type Policy func(a ahp.Action) string

// Dispatch handles a client's dispatchAction (§8.3): unknown channels are
// dropped silently; anything refused gets a rejection envelope sent to s only;
// an accepted action has its side effect, is reduced and is echoed with its
// origin to every subscriber of the channel.
func (m *Manager) Dispatch(s Subscriber, origin ahp.Origin, uri string, raw json.RawMessage, policy Policy) {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	var t *terminal
	if uri != ahp.RootURI {
		if t = m.terms[uri]; t == nil || t.disposed || (s.Scope() != "" && s.Scope() != uri) {
			return
		}
	}
	var a ahp.Action
	if err := json.Unmarshal(raw, &a); err != nil {
		reason := err.Error()
		if !errors.Is(err, ahp.ErrInvalidAction) {
			reason = "invalid action: " + reason
		}
		m.hub.rejectLocked(s, uri, rawAction(raw), origin, reason)
		return
	}
	reason := ""
	if policy != nil { // the connection's role comes first
		reason = policy(a)
	}
	if reason == "" {
		reason = m.checkLocked(t, uri, origin, a)
	}
	if reason == "" && t != nil {
		reason = m.effectLocked(t, a)
	}
	if reason != "" {
		m.log.Debug("dispatch rejected", "channel", uri, "type", a.Type, "client", origin.ClientID, "reason", reason)
		m.hub.rejectLocked(s, uri, a, origin, reason)
		return
	}
	m.applyLocked(t, a)
	m.hub.publishLocked(uri, a, &origin)
	switch a.Type {
	case ahp.TerminalClaimed, ahp.TerminalTitleChanged:
		m.publishCatalogueLocked()
	}
}

// checkLocked validates an action against the channel's state.
func (m *Manager) checkLocked(t *terminal, uri string, origin ahp.Origin, a ahp.Action) string {
	if !a.Known() || !ahp.ClientDispatchable(a.Type) {
		return fmt.Sprintf("%s cannot be dispatched by clients", a.Type)
	}
	if uri == ahp.RootURI {
		if a.Type == ahp.RootConfigChanged {
			return "this server exposes no configuration"
		}
		return fmt.Sprintf("%s is not a root action", a.Type)
	}
	if a.Type == ahp.RootConfigChanged {
		return "root/configChanged belongs to " + ahp.RootURI
	}
	holder := t.state.Claim
	isHolder := holder.Kind == ahp.ClaimClient && holder.ClientID == origin.ClientID
	switch a.Type {
	case ahp.TerminalInput:
		if t.state.Lifecycle.Exited() {
			return "the terminal has exited"
		}
	case ahp.TerminalResized:
		switch {
		case a.Cols < 1 || a.Rows < 1 || a.Cols > ahp.MaxDimension || a.Rows > ahp.MaxDimension:
			return fmt.Sprintf("cols and rows must be between 1 and %d", ahp.MaxDimension)
		case !isHolder && m.clients[holderID(holder)] > 0:
			return "only the claim holder can resize the terminal"
		}
	case ahp.TerminalClaimed:
		// The holder may hand over; anyone may take a claim whose client is gone;
		// a session claim may be narrowed (detached from its tool call).
		if !isHolder && !holder.Narrows(a.Claim) && (holder.Kind != ahp.ClaimClient || m.clients[holder.ClientID] > 0) {
			return "terminal is claimed by another client"
		}
	}
	return ""
}

func holderID(c ahp.Claim) string {
	if c.Kind == ahp.ClaimClient {
		return c.ClientID
	}
	return ""
}

// effectLocked performs the side effect of an accepted terminal action.
func (m *Manager) effectLocked(t *terminal, a ahp.Action) string {
	switch a.Type {
	case ahp.TerminalInput:
		if t.queued+len(a.Data) > m.cfg.InputQueue {
			return "input queue is full; the shell is not reading"
		}
		select {
		case t.input <- []byte(a.Data):
			t.queued += len(a.Data)
		default:
			return "input queue is full; the shell is not reading"
		}
	case ahp.TerminalResized:
		if err := t.resize(a.Cols, a.Rows); err != nil {
			return "resize failed"
		}
	case ahp.TerminalTitleChanged:
		// A rename pins the title; clearing it lets the shell set it again.
		t.titlePinned = a.Title != ""
	}
	return ""
}
