package ahp

import (
	"encoding/json"
)

// Lifecycle statuses.
const (
	StatusRunning = "running"
	StatusExited  = "exited"
)

// Lifecycle is a terminal's process state. ExitCode is nil for a running
// terminal and for one that exited without a code (killed by a signal).
type Lifecycle struct {
	Status   string `json:"status"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// Running is the lifecycle of a live terminal.
func Running() Lifecycle { return Lifecycle{Status: StatusRunning} }

// Exited reports whether the process has exited.
func (l Lifecycle) Exited() bool { return l.Status == StatusExited }

// TerminalState is the state of an ahp-terminal: channel.
type TerminalState struct {
	Title                    string
	Cwd                      string
	Cols, Rows               int
	Content                  []Part
	Lifecycle                Lifecycle
	Claim                    Claim
	SupportsCommandDetection *bool
	IsPty                    *bool
}

type wireTerminalState struct {
	Title                    string     `json:"title"`
	Cwd                      string     `json:"cwd,omitempty"`
	Cols                     int        `json:"cols,omitempty"`
	Rows                     int        `json:"rows,omitempty"`
	Content                  []Part     `json:"content"`
	Lifecycle                *Lifecycle `json:"lifecycle,omitempty"`
	ExitCode                 *int       `json:"exitCode,omitempty"`
	Claim                    any        `json:"claim"`
	SupportsCommandDetection *bool      `json:"supportsCommandDetection,omitempty"`
	IsPty                    *bool      `json:"isPty,omitempty"`
}

func (s TerminalState) wire(shape Shape) any {
	w := wireTerminalState{Title: s.Title, Cwd: s.Cwd, Cols: s.Cols, Rows: s.Rows, Content: s.Content,
		Claim: s.Claim.wire(shape), SupportsCommandDetection: s.SupportsCommandDetection, IsPty: s.IsPty}
	if w.Content == nil {
		w.Content = []Part{}
	}
	if shape == Legacy {
		w.ExitCode = s.Lifecycle.ExitCode
	} else {
		lc := s.Lifecycle
		if lc.Status == "" {
			lc.Status = StatusRunning
		}
		w.Lifecycle = &lc
	}
	return w
}

// MarshalJSON encodes the current shape.
func (s TerminalState) MarshalJSON() ([]byte, error) { return json.Marshal(s.wire(Current)) }

// UnmarshalJSON accepts both shapes: a lifecycle object, or a legacy exitCode
// (present = exited).
func (s *TerminalState) UnmarshalJSON(b []byte) error {
	var w struct {
		wireTerminalState
		Claim Claim `json:"claim"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = TerminalState{Title: w.Title, Cwd: w.Cwd, Cols: w.Cols, Rows: w.Rows, Content: w.Content, Claim: w.Claim,
		SupportsCommandDetection: w.SupportsCommandDetection, IsPty: w.IsPty}
	s.Lifecycle = lifecycleFrom(w.Lifecycle, w.ExitCode)
	return nil
}

func lifecycleFrom(lc *Lifecycle, exitCode *int) Lifecycle {
	switch {
	case lc != nil && lc.Status == "": // read as the encoder writes it
		return Lifecycle{Status: StatusRunning, ExitCode: lc.ExitCode}
	case lc != nil:
		return *lc
	case exitCode != nil:
		return Lifecycle{Status: StatusExited, ExitCode: exitCode}
	default:
		return Running()
	}
}

// TerminalInfo is a terminal's entry in the root catalogue.
type TerminalInfo struct {
	Resource  string
	Title     string
	Claim     Claim
	Lifecycle Lifecycle
	Meta      json.RawMessage // _meta: server extensions, e.g. {"termhost/recording": "recording"}
}

type wireTerminalInfo struct {
	Resource  string          `json:"resource"`
	Title     string          `json:"title"`
	Claim     any             `json:"claim"`
	Lifecycle *Lifecycle      `json:"lifecycle,omitempty"`
	ExitCode  *int            `json:"exitCode,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

func (t TerminalInfo) wire(shape Shape) any {
	w := wireTerminalInfo{Resource: t.Resource, Title: t.Title, Claim: t.Claim.wire(shape), Meta: t.Meta}
	if shape == Legacy {
		// ≤ 0.8: exitCode present means exited; an exit without a code cannot be told.
		w.ExitCode = t.Lifecycle.ExitCode
	} else {
		lc := t.Lifecycle
		if lc.Status == "" {
			lc.Status = StatusRunning
		}
		w.Lifecycle = &lc
	}
	return w
}

// MarshalJSON encodes the current shape.
func (t TerminalInfo) MarshalJSON() ([]byte, error) { return json.Marshal(t.wire(Current)) }

// UnmarshalJSON accepts both shapes.
func (t *TerminalInfo) UnmarshalJSON(b []byte) error {
	var w struct {
		wireTerminalInfo
		Claim Claim `json:"claim"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = TerminalInfo{Resource: w.Resource, Title: w.Title, Claim: w.Claim, Lifecycle: lifecycleFrom(w.Lifecycle, w.ExitCode), Meta: w.Meta}
	return nil
}

