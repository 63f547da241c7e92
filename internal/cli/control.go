package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/label"
	"github.com/termhost/termhost/terminals"
)

// controlState is the request for control waiting for our answer, if any
// (we hold the claim): the stdin goroutine answers it, the events
// goroutine sets it.
type controlState struct {
	mu      sync.Mutex
	pending string // requestId
}

// requestControl asks for the claim: with ask (attach --take through a
// share link) the holder is asked and typing starts when the claim arrives
// (terminal/claimed); without (attach), only a claim nobody holds is taken.
func (s *session) requestControl(ctx context.Context, ask bool) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// termhost's control extension (docs/protocol.md, "Handing over control").
	r, err := s.c.RequestControl(cctx, s.uri, ask)
	if err != nil {
		s.note("cannot take control: %s; watching read-only", explainError(s.base, err))
		return
	}
	switch r.Status {
	case ext.ControlGranted: // the claim moved before the answer: type at once
		s.holding.Store(true)
		s.typing.Store(true)
	case ext.ControlHeld:
		s.note("%s has control; watching read-only (%s)", s.holderName(), s.takeHint())
	default:
		s.note("asked for control; waiting for the holder (yours after %s if they do not type)…", time.Duration(r.AutoGrantMs)*time.Millisecond)
	}
}

// ours reports whether claim is this client's.
func (s *session) ours(claim ahp.Claim) bool {
	return claim.Kind == ahp.ClaimClient && claim.ClientID == s.c.ClientID()
}

// takeHint says how to get control of the terminal.
func (s *session) takeHint() string {
	if s.viaLink {
		return "attach --take asks for control"
	}
	return "attach --take takes control"
}

// presence is who is connected to our terminal (ext.MethodPresence).
func (s *session) presence() []ext.Member {
	return agent.Presence(s.c)[s.uri]
}

// holderName names who holds our terminal's claim now.
func (s *session) holderName() string {
	if root, ok := s.c.Root(); ok {
		for _, info := range root.Terminals {
			if info.Resource == s.uri {
				return claimHolderName(info.Claim, s.presence())
			}
		}
	}
	return "another client"
}

// claimHolderName names a claim's holder for people by its presence name
// (never its clientId): "alice (driver link)", "Carol Jones (driver)" (a
// person signed in by SSO), "Owner (Firefox on Linux)",
// "an agent session"; "a client that is not here" when the holder is not
// connected to the terminal.
func claimHolderName(claim ahp.Claim, present []ext.Member) string {
	if claim.Kind == ahp.ClaimSession {
		name := "an agent session"
		for _, m := range present {
			if m.Kind == ext.KindAgent { // termhost mcp: "Agent · Claude Code"
				name = memberText(m)
				break
			}
		}
		if claim.ToolCallID != "" {
			name += ", running a tool call"
		}
		return name
	}
	id := terminals.PresenceID(claim.ClientID)
	for _, m := range present {
		if m.ID == id {
			return memberText(m)
		}
	}
	for _, m := range present {
		if m.Control { // a person signed in by SSO: one presence id for all their clients
			return memberText(m)
		}
	}
	return notHere
}

// notHere names a claim holder not connected to the terminal.
const notHere = "a client that is not here"

// onNotification handles the control notices of our terminal: answers to
// our request, and requests to us as the holder.
func (s *session) onNotification(ev client.Event) {
	if ev.Method != ext.NotifyControlRequest {
		return
	}
	var n ext.ControlNotice
	if json.Unmarshal(ev.Params, &n) != nil || n.Terminal != s.uri {
		return
	}
	who := memberText(n.From)
	if n.From.ID == terminals.PresenceID(s.c.ClientID()) { // our own request
		switch n.Status {
		case ext.ControlDeclined:
			s.note("your request for control was declined; watching read-only")
		case ext.ControlCancelled:
			s.note("your request for control ended: the claim moved elsewhere")
		}
		return
	}
	s.ctl.mu.Lock()
	if n.Status == ext.ControlPending {
		s.ctl.pending = n.RequestID
	} else if s.ctl.pending == n.RequestID {
		s.ctl.pending = ""
	}
	s.ctl.mu.Unlock()
	switch n.Status {
	case ext.ControlPending:
		s.note("%s asks for control: Ctrl-\\ y grants, Ctrl-\\ n declines (granted by itself after %s without typing)", who, time.Duration(n.AutoGrantMs)*time.Millisecond)
	case ext.ControlGranted:
		s.note("control handed to %s", who)
	case ext.ControlDeclined:
		s.note("declined %s's request for control", who)
	}
}

// answerPending answers the request waiting for us, if any (Ctrl-\ y or
// Ctrl-\ n); it reports whether there was one. It runs on the stdin
// goroutine: the call goes on its own, the outcome is noted when the
// server's notice arrives.
func (s *session) answerPending(grant bool) bool {
	s.ctl.mu.Lock()
	id := s.ctl.pending
	s.ctl.pending = ""
	s.ctl.mu.Unlock()
	if id == "" {
		return false
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.c.AnswerControl(ctx, s.uri, id, grant)
	}()
	return true
}

// memberText names a presence member for a person: its label and what it
// is. A person signed in by SSO is named (their role after it, as the web
// app does: "Carol Jones (driver)"); a share link is "alice (driver link)".
func memberText(m ext.Member) string {
	name := label.Clean(m.Name)
	if m.Person {
		if m.Kind == ext.KindDriver || m.Kind == ext.KindViewer {
			return fmt.Sprintf("%s (%s)", name, m.Kind)
		}
		return name
	}
	switch m.Kind {
	case ext.KindDriver, ext.KindViewer:
		return fmt.Sprintf("%s (%s link)", name, m.Kind)
	case ext.KindCLI:
		return name + " (CLI)"
	}
	if m.Device != "" {
		return fmt.Sprintf("%s (%s)", name, label.Clean(m.Device))
	}
	return name
}
