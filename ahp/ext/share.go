package ext

// ShareCreateParams are the params of MethodShareCreate. No TTLSeconds
// means no expiry; no Role means RoleViewer.
type ShareCreateParams struct {
	Channel    string `json:"channel"` // the root channel
	Terminal   string `json:"terminal"`
	Role       string `json:"role"`
	TTLSeconds int64  `json:"ttlSeconds,omitempty"`
	Label      string `json:"label,omitempty"` // who the link is for: its name in presence
}

// ShareListParams are the params of MethodShareList; no Terminal lists
// every terminal's links.
type ShareListParams struct {
	Channel  string `json:"channel"` // the root channel
	Terminal string `json:"terminal,omitempty"`
}

// ShareRevokeParams are the params of MethodShareRevoke.
type ShareRevokeParams struct {
	Channel string `json:"channel"` // the root channel
	ID      string `json:"id"`
}

// Roles of a share link.
const (
	RoleViewer = "viewer"
	RoleDriver = "driver"
)

// ShareInfo is a share link: the result of MethodShareCreate (with URL)
// and an entry of ShareListResult (without). Times are Unix milliseconds.
type ShareInfo struct {
	ID        string `json:"id"`
	Terminal  string `json:"terminal"`
	Role      string `json:"role"`
	Label     string `json:"label,omitempty"`
	CreatedAt int64  `json:"createdAt"`
	ExpiresAt *int64 `json:"expiresAt,omitempty"`
	URL       string `json:"url,omitempty"` // only in the create result: it holds the secret
}

// ShareListResult is the result of MethodShareList.
type ShareListResult struct {
	Shares []ShareInfo `json:"shares"`
}
