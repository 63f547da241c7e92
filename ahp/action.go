package ahp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Action types of the root and terminal channels.
const (
	RootAgentsChanged         = "root/agentsChanged"
	RootActiveSessionsChanged = "root/activeSessionsChanged"
	RootTerminalsChanged      = "root/terminalsChanged"
	RootConfigChanged         = "root/configChanged"

	TerminalData                      = "terminal/data"
	TerminalInput                     = "terminal/input"
	TerminalResized                   = "terminal/resized"
	TerminalClaimed                   = "terminal/claimed"
	TerminalTitleChanged              = "terminal/titleChanged"
	TerminalCwdChanged                = "terminal/cwdChanged"
	TerminalExited                    = "terminal/exited"
	TerminalCleared                   = "terminal/cleared"
	TerminalCommandDetectionAvailable = "terminal/commandDetectionAvailable"
	TerminalCommandExecuted           = "terminal/commandExecuted"
	TerminalCommandFinished           = "terminal/commandFinished"
)

// ClientDispatchable reports whether clients may dispatch the action type:
// AHP lets clients dispatch only these; every other action is the server's.
func ClientDispatchable(actionType string) bool {
	switch actionType {
	case TerminalInput, TerminalResized, TerminalClaimed, TerminalTitleChanged, TerminalCleared, RootConfigChanged:
		return true
	}
	return false
}

// Action is a state action. Only the fields of its Type are meaningful. An
// action of a type this package does not know keeps its original JSON in Raw and
// re-encodes verbatim.
type Action struct {
	Type string

	Data        string // terminal/data, terminal/input
	Cols, Rows  int    // terminal/resized
	Claim       Claim  // terminal/claimed
	Title       string // terminal/titleChanged
	Cwd         string // terminal/cwdChanged
	ExitCode    *int   // terminal/exited, terminal/commandFinished
	CommandID   string // terminal/commandExecuted, terminal/commandFinished
	CommandLine string // terminal/commandExecuted
	Timestamp   int64  // terminal/commandExecuted
	DurationMs  *int64 // terminal/commandFinished

	// Meta is terminal/commandExecuted's _meta (server extensions, e.g.
	// termhost's {"termhost/runBy": …}). The reducer leaves it out of the
	// state, as AHP's reducers do (a command part has no _meta): a server
	// that keeps it for joiners sends it beside the state, in the
	// snapshot's Meta.
	Meta json.RawMessage

	Terminals      []TerminalInfo             // root/terminalsChanged
	Agents         []json.RawMessage          // root/agentsChanged
	ActiveSessions int                        // root/activeSessionsChanged
	Config         map[string]json.RawMessage // root/configChanged
	Replace        *bool                      // root/configChanged

	Raw json.RawMessage // unknown types only
}

// Known reports whether the action type is one this package reduces.
func (a Action) Known() bool { return a.Raw == nil }

// wireAction has every payload key; omitempty is right for all of them except
// where noted in wire().
type wireAction struct {
	Type           string                     `json:"type"`
	Data           *string                    `json:"data,omitempty"`
	Cols           *int                       `json:"cols,omitempty"`
	Rows           *int                       `json:"rows,omitempty"`
	Claim          any                        `json:"claim,omitempty"`
	Title          *string                    `json:"title,omitempty"`
	Cwd            *string                    `json:"cwd,omitempty"`
	ExitCode       *int                       `json:"exitCode,omitempty"`
	CommandID      *string                    `json:"commandId,omitempty"`
	CommandLine    *string                    `json:"commandLine,omitempty"`
	Timestamp      *int64                     `json:"timestamp,omitempty"`
	DurationMs     *int64                     `json:"durationMs,omitempty"`
	Terminals      []any                      `json:"terminals,omitempty"`
	Agents         *[]json.RawMessage         `json:"agents,omitempty"`
	ActiveSessions *int                       `json:"activeSessions,omitempty"`
	Config         map[string]json.RawMessage `json:"config,omitempty"`
	Replace        *bool                      `json:"replace,omitempty"`
	Meta           json.RawMessage            `json:"_meta,omitempty"`
}

