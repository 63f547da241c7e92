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
type PresenceList struct {
	Channel string   `json:"channel"`
	Members []Member `json:"members"`
}

// PresenceResult is the result of MethodPresence: the presence of every
// terminal the caller may see.
type PresenceResult struct {
	Terminals []PresenceList `json:"terminals"`
}
