package ext

import "encoding/json"

// Values of MetaSizePolicy: who sizes a terminal several clients show.
const (
	// SizeHolder: the claim holder sizes the pty; everyone else mirrors it.
	SizeHolder = "holder"
	// SizeSmallest: every connected client that may type reports the size
	// of its view, and the pty gets the smallest (like tmux).
	SizeSmallest = "smallest"
)

// AgentInfo is the value of MetaAgent. The owner hands the terminal back
// by dispatching terminal/claimed with {kind: "session", session, chat}.
type AgentInfo struct {
	Session string `json:"session"`
	Chat    string `json:"chat,omitempty"`
	Name    string `json:"name"`
}

// RunBy is the value of MetaRunBy: {"kind": "agent", "name": "Agent · Claude Code"},
// or {"kind": "person", "name": "Alice Smith"} for a person signed in by SSO.
type RunBy struct {
	Kind string `json:"kind"` // RunByAgent or RunByPerson
	Name string `json:"name"`
}

// Kinds of RunBy.
const (
	RunByAgent  = "agent"
	RunByPerson = "person" // who had control when the command ran (--auth proxy)
)

// CommandMeta is the value of MetaCommandMeta: by commandId, the _meta of
// each command's terminal/commandExecuted, for the command parts of the
// snapshot's state that had one ({"c3": {"termhost/runBy": {…}}}).
type CommandMeta map[string]map[string]json.RawMessage
