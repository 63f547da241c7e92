package terminals

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/termhost/termhost/ahp"
)

// Policy is what a connection's role allows it to dispatch.
type Policy struct {
	// Refuse returns a rejection reason for an action the role may not
	// dispatch at all, or "" to allow it; nil allows everything.
	Refuse func(a ahp.Action) string
	// TakeClaim lets the connection take a terminal's claim even from a
	// connected holder (the owner always can take control).
	TakeClaim bool
	// Accepted, if set, sees each accepted action, under the manager's lock
	// (so before any other dispatch or snapshot): it must not block.
	Accepted func(a ahp.Action)
}

// Dispatch handles a client's dispatchAction (§8.3): unknown channels are
// dropped silently; anything refused gets a rejection envelope sent to s only;
// an accepted action has its side effect, is reduced and is echoed with its
// origin to every subscriber of the channel, except terminal/input (see
// echoInputLocked).
func (m *Manager) Dispatch(s Subscriber, origin ahp.Origin, uri string, raw json.RawMessage, policy Policy) {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	if err := ahp.CheckChannel(uri); err != nil {
		m.hub.rejectLocked(s, uri, rawAction(raw), origin, err.Error())
		return
	}
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
	if policy.Refuse != nil { // the connection's role comes first
		reason = policy.Refuse(a)
	}
	if reason == "" {
		reason = m.checkLocked(t, uri, s, origin, a, policy.TakeClaim)
	}
	if reason == "" && t != nil {
		reason = m.effectLocked(t, a)
	}
	if reason != "" {
		m.log.Debug("dispatch rejected", "channel", ahp.Clip(uri), "type", ahp.Clip(a.Type), "client", ahp.Clip(origin.ClientID), "reason", ahp.Clip(reason))
		m.hub.rejectLocked(s, uri, a, origin, reason)
		return
	}
	if policy.Accepted != nil {
		policy.Accepted(a)
	}
	if a.Type == ahp.TerminalInput {
		m.hub.echoInputLocked(s, uri, a, origin)
		return
	}
	m.applyLocked(t, a)
	m.hub.publishLocked(uri, a, &origin)
	switch a.Type {
	case ahp.TerminalClaimed, ahp.TerminalTitleChanged:
		m.publishCatalogueLocked()
	}
}

// checkLocked validates an action against the channel's state. takeClaim
// lets s take the claim from a connected holder.
func (m *Manager) checkLocked(t *terminal, uri string, s Subscriber, origin ahp.Origin, a ahp.Action, takeClaim bool) string {
	if !a.Known() || !ahp.ClientDispatchable(a.Type) {
		return fmt.Sprintf("%s cannot be dispatched by clients", ahp.Clip(a.Type))
	}
	if err := a.CheckLimits(); err != nil {
		return err.Error()
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
	// origin.ClientID is bound to the connection's principal (the server
	// refuses a clientId another principal uses), and a view-only
	// connection never holds a claim.
	isHolder := holder.Kind == ahp.ClaimClient && holder.ClientID == origin.ClientID && !s.ViewOnly()
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
		if err := a.Claim.ValidateFor(s.Shape()); err != nil { // chat, from 0.9.0 on
			return err.Error()
		}
		// The holder may hand over; the owner may always take it; anyone may
		// take a claim whose client is gone; a session claim may be narrowed
		// (detached from its tool call).
		if !isHolder && !takeClaim && !holder.Narrows(a.Claim) && (holder.Kind != ahp.ClaimClient || m.clients[holder.ClientID] > 0) {
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
