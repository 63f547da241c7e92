package ext

// RequestControlParams are the params of MethodRequestControl. Ask false
// takes only a claim nobody holds (answered ControlHeld otherwise); absent
// or true asks the holder. Members in the order the command line has
// always sent them.
type RequestControlParams struct {
	Ask      *bool  `json:"ask,omitempty"`
	Channel  string `json:"channel"` // the root channel
	Terminal string `json:"terminal"`
}

// AnswerControlParams are the params of MethodAnswerControl. Members in
// the order the command line has always sent them.
type AnswerControlParams struct {
	Channel   string `json:"channel"` // the root channel
	Grant     bool   `json:"grant"`
	RequestID string `json:"requestId"`
	Terminal  string `json:"terminal"`
}

// ControlResult is the result of MethodRequestControl.
type ControlResult struct {
	Status      string `json:"status"` // ControlGranted, ControlPending or ControlHeld
	RequestID   string `json:"requestId,omitempty"`
	AutoGrantMs int64  `json:"autoGrantMs,omitempty"`
}

// ControlNotice is the params of NotifyControlRequest.
type ControlNotice struct {
	Terminal    string `json:"terminal"`
	RequestID   string `json:"requestId"`
	Status      string `json:"status"` // ControlPending, ControlGranted, ControlDeclined or ControlCancelled
	From        Member `json:"from"`
	AutoGrantMs int64  `json:"autoGrantMs,omitempty"` // pending: granted after this long without input from the holder
	Auto        bool   `json:"auto,omitempty"`        // granted because the holder was away or gone
}

// Statuses of a control request.
const (
	ControlPending   = "pending"
	ControlGranted   = "granted"
	ControlDeclined  = "declined"
	ControlCancelled = "cancelled" // the requester left, or the claim moved elsewhere
	ControlHeld      = "held"      // requestControl with ask false: someone holds it, nobody was asked
)
