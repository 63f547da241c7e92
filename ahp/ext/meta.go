package ext

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

// RunBy is the value of MetaRunBy: {"kind": "agent", "name": "Agent · Claude Code"}.
type RunBy struct {
	Kind string `json:"kind"` // RunByAgent
	Name string `json:"name"`
}

// RunByAgent is the kind of RunBy.
const RunByAgent = "agent"
