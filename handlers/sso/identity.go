package sso

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxIdentity is the longest identity or display name accepted, in bytes.
const MaxIdentity = 256

// Why a request has no identity. Every one is refused with 401.
var (
	ErrNoIdentity = errors.New("no identity header")                                      // from a trusted peer, or none sent
	ErrUntrusted  = errors.New("identity header from a peer that is not a trusted proxy") // a spoofing attempt
	ErrAmbiguous  = errors.New("identity header sent more than once or under a lookalike name")
	ErrMalformed  = errors.New("identity header value is not a single identity")
)

// Person is someone the proxy signed in.
type Person struct {
	ID   string // the identity header's value in its compared form (Canon): what roles match
	Name string // the display name header's value, else the identity as sent
}

// Proxy says how the trusted proxy names people.
type Proxy struct {
	// Header carries the identity (X-Forwarded-Email, X-Auth-Request-Email,
	// Tailscale-User-Login, Cf-Access-Authenticated-User-Email …).
	Header string
	// NameHeader, optional, carries a display name (X-Forwarded-User,
	// Tailscale-User-Name …).
	NameHeader string
	// Trusted are the peers allowed to send Header: the proxy's addresses.
	Trusted []netip.Prefix
}

// TrustedPeer reports whether the request's TCP peer is a trusted proxy.
func (p *Proxy) TrustedPeer(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, pre := range p.Trusted {
		if pre.Contains(ip) {
			return true
		}
	}
	return false
}

// Sent reports whether the request carries the identity header at all, under
// any spelling (case, underscores for dashes).
func (p *Proxy) Sent(r *http.Request) bool {
	for k := range r.Header {
		if sameName(k, p.Header) {
			return true
		}
	}
	return false
}

// Identify is the person a request comes from; an identity that is not in
// the compared form (Canon) comes back with ErrProfile and only its Name. The identity header counts
// only from a trusted peer, exactly once, under its canonical name, with one
// plain value: a second value (a client's header the proxy passed on beside
// its own), a lookalike name (x_forwarded_email, which some servers fold
// into the real one) or a list is refused rather than guessed at.
func (p *Proxy) Identify(r *http.Request) (Person, error) {
	if !p.Sent(r) {
		return Person{}, ErrNoIdentity
	}
	if !p.TrustedPeer(r) {
		return Person{}, ErrUntrusted
	}
	id, err := single(r.Header, p.Header)
	if err != nil {
		return Person{}, err
	}
	canon, err := Canon(id)
	if err != nil {
		// Named (as sent) for the "not allowed" page, with no ID: no role.
		return Person{Name: id}, err
	}
	person := Person{ID: canon, Name: id}
	if p.NameHeader != "" {
		if name, err := single(r.Header, p.NameHeader); err == nil {
			person.Name = name
		}
	}
	return person, nil
}

// single is the one value of header name in h.
func single(h http.Header, name string) (string, error) {
	canon := textproto.CanonicalMIMEHeaderKey(name)
	n := 0
	for k, vs := range h {
		if !sameName(k, name) {
			continue
		}
		if k != canon {
			return "", ErrAmbiguous
		}
		n += len(vs)
	}
	switch {
	case n == 0:
		return "", ErrNoIdentity
	case n > 1:
		return "", ErrAmbiguous
	}
	v := strings.TrimSpace(h.Get(canon))
	if !plain(v) {
		return "", ErrMalformed
	}
	return v, nil
}

// sameName: header names equal ignoring case, with _ taken for -.
func sameName(a, b string) bool {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }
	return norm(a) == norm(b)
}

// plain: one non-empty printable value of bounded length, not a list.
func plain(v string) bool {
	if v == "" || len(v) > MaxIdentity || !utf8.ValidString(v) || strings.ContainsAny(v, ",;\"") {
		return false
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
