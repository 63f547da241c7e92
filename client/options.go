package client

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"os/user"
	"time"

	"github.com/termhost/termhost/ahp"
)

// DefaultVersions are the protocol versions offered, most preferred first.
var DefaultVersions = []string{"1.0.0", "0.9.0"}

// Options configure Dial. Zero values get the defaults.
type Options struct {
	// Token is sent as "Authorization: Bearer <token>" when set.
	Token string
	// ClientID is the AHP clientId (default: random "termhost-cli-…").
	ClientID string
	// ClientInfo is sent in initialize (default name "termhost-cli").
	ClientInfo ahp.Implementation
	// Versions are offered in initialize (default DefaultVersions).
	Versions []string
	// InitialSubscriptions are subscribed in the initialize round trip.
	InitialSubscriptions []string
	// HTTPClient makes the upgrade request (default http.DefaultClient).
	HTTPClient *http.Client
	// ReconnectWindow is how long to keep trying to get a lost connection
	// back (default 30 s; negative: do not reconnect).
	ReconnectWindow time.Duration
	// QueueBytes bounds the events waiting for Next; past it the reader stops
	// reading the socket until the caller catches up, so the server paces the
	// terminal (default 8 MiB).
	QueueBytes int
	// MirrorBytes bounds the content kept in each terminal mirror (default
	// 1 MiB, trimmed from the head; negative: keep no content).
	MirrorBytes int
	// ReadLimit is the largest frame accepted (default 64 MiB).
	ReadLimit int64
	// PingInterval is how often the client pings the server over a quiet or
	// busy link (WebSocket ping; default 5 s; negative: never). With
	// PingTimeout it bounds how long a silently dead path (a frozen proxy, a
	// dropped Wi-Fi) goes unnoticed: at most PingInterval + PingTimeout.
	PingInterval time.Duration
	// PingTimeout is how long a ping may go unanswered, with nothing else
	// received meanwhile, before the connection counts as dead: the client
	// drops it, reports EventDisconnected and reconnects (default 5 s).
	PingTimeout time.Duration
}

func (o *Options) setDefaults() {
	if o.ClientID == "" {
		o.ClientID = "termhost-cli-" + RandomID(6)
	}
	if o.ClientInfo.Name == "" {
		o.ClientInfo.Name = "termhost-cli"
		if o.ClientInfo.Title == "" {
			o.ClientInfo.Title = userAtHost() // how others see this client in presence
		}
	}
	if len(o.Versions) == 0 {
		o.Versions = DefaultVersions
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.ReconnectWindow == 0 {
		o.ReconnectWindow = 30 * time.Second
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 8 << 20
	}
	if o.MirrorBytes == 0 {
		o.MirrorBytes = 1 << 20
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 64 << 20
	}
	if o.PingInterval == 0 {
		o.PingInterval = 5 * time.Second
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = 5 * time.Second
	}
}

// userAtHost is "user@host" of this process, or "" when unknown.
func userAtHost() string {
	u, err := user.Current()
	host, herr := os.Hostname()
	if err != nil || herr != nil || u.Username == "" || host == "" {
		return ""
	}
	return u.Username + "@" + host
}

// RandomID returns n random bytes in hex.
func RandomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
