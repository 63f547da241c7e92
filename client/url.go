package client

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// DefaultServer is the address a termhost server listens on by default.
const DefaultServer = "http://127.0.0.1:7681"

// ErrBadServer is wrapped by ParseServer for every unusable server URL.
var ErrBadServer = errors.New("invalid server URL")

// ParseServer validates a server address and returns it as an http or https
// base URL without a trailing slash, keeping any base path
// ("http://host/term"). It accepts http, https, ws and wss URLs and a bare
// host:port (taken as http).
func ParseServer(s string) (*url.URL, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadServer)
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadServer, s, unwrapURLError(err))
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		u.Scheme = "http"
	case "https", "wss":
		u.Scheme = "https"
	default:
		return nil, fmt.Errorf("%w %q: the scheme must be http or https", ErrBadServer, s)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%w %q: no host", ErrBadServer, s)
	}
	if p := u.Port(); p != "" {
		var n int
		if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w %q: bad port", ErrBadServer, s)
		}
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w %q: no user, query or fragment allowed", ErrBadServer, s)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// WebSocketURL is the AHP endpoint of a server base URL: http → ws,
// https → wss, base path kept, "/ws" appended.
func WebSocketURL(base *url.URL) string {
	u := *base
	u.Scheme = "ws"
	if base.Scheme == "https" {
		u.Scheme = "wss"
	}
	u.Path = strings.TrimRight(base.Path, "/") + "/ws"
	return u.String()
}

// TerminalURL is the web page of a terminal: <base>/t/<id>.
func TerminalURL(base *url.URL, id string) string {
	return strings.TrimRight(base.String(), "/") + "/t/" + url.PathEscape(id)
}

// IsLoopback reports whether the server runs on this machine (localhost or a
// loopback address).
func IsLoopback(base *url.URL) bool {
	host := base.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
