package terminals

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/pty"
)

// Policy is what a connection's role allows it to dispatch.
type Policy struct {
	// Refuse returns a rejection reason for an action the role may not
	// dispatch at all, or "" to allow it; nil allows everything. It runs
	// under the hub lock: it must only decide (the caller counts refusals
	// from the Outcome).
	Refuse func(a ahp.Action) string
	// TakeClaim lets the connection take a terminal's claim even from a
	// connected holder (the owner always can take control).
	TakeClaim bool
	// Agent marks a connection that acts for an agent (termhost mcp), with
	// the owner's rights otherwise: it never takes a terminal from a person
	// who holds it and is present. A late claim change of the agent's (its
	// tool call ended) must not take control back from whoever took over.
	Agent bool
	// Accepted, if set, sees each accepted action, under the hub lock (so
	// before any other dispatch or snapshot): it must not block.
	Accepted func(a ahp.Action)
}

// Outcome is what became of a dispatched action.
type Outcome int

// Outcomes of Dispatch.
const (
	// Dropped: the channel does not exist or the connection may not see it
	// (silently, as AHP says for a dispatch to an unknown channel).
	Dropped Outcome = iota + 1
	// Accepted: applied and echoed.
	Accepted
	// RefusedByRole: the connection's role may not dispatch it (rejected).
	RefusedByRole
	// Rejected: invalid for the channel's state (rejected).
	Rejected
	// Full: terminal/input the terminal's input queue has no room for yet
	// (Config.InputQueue): neither accepted nor rejected, nothing is sent.
	// The dispatcher waits in AwaitInput, reading nothing more from its
	// client meanwhile, and dispatches it again.
	Full
)

// Dispatch handles a client's decoded dispatchAction: unknown
// channels are dropped silently; anything refused gets a rejection envelope
// sent to s only; an accepted action has its side effect, is reduced and is
// echoed with its origin to every subscriber of the channel, except
// terminal/input, echoed to s only (see hub.Tx.SendTo).
func (m *Manager) Dispatch(s Subscriber, origin ahp.Origin, uri string, a ahp.Action, policy Policy) Outcome {
	if err := ahp.CheckChannel(uri); err != nil {
		m.Reject(s, origin, uri, a, err.Error())
		return Rejected
	}
	var t *terminal
	if uri != ahp.RootURI {
		if t = m.live(uri); t == nil {
			return Dropped
		}
	}
	out := Dropped
	m.hub.Do(func(tx hub.Tx) {
		if !tx.Visible(s, uri) {
			return
		}
		out = Rejected
		reason := ""
		if policy.Refuse != nil { // the connection's role comes first
			if reason = policy.Refuse(a); reason != "" {
				out = RefusedByRole
			}
		}
		if reason == "" {
			reason = m.check(tx, t, uri, s, origin, a, policy)
		}
		if reason == "" && t != nil && a.Type == ahp.TerminalResized && m.cfg.SizePolicy == SizeSmallest {
			// s's view asks for this size; the pty gets the smallest asked for.
			a.Cols, a.Rows = m.sizes.want(uri, s, a.Cols, a.Rows)
		}
		if reason == "" && t != nil {
			var full bool
			if reason, full = m.effect(t, a); full {
				out = Full
				return
			}
		}
		if reason != "" {
			m.log.Debug("dispatch rejected", "channel", ahp.Clip(uri), "type", ahp.Clip(a.Type), "client", ahp.Clip(origin.ClientID), "reason", ahp.Clip(reason))
			tx.SendTo(s, ahp.Envelope{Channel: uri, Action: a, Origin: &origin, RejectionReason: reason})
			return
		}
		out = Accepted
		if a.Type == ahp.TerminalClaimed && a.Claim.Kind == ahp.ClaimSession {
			m.secrets.Kick() // watch for secret prompts while an agent holds it
		}
		if t != nil && (a.Type == ahp.TerminalInput || a.Type == ahp.TerminalResized && m.cfg.SizePolicy != SizeSmallest) {
			m.takeFree(tx, uri, s, origin.ClientID) // its terminal/claimed updates presence in this step
		}
		if a.Type == ahp.TerminalInput && t != nil {
			t.inputs.note(origin.ClientID) // a holder that stops typing is away (LastInput)
		}
		if policy.Accepted != nil {
			policy.Accepted(a)
		}
		if a.Type == ahp.TerminalInput {
			tx.SendTo(s, ahp.Envelope{Channel: uri, Action: a, Origin: &origin})
			return
		}
		tx.Publish(uri, a, &origin)
	})
	return out
}

