package ext

// Member is one client connected to a terminal, as everyone sees it: a
// label, never a token or a clientId.
type Member struct {
	ID      string `json:"id"` // the client's presence id: "p" and 12 hex digits
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Device  string `json:"device,omitempty"`
	Control bool   `json:"control,omitempty"` // holds the terminal's claim
	Person  bool   `json:"person,omitempty"`  // a person signed in by SSO: Name is theirs, ID one for all their clients
}

// Member kinds.
const (
	KindOwner  = "owner"
	KindCLI    = "cli"   // the owner's command line
	KindAgent  = "agent" // a coding agent through termhost mcp
	KindDriver = "driver"
	KindViewer = "viewer"
)

// PresenceList is a terminal's presence: the params of NotifyPresence.
// With more than CrowdThreshold viewers on the terminal, Members leaves
// them out (it still names everyone else: the owner's clients, agents,
// drivers, whoever has control) and Viewers counts them.
type PresenceList struct {
	Channel string   `json:"channel"`
	Members []Member `json:"members"`
	Viewers int      `json:"viewers,omitempty"`
}

// CrowdThreshold is how many viewers a terminal's presence names; past it
// presence counts them (PresenceList.Viewers): an audience of a thousand
// would otherwise send each joiner a thousand names, and everyone a list
// of that size four times a second while it joins.
const CrowdThreshold = 50

// PresenceResult is the result of MethodPresence: the presence of every
// terminal the caller may see.
type PresenceResult struct {
	Terminals []PresenceList `json:"terminals"`
}