func (a Action) wire(shape Shape) any {
	if a.Raw != nil {
		return a.Raw
	}
	w := wireAction{Type: a.Type}
	switch a.Type {
	case TerminalData, TerminalInput:
		w.Data = &a.Data
	case TerminalResized:
		w.Cols, w.Rows = &a.Cols, &a.Rows
	case TerminalClaimed:
		w.Claim = a.Claim.wire(shape)
	case TerminalTitleChanged:
		w.Title = &a.Title
	case TerminalCwdChanged:
		w.Cwd = &a.Cwd
	case TerminalExited:
		w.ExitCode = a.ExitCode
	case TerminalCommandExecuted:
		w.CommandID, w.CommandLine, w.Timestamp, w.Meta = &a.CommandID, &a.CommandLine, &a.Timestamp, a.Meta
	case TerminalCommandFinished:
		w.CommandID, w.ExitCode, w.DurationMs = &a.CommandID, a.ExitCode, a.DurationMs
	case RootTerminalsChanged:
		w.Terminals = wireInfos(a.Terminals, shape)
		if len(w.Terminals) == 0 {
			// Required array: emit [] explicitly (omitempty would drop it).
			return struct {
				Type      string `json:"type"`
				Terminals []any  `json:"terminals"`
			}{a.Type, []any{}}
		}
	case RootAgentsChanged:
		agents := a.Agents
		if agents == nil {
			agents = []json.RawMessage{}
		}
		return struct {
			Type   string            `json:"type"`
			Agents []json.RawMessage `json:"agents"`
		}{a.Type, agents}
	case RootActiveSessionsChanged:
		w.ActiveSessions = &a.ActiveSessions
	case RootConfigChanged:
		cfg := a.Config
		if cfg == nil {
			cfg = map[string]json.RawMessage{}
		}
		return struct {
			Type    string                     `json:"type"`
			Config  map[string]json.RawMessage `json:"config"`
			Replace *bool                      `json:"replace,omitempty"`
		}{a.Type, cfg, a.Replace}
	}
	return w
}

// MarshalJSON encodes the current shape.
func (a Action) MarshalJSON() ([]byte, error) { return Marshal(a, Current) }

// ErrInvalidAction is wrapped by UnmarshalJSON when a known action type lacks a
// required field or has one of the wrong type.
var ErrInvalidAction = errors.New("invalid action")

// UnmarshalJSON decodes a known action strictly (required fields present, right
// types) and keeps an unknown one verbatim in Raw.
func (a *Action) UnmarshalJSON(b []byte) error {
	var w struct {
		Type           *string                    `json:"type"`
		Data           *string                    `json:"data"`
		Cols           *int                       `json:"cols"`
		Rows           *int                       `json:"rows"`
		Claim          *Claim                     `json:"claim"`
		Title          *string                    `json:"title"`
		Cwd            *string                    `json:"cwd"`
		ExitCode       *int                       `json:"exitCode"`
		CommandID      *string                    `json:"commandId"`
		CommandLine    *string                    `json:"commandLine"`
		Timestamp      *int64                     `json:"timestamp"`
		DurationMs     *int64                     `json:"durationMs"`
		Terminals      *[]TerminalInfo            `json:"terminals"`
		Agents         *[]json.RawMessage         `json:"agents"`
		ActiveSessions *int                       `json:"activeSessions"`
		Config         map[string]json.RawMessage `json:"config"`
		Replace        *bool                      `json:"replace"`
		Meta           json.RawMessage            `json:"_meta"`
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Type == nil {
		return fmt.Errorf("%w: an action is an object with a string type", ErrInvalidAction)
	}
	if !knownType(*head.Type) {
		*a = Action{Type: *head.Type, Raw: append(json.RawMessage(nil), b...)}
		return nil
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidAction, *head.Type, err)
	}
	*a = Action{Type: *head.Type}
	missing := func(field string) error {
		return fmt.Errorf("%w: %s needs %s", ErrInvalidAction, a.Type, field)
	}
	switch a.Type {
	case TerminalData, TerminalInput:
		if w.Data == nil {
			return missing("data")
		}
		a.Data = *w.Data
	case TerminalResized:
		if w.Cols == nil || w.Rows == nil {
			return missing("cols and rows")
		}
		a.Cols, a.Rows = *w.Cols, *w.Rows
	case TerminalClaimed:
		if w.Claim == nil {
			return missing("claim")
		}
		if err := w.Claim.Validate(); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidAction, err)
		}
		a.Claim = *w.Claim
	case TerminalTitleChanged:
		if w.Title == nil {
			return missing("title")
		}
		a.Title = *w.Title
	case TerminalCwdChanged:
		if w.Cwd == nil {
			return missing("cwd")
		}
		a.Cwd = *w.Cwd
	case TerminalExited:
		a.ExitCode = w.ExitCode
	case TerminalCommandExecuted:
		if w.CommandID == nil || w.CommandLine == nil || w.Timestamp == nil {
			return missing("commandId, commandLine and timestamp")
		}
		a.CommandID, a.CommandLine, a.Timestamp = *w.CommandID, *w.CommandLine, *w.Timestamp
		if err := checkMeta("_meta", w.Meta); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidAction, err)
		}
		if len(w.Meta) > 0 && string(w.Meta) != "null" {
			a.Meta = w.Meta
		}
	case TerminalCommandFinished:
		if w.CommandID == nil {
			return missing("commandId")
		}
		a.CommandID, a.ExitCode, a.DurationMs = *w.CommandID, w.ExitCode, w.DurationMs
	case RootTerminalsChanged:
		if w.Terminals == nil {
			return missing("terminals")
		}
		a.Terminals = *w.Terminals
	case RootAgentsChanged:
		if w.Agents == nil {
			return missing("agents")
		}
		a.Agents = *w.Agents
	case RootActiveSessionsChanged:
		if w.ActiveSessions == nil {
			return missing("activeSessions")
		}
		a.ActiveSessions = *w.ActiveSessions
	case RootConfigChanged:
		if w.Config == nil {
			return missing("config")
		}
		a.Config, a.Replace = w.Config, w.Replace
	}
	return nil
}