// Reject sends a rejection envelope for a to s only; it takes a serverSeq
// but is not replayed (docs/protocol.md#termhost-decisions: rejections go to
// the dispatcher only). Used for actions that could not be decoded.
func (m *Manager) Reject(s Subscriber, origin ahp.Origin, uri string, a ahp.Action, reason string) {
	m.hub.SendTo(s, ahp.Envelope{Channel: uri, Action: a, Origin: &origin, RejectionReason: reason})
}

// Visible reports whether the channel exists and s may see it: dispatches
// to any other channel are dropped without an answer.
func (m *Manager) Visible(s Subscriber, uri string) bool { return m.hub.Visible(s, uri) }

// check validates an action against the channel's state and what policy
// allows s.
func (m *Manager) check(tx hub.Tx, t *terminal, uri string, s Subscriber, origin ahp.Origin, a ahp.Action, policy Policy) string {
	takeClaim := policy.TakeClaim
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
	st, _ := tx.Terminal(uri)
	holder := st.Claim
	// origin.ClientID is bound to the connection's principal (the server
	// refuses a clientId another principal uses), and a view-only
	// connection never holds a claim.
	isHolder := holder.Kind == ahp.ClaimClient && holder.ClientID == origin.ClientID && !s.ViewOnly()
	holderPresent := holder.Kind == ahp.ClaimClient && m.Present(holder.ClientID)
	switch a.Type {
	case ahp.TerminalInput:
		if st.Lifecycle.Exited() {
			return "the terminal has exited"
		}
		if policy.Agent && t != nil && t.secret.Load() {
			return secretRefusal
		}
		return driveRefusal(a, holder, isHolder, holderPresent, takeClaim)
	case ahp.TerminalResized:
		if a.Cols < 1 || a.Rows < 1 || a.Cols > ahp.MaxDimension || a.Rows > ahp.MaxDimension {
			return fmt.Sprintf("cols and rows must be between 1 and %d", ahp.MaxDimension)
		}
		if m.cfg.SizePolicy == SizeSmallest { // every view that may type counts; the pty gets the smallest
			if s.ViewOnly() {
				return "a viewer cannot resize the terminal"
			}
			return ""
		}
		return driveRefusal(a, holder, isHolder, holderPresent, takeClaim)
	case ahp.TerminalClaimed:
		if err := a.Claim.ValidateFor(s.Shape()); err != nil { // chat, from 0.9.0 on
			return err.Error()
		}
		// The holder may hand over; the owner may always take it; anyone may
		// take a claim whose client is gone; a session claim may be narrowed
		// (detached from its tool call).
		if policy.Agent && !isHolder && holder.Kind == ahp.ClaimClient && holderPresent {
			return "a person holds this terminal: an agent does not take it back"
		}
		if !isHolder && !takeClaim && !holder.Narrows(a.Claim) && (holder.Kind != ahp.ClaimClient || holderPresent) {
			return "terminal is claimed by another client"
		}
		if !takeClaim && a.Claim.Kind != ahp.ClaimClient && !holder.Narrows(a.Claim) {
			return "only the owner can give a terminal to an agent session"
		}
	}
	return ""
}

// effect performs the side effect of an accepted terminal action; full:
// input that must wait for room in the terminal's input queue.
func (m *Manager) effect(t *terminal, a ahp.Action) (reason string, full bool) {
	switch a.Type {
	case ahp.TerminalInput:
		switch t.enqueueInput(a.Data, m.cfg.InputQueue, m.cfg.InputStall) {
		case inputFull:
			return "", true
		case inputStalled:
			return StalledInput(m.cfg.InputStall), false
		}
	case ahp.TerminalResized:
		t.resized(a.Cols, a.Rows)
		// An exited terminal's pty is released: its size is only state.
		if err := t.proc.Resize(a.Cols, a.Rows); err != nil && !errors.Is(err, pty.ErrClosed) {
			return "resize failed", false
		}
		// The recorder and the screen model follow the published resize
		// (their taps).
	case ahp.TerminalTitleChanged:
		// A rename pins the title; clearing it lets the shell set it again.
		t.titlePinned.Store(a.Title != "")
	}
	return "", false
}

// StalledInput is the rejection reason of input to a program that has
// taken nothing from its full input queue for stall.
func StalledInput(stall time.Duration) string {
	return fmt.Sprintf("input refused: the program in this terminal has read no input for %s and its input queue is full", stall)
}

// AwaitInput waits, for a dispatch of n bytes of terminal/input to uri
// that was Full, until it may be dispatched again: the terminal's input
// queue has room, its program has read nothing for Config.InputStall (the
// next dispatch is refused), the terminal has ended, or ctx is done. Only
// the caller waits: other connections and terminals go on.
func (m *Manager) AwaitInput(ctx context.Context, uri string, n int) {
	if t := m.live(uri); t != nil {
		t.awaitRoom(ctx, n, m.cfg.InputQueue, m.cfg.InputStall)
	}
}
