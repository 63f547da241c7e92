package ext

// Approvals (docs/protocol.md, "Approvals"): a requester (termhost mcp, or
// the server for a driver's Enter) asks people to approve a command line
// before anything of it reaches the shell.

// Approval requests and notification.
const (
	// MethodApprovalRequest asks for an approval and is answered when a
	// person answers or at the timeout: ApprovalRequestParams →
	// ApprovalResult. Owner connections only.
	MethodApprovalRequest = "x-termhost/approval/request"
	// MethodApprovalAnswer approves or denies a pending approval:
	// ApprovalAnswerParams → ApprovalAnswerResult. The owner, or the
	// terminal's claim holder; a second answer is -32010.
	MethodApprovalAnswer = "x-termhost/approval/answer"
	// MethodApprovalList lists the approvals the caller may see (params
	// ignored) → ApprovalList.
	MethodApprovalList = "x-termhost/approval/list"
	// NotifyApprovals is the whole list of approvals the connection may
	// see, on every change (coalesced): ApprovalList. Never to viewers.
	NotifyApprovals = "x-termhost/approvals"
	// MetaSecretPrompt is the catalogue entry's key (true) of a terminal
	// whose program waits for input it does not echo (a password): agents'
	// input is refused while it is up.
	MetaSecretPrompt = "termhost/secretPrompt"
)

// ApprovalRequestParams are the params of MethodApprovalRequest.
type ApprovalRequestParams struct {
	Terminal    string `json:"terminal"`
	CommandLine string `json:"commandLine"`
	Rule        string `json:"rule"`
	Reason      string `json:"reason"`
	RequestedBy string `json:"requestedBy,omitempty"` // the requester's name; default its presence name
	TimeoutMs   int64  `json:"timeoutMs,omitempty"`   // default ApprovalDefaultTimeoutMs
}

// ApprovalResult is the result of MethodApprovalRequest: how it ended.
type ApprovalResult struct {
	ID          string `json:"id"`
	State       string `json:"state"` // ApprovalApproved, ApprovalDenied or ApprovalTimedOut
	AnsweredBy  *Who   `json:"answeredBy,omitempty"`
	DenyReason  string `json:"denyReason,omitempty"`
	AlwaysAllow bool   `json:"alwaysAllow,omitempty"`
}

// ApprovalAnswerParams are the params of MethodApprovalAnswer.
type ApprovalAnswerParams struct {
	ID          string `json:"id"`
	Decision    string `json:"decision"` // DecisionApprove or DecisionDeny
	Reason      string `json:"reason,omitempty"`
	AlwaysAllow bool   `json:"alwaysAllow,omitempty"`
}

// ApprovalAnswerResult is the result of MethodApprovalAnswer.
type ApprovalAnswerResult struct {
	Approval Approval `json:"approval"`
}

// ApprovalList is the params of NotifyApprovals and the result of
// MethodApprovalList.
type ApprovalList struct {
	Approvals []Approval `json:"approvals"`
}

// Approval is one approval, pending or lately answered.
type Approval struct {
	ID            string    `json:"id"`
	Terminal      string    `json:"terminal"`
	TerminalTitle string    `json:"terminalTitle,omitempty"`
	CommandLine   string    `json:"commandLine"`
	RequestedBy   Requester `json:"requestedBy"`
	Rule          string    `json:"rule"`
	Reason        string    `json:"reason"`
	CreatedAt     int64     `json:"createdAt"` // ms since the Unix epoch
	ExpiresAt     int64     `json:"expiresAt"`
	State         string    `json:"state"`
	AnsweredBy    *Who      `json:"answeredBy,omitempty"`
	AnsweredAt    int64     `json:"answeredAt,omitempty"`
	DenyReason    string    `json:"denyReason,omitempty"`
	AlwaysAllow   bool      `json:"alwaysAllow,omitempty"`
}

// Requester is who asks for an approval.
type Requester struct {
	Kind string `json:"kind"` // RequesterAgent, RequesterDriver or RequesterOwner
	Name string `json:"name"`
}

// Who names a person (or client) who answered.
type Who struct {
	Name string `json:"name"`
}

// States of an approval.
const (
	ApprovalPending   = "pending"
	ApprovalApproved  = "approved"
	ApprovalDenied    = "denied"
	ApprovalTimedOut  = "timed_out"
	ApprovalWithdrawn = "withdrawn" // the requester's connection closed
)

// Decisions of MethodApprovalAnswer.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
)

// Kinds of Requester.
const (
	RequesterAgent  = "agent"
	RequesterDriver = "driver"
	RequesterOwner  = "owner"
)

// Bounds of approvals.
const (
	ApprovalDefaultTimeoutMs = 5 * 60 * 1000
	ApprovalMaxTimeoutMs     = 60 * 60 * 1000
	ApprovalMaxCommandLine   = 4096
	ApprovalMaxRule          = 256 // also the reasons
	ApprovalMaxRequester     = 64
)
