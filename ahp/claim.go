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
			w.Chat = c.Chat
		}
	default: // unknown kind: keep whatever we were given
		w.ClientID, w.Session, w.Chat, w.TurnID, w.ToolCallID = c.ClientID, c.Session, c.Chat, c.TurnID, c.ToolCallID
	}
	return w
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
	*c = Claim{Kind: w.Kind, ClientID: w.ClientID, Session: w.Session, Chat: w.Chat, TurnID: w.TurnID, ToolCallID: w.ToolCallID}
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

// Narrows reports whether next only drops the tool-call binding of the session
// claim c (the one change a non-holder may make, to detach a terminal from a
// tool call).
func (c Claim) Narrows(next Claim) bool {
	return c.Kind == ClaimSession && next.Kind == ClaimSession &&
		next.Session == c.Session && (next.Chat == "" || next.Chat == c.Chat) &&
		next.TurnID == "" && next.ToolCallID == ""
}
