package audit

import "time"

// Event kinds.
const (
	SignIn            = "sign-in"
	Connect           = "connect"
	Disconnect        = "disconnect"
	TerminalCreated   = "terminal-created"
	TerminalDisposed  = "terminal-disposed"
	TerminalRenamed   = "terminal-renamed"
	ControlTaken      = "control-taken"
	ControlGranted    = "control-granted"
	ControlRequested  = "control-requested"
	ShareCreated      = "share-created"
	ShareRevoked      = "share-revoked"
	ShareUsed         = "share-used"
	Input             = "input"
	RecordingDownload = "recording-downloaded"
	ServerUpgrade     = "server-upgrade"
	SignInRefused     = "sign-in-refused"
	RoleChanged       = "role-changed"
	// ApprovalRequested: an agent or a driver asked people to approve a
	// command line (Command, Rule); ApprovalAnswered: someone approved or
	// denied it, or it timed out or was withdrawn (Decision, Reason).
	ApprovalRequested = "approval-requested"
	ApprovalAnswered  = "approval-answered"
)

// Kinds are every event kind, for validating --event.
var Kinds = []string{SignIn, SignInRefused, Connect, Disconnect, TerminalCreated, TerminalDisposed, TerminalRenamed,
	ControlTaken, ControlGranted, ControlRequested, ShareCreated, ShareRevoked, ShareUsed, Input,
	RecordingDownload, ServerUpgrade, RoleChanged, ApprovalRequested, ApprovalAnswered}

// Event is one line of the trail. Who is the principal: a person's
// identity (alice@corp.com), "owner" (the owner token or its sessions) or
// "share:<id>" (a share link); Name is how presence shows them. Terminal is
// the terminal's URI and Title its name at the time. Bytes counts input;
// the bytes themselves are never kept.
type Event struct {
	Time     time.Time `json:"time"`
	Event    string    `json:"event"`
	Who      string    `json:"who,omitempty"`
	Name     string    `json:"name,omitempty"`
	Role     string    `json:"role,omitempty"`
	Remote   string    `json:"remote,omitempty"`
	Terminal string    `json:"terminal,omitempty"`
	Title    string    `json:"title,omitempty"`
	Bytes    int       `json:"bytes,omitempty"`
	To       string    `json:"to,omitempty"`    // control granted to, a new title
	Share    string    `json:"share,omitempty"` // a share link's id
	Detail   string    `json:"detail,omitempty"`
	// An approval's: its id, the command line, the policy's rule, and the
	// answer (approved, denied, timed_out, withdrawn) with its reason.
	Approval string `json:"approval,omitempty"`
	Command  string `json:"command,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Count and Until are set on a summary of events over a participant's
	// budget (budget.go): how many it stands for, the time of the last
	// (Time is the first's); Bytes then sums theirs.
	Count int       `json:"count,omitempty"`
	Until time.Time `json:"until,omitzero"`
}