func wireInfos(list []TerminalInfo, shape Shape) []any {
	out := make([]any, len(list))
	for i, t := range list {
		out[i] = t.wire(shape)
	}
	return out
}

// RootConfig is the host configuration exposed on the root channel.
type RootConfig struct {
	Schema json.RawMessage            `json:"schema"`
	Values map[string]json.RawMessage `json:"values"`
}

// RootState is the state of ahp-root://. A terminal server has no agents.
type RootState struct {
	Agents         []json.RawMessage
	ActiveSessions *int
	Terminals      []TerminalInfo
	Config         *RootConfig
	Meta           json.RawMessage
}

type wireRootState struct {
	Agents         []json.RawMessage `json:"agents"`
	ActiveSessions *int              `json:"activeSessions,omitempty"`
	Terminals      []any             `json:"terminals"`
	Config         *RootConfig       `json:"config,omitempty"`
	Meta           json.RawMessage   `json:"_meta,omitempty"`
}

func (s RootState) wire(shape Shape) any {
	w := wireRootState{Agents: s.Agents, ActiveSessions: s.ActiveSessions, Terminals: wireInfos(s.Terminals, shape), Config: s.Config, Meta: s.Meta}
	if w.Agents == nil {
		w.Agents = []json.RawMessage{}
	}
	return w
}

// MarshalJSON encodes the current shape.
func (s RootState) MarshalJSON() ([]byte, error) { return json.Marshal(s.wire(Current)) }

// UnmarshalJSON decodes either shape.
func (s *RootState) UnmarshalJSON(b []byte) error {
	var w struct {
		Agents         []json.RawMessage `json:"agents"`
		ActiveSessions *int              `json:"activeSessions"`
		Terminals      []TerminalInfo    `json:"terminals"`
		Config         *RootConfig       `json:"config"`
		Meta           json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = RootState{Agents: w.Agents, ActiveSessions: w.ActiveSessions, Terminals: w.Terminals, Config: w.Config, Meta: w.Meta}
	return nil
}

// Snapshot is a channel's state at FromSeq.
type Snapshot struct {
	Resource string
	State    any // RootState or TerminalState
	FromSeq  int64
	// Meta is the snapshot's _meta: server extensions about the state that
	// are not part of it, so that the state stays what AHP's reducers make
	// of the previous one and the actions since (termhost's
	// {"termhost/commandMeta": …}, the _meta of the commands' actions).
	Meta json.RawMessage
}

type wireSnapshot struct {
	Resource string          `json:"resource"`
	State    any             `json:"state"`
	FromSeq  int64           `json:"fromSeq"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

func (s Snapshot) wire(shape Shape) any {
	st := s.State
	if sh, ok := st.(shaped); ok {
		st = sh.wire(shape)
	}
	return wireSnapshot{s.Resource, st, s.FromSeq, s.Meta}
}

// MarshalJSON encodes the current shape.
func (s Snapshot) MarshalJSON() ([]byte, error) { return json.Marshal(s.wire(Current)) }

// UnmarshalJSON decodes the state by the resource's scheme.
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	var w struct {
		Resource string          `json:"resource"`
		State    json.RawMessage `json:"state"`
		FromSeq  int64           `json:"fromSeq"`
		Meta     json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Snapshot{Resource: w.Resource, FromSeq: w.FromSeq}
	if len(w.Meta) > 0 && string(w.Meta) != "null" {
		s.Meta = w.Meta
	}
	switch {
	case w.Resource == RootURI:
		var st RootState
		if err := json.Unmarshal(w.State, &st); err != nil {
			return err
		}
		s.State = st
	case CheckTerminalURI(w.Resource) == nil:
		var st TerminalState
		if err := json.Unmarshal(w.State, &st); err != nil {
			return err
		}
		s.State = st
	default:
		s.State = w.State
	}
	return nil
}

func wireSnapshots(list []Snapshot, shape Shape) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s.wire(shape)
	}
	return out
}
