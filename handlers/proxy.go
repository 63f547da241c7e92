package handlers

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// reqInfo is what a request knows about where it came from: the path prefix
// the browser sees, and the scheme and host it used.
type reqInfo struct {
	base   string // "" or "/term"
	scheme string
	host   string
}

type reqInfoKey struct{}

// withRequestInfo honours X-Forwarded-Proto/Host/Prefix only from trusted
// proxies; everyone else gets the connection's own scheme and Host.
func (s *Server) withRequestInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := reqInfo{base: s.cfg.BasePath, scheme: "http", host: r.Host}
		if r.TLS != nil {
			info.scheme = "https"
		}
		if s.trusted(r) {
			if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
				info.scheme = p
			}
			if h := r.Header.Get("X-Forwarded-Host"); h != "" && !strings.ContainsAny(h, "/ ,") {
				info.host = h
			}
			if p := strings.TrimRight(r.Header.Get("X-Forwarded-Prefix"), "/"); strings.HasPrefix(p, "/") && !strings.ContainsAny(p, " \"'<>\\") {
				info.base = p + s.cfg.BasePath
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, info)))
	})
}

func requestInfo(r *http.Request) reqInfo {
	if info, ok := r.Context().Value(reqInfoKey{}).(reqInfo); ok {
		return info
	}
	return reqInfo{scheme: "http", host: r.Host}
}

func basePath(r *http.Request) string      { return requestInfo(r).base }
func requestScheme(r *http.Request) string { return requestInfo(r).scheme }

// trusted reports whether the peer is one of the --trusted-proxy addresses.
func (s *Server) trusted(r *http.Request) bool {
	if len(s.cfg.TrustedProxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// publicBase is the URL the browser uses for this server, without a
// trailing slash: --public-url when set, else what the request says.
func (s *Server) publicBase(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	info := requestInfo(r)
	return info.scheme + "://" + info.host + info.base
}

// loopbackHostOnly guards a server without authentication against DNS
// rebinding: a page on evil.example whose name the attacker points at
// 127.0.0.1 reaches the listener, but its requests say Host: evil.example.
func loopbackHostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(r.Host) {
			http.Error(w, "this termhost has no authentication and answers only to localhost, 127.0.0.1 or [::1]", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackHost: localhost or a loopback address, with or without a port.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