func knownType(t string) bool {
	switch t {
	case RootAgentsChanged, RootActiveSessionsChanged, RootTerminalsChanged, RootConfigChanged,
		TerminalData, TerminalInput, TerminalResized, TerminalClaimed, TerminalTitleChanged,
		TerminalCwdChanged, TerminalExited, TerminalCleared, TerminalCommandDetectionAvailable,
		TerminalCommandExecuted, TerminalCommandFinished:
		return true
	}
	return false
}

// Origin identifies the client that dispatched an action.
type Origin struct {
	ClientID  string `json:"clientId"`
	ClientSeq int64  `json:"clientSeq"`
}

// Envelope is the params of an `action` notification.
type Envelope struct {
	Channel         string
	Action          Action
	ServerSeq       int64
	Origin          *Origin
	RejectionReason string
}

type wireEnvelope struct {
	Channel         string  `json:"channel"`
	Action          any     `json:"action"`
	ServerSeq       int64   `json:"serverSeq"`
	Origin          *Origin `json:"origin,omitempty"`
	RejectionReason string  `json:"rejectionReason,omitempty"`
}

func (e Envelope) wire(shape Shape) any {
	return wireEnvelope{e.Channel, e.sentAction().wire(shape), e.ServerSeq, e.Origin, e.RejectionReason}
}

// sentAction is the action the envelope carries on the wire. A rejection
// echoes the dispatched action (AHP: "the same action") when it is a known
// action: client-dispatchable ones are decoded strictly, so they re-encode
// valid in any shape, and the server checks a server-only one against the
// receiver's schema before (it passes an unknown action instead when that
// fails). Anything else (an unknown type, a malformed action) cannot sit in
// ActionEnvelope.action, which the schema types as a StateAction; the
// rejection then carries a no-op of the channel instead (docs/protocol.md,
// "Rejections"): the client matches it to its pending action by origin, and
// a reducer that ignores rejectionReason changes nothing.
func (e Envelope) sentAction() Action {
	if e.RejectionReason == "" || e.Action.Known() {
		return e.Action
	}
	if e.Channel == RootURI {
		return Action{Type: RootConfigChanged, Config: map[string]json.RawMessage{}}
	}
	return Action{Type: TerminalInput}
}

// MarshalJSON encodes the current shape.
func (e Envelope) MarshalJSON() ([]byte, error) { return Marshal(e, Current) }

// UnmarshalJSON decodes an envelope.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	var w struct {
		Channel         string  `json:"channel"`
		Action          Action  `json:"action"`
		ServerSeq       int64   `json:"serverSeq"`
		Origin          *Origin `json:"origin"`
		RejectionReason string  `json:"rejectionReason"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Envelope{w.Channel, w.Action, w.ServerSeq, w.Origin, w.RejectionReason}
	return nil
}

// EncodeEnvelope encodes a complete `action` notification frame.
func EncodeEnvelope(e Envelope, shape Shape) ([]byte, error) {
	return AppendEnvelope(make([]byte, 0, len(e.Action.Data)+len(e.Action.Data)/4+160), e, shape)
}

// AppendEnvelope appends the `action` notification frame of e to dst. The
// data actions (terminal/data and terminal/input), which are almost all of
// a busy server's traffic, are written directly, byte for byte what
// encoding/json writes for them; every other action goes through Marshal.
func AppendEnvelope(dst []byte, e Envelope, shape Shape) ([]byte, error) {
	e.Action = e.sentAction()
	a := &e.Action
	if a.Raw != nil || (a.Type != TerminalData && a.Type != TerminalInput) {
		raw, err := Marshal(e, shape)
		if err != nil {
			return nil, err
		}
		return appendNotification(dst, MethodAction, raw), nil
	}
	dst = append(dst, `{"jsonrpc":"2.0","method":"action","params":{"channel":`...)
	dst = AppendString(dst, e.Channel)
	dst = append(dst, `,"action":{"type":`...)
	dst = AppendString(dst, a.Type)
	dst = append(dst, `,"data":`...)
	dst = AppendString(dst, a.Data)
	dst = append(dst, `},"serverSeq":`...)
	dst = appendInt(dst, e.ServerSeq)
	if e.Origin != nil {
		dst = append(dst, `,"origin":{"clientId":`...)
		dst = AppendString(dst, e.Origin.ClientID)
		dst = append(dst, `,"clientSeq":`...)
		dst = appendInt(dst, e.Origin.ClientSeq)
		dst = append(dst, '}')
	}
	if e.RejectionReason != "" {
		dst = append(dst, `,"rejectionReason":`...)
		dst = AppendString(dst, e.RejectionReason)
	}
	return append(dst, `}}`...), nil
}
