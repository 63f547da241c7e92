package ahp

import (
	"encoding/json"
	"fmt"
)

// Claim kinds.
const (
	ClaimClient  = "client"
	ClaimSession = "session"
)

// Claim says who owns a terminal: a client, or an agent session (stored and
// echoed as opaque data by a terminal server).
type Claim struct {
	Kind       string
	ClientID   string
	Session    string
	Chat       string
	TurnID     string
	ToolCallID string
}

// ClientClaim is a client claim for id.
func ClientClaim(id string) Claim { return Claim{Kind: ClaimClient, ClientID: id} }

type wireClaim struct {
	Kind       string `json:"kind"`
	ClientID   string `json:"clientId,omitempty"`
	Session    string `json:"session,omitempty"`
	Chat       string `json:"chat,omitempty"`
	TurnID     string `json:"turnId,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

func (c Claim) wire(shape Shape) any {
	w := wireClaim{Kind: c.Kind}
	switch c.Kind {
	case ClaimClient:
		w.ClientID = c.ClientID
	case ClaimSession:
		w.Session, w.TurnID, w.ToolCallID = c.Session, c.TurnID, c.ToolCallID
		if shape == Current {
			w.Chat = c.chat()
		}
	default: // unknown kind: keep whatever we were given
		w.ClientID, w.Session, w.Chat, w.TurnID, w.ToolCallID = c.ClientID, c.Session, c.Chat, c.TurnID, c.ToolCallID
	}
	return w
}

// chat is the chat URI a ≥ 0.9 peer sees. A session claim set by a ≤ 0.8
// client has none (chat is required since 0.9.0): it is presented as the
// session URI itself, a URI that names the session's one implicit pre-0.9
// chat, keeps the claim a session claim and lets a 1.x client narrow it by
// echoing it back (docs/protocol.md, "termhost decisions").
func (c Claim) chat() string {
	if c.Chat == "" {
		return c.Session
	}
	return c.Chat
}

// MarshalJSON encodes the current shape.
func (c Claim) MarshalJSON() ([]byte, error) { return json.Marshal(c.wire(Current)) }

// UnmarshalJSON accepts both shapes (chat optional). Like the encoder, it keeps
// only the fields of a known kind.
func (c *Claim) UnmarshalJSON(b []byte) error {
	var w wireClaim
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Claim(w)
	switch c.Kind {
	case ClaimClient:
		*c = Claim{Kind: c.Kind, ClientID: c.ClientID}
	case ClaimSession:
		c.ClientID = ""
	}
	return nil
}

// Validate checks the fields a claim of its kind requires.
func (c Claim) Validate() error {
	switch c.Kind {
	case ClaimClient:
		if c.ClientID == "" {
			return fmt.Errorf("client claim needs clientId")
		}
	case ClaimSession:
		if c.Session == "" {
			return fmt.Errorf("session claim needs session")
		}
	default:
		return fmt.Errorf("unknown claim kind %q", c.Kind)
	}
	return nil
}

// ValidateFor checks a claim received on a connection of the given shape:
// from 0.9.0 on, a session claim needs chat.
func (c Claim) ValidateFor(shape Shape) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if shape == Current && c.Kind == ClaimSession && c.Chat == "" {
		return fmt.Errorf("session claim needs chat (required since protocol 0.9.0)")
	}
	return nil
}

// CheckShape checks what the params require on a connection of the given
// shape beyond Validate (a session claim's chat from 0.9.0 on).
func (p CreateTerminalParams) CheckShape(shape Shape) error {
	if p.Claim == nil {
		return nil // Validate reports it
	}
	return p.Claim.ValidateFor(shape)
}

// Narrows reports whether next only drops the tool-call binding of the session
// claim c (the one change a non-holder may make, to detach a terminal from a
// tool call). next may omit chat (a ≤ 0.8 client) or repeat the chat a ≥ 0.9
// client was shown.
func (c Claim) Narrows(next Claim) bool {
	return c.Kind == ClaimSession && next.Kind == ClaimSession &&
		next.Session == c.Session && (next.Chat == "" || next.Chat == c.chat()) &&
		next.TurnID == "" && next.ToolCallID == ""
}
