package sso

import (
	"errors"
	"strings"

	"golang.org/x/text/secure/precis"
)

// ErrProfile: the identity is not in the form identities are compared in.
// Such a person is refused (the "not allowed" page), never mapped onto
// someone else's identity.
var ErrProfile = errors.New("identity is not a plain username or e-mail address (PRECIS UsernameCaseMapped)")

// Canon is the form identities and role patterns are compared in: the
// PRECIS UsernameCaseMapped profile (RFC 8265) of the whole value, which an
// e-mail address or a login (alice@corp.com, alice@github) passes as it is,
// lower-cased. A value the profile would have to change beyond its case
// is refused rather than mapped: the KELVIN SIGN (U+212A) or a fullwidth
// letter would otherwise become an ASCII k and pass for kate@…; so is one
// with spaces, controls, symbols or a right-to-left override.
func Canon(id string) (string, error) {
	if id == "" {
		return "", ErrProfile
	}
	kept, err := precis.UsernameCasePreserved.String(id)
	if err != nil || kept != id {
		return "", ErrProfile
	}
	folded, err := precis.UsernameCaseMapped.String(id)
	if err != nil {
		return "", ErrProfile
	}
	return folded, nil
}

// canonPattern is a role pattern in the form identities are compared in:
// its pieces between the * wildcards through Canon, "" when one fails.
func canonPattern(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	parts := strings.Split(p, "*")
	for i, part := range parts {
		if part == "" {
			continue
		}
		c, err := Canon(part)
		if err != nil {
			return ""
		}
		parts[i] = c
	}
	return strings.Join(parts, "*")
}
