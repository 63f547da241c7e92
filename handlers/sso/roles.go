package sso

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Roles, as auth names them.
const (
	RoleOwner  = "owner"
	RoleDriver = "driver"
	RoleViewer = "viewer"
)

// Roles says who has which role. An entry is an identity
// (alice@corp.com) or a pattern where * stands for any run of characters
// (*@corp.com); identities and patterns are compared in the form Canon
// gives them (case-insensitive, lookalike letters refused). The highest
// role a person matches wins.
type Roles struct {
	Owners, Drivers, Viewers []string
	// Contact is whom to ask for access, shown to people in no list; empty
	// names the owners listed without a pattern.
	Contact string
}

// RoleOf is id's role, or "" when id is in no list.
func (r *Roles) RoleOf(id string) string {
	if r == nil {
		return ""
	}
	for _, l := range []struct {
		role     string
		patterns []string
	}{{RoleOwner, r.Owners}, {RoleDriver, r.Drivers}, {RoleViewer, r.Viewers}} {
		for _, p := range l.patterns {
			if Match(p, id) {
				return l.role
			}
		}
	}
	return ""
}

// Whom is whom to ask for access.
func (r *Roles) Whom() string {
	if r == nil {
		return ""
	}
	if r.Contact != "" {
		return r.Contact
	}
	var exact []string
	for _, o := range r.Owners {
		if !strings.Contains(o, "*") {
			exact = append(exact, o)
		}
	}
	return strings.Join(exact, ", ")
}

// Merge is r with o's entries added (the command line's lists beside the
// file's).
func (r Roles) Merge(o Roles) Roles {
	out := Roles{Owners: append(append([]string{}, r.Owners...), o.Owners...),
		Drivers: append(append([]string{}, r.Drivers...), o.Drivers...),
		Viewers: append(append([]string{}, r.Viewers...), o.Viewers...), Contact: r.Contact}
	if out.Contact == "" {
		out.Contact = o.Contact
	}
	return out
}

// Match reports whether id matches pattern, both compared in the form
// Canon gives them (an id or pattern piece it refuses matches nothing); *
// matches any run of characters (an @ included: *@corp.com does not match
// eve@corp.com.evil.org, whose end differs).
func Match(pattern, id string) bool {
	pattern = canonPattern(pattern)
	id, err := Canon(id)
	if pattern == "" || err != nil {
		return false
	}
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == id
	}
	if !strings.HasPrefix(id, parts[0]) {
		return false
	}
	id = id[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(id, p)
		if i < 0 {
			return false
		}
		id = id[i+len(p):]
	}
	return strings.HasSuffix(id, last) && len(id) >= len(last)
}

// CheckPattern refuses a role entry that could match nobody: one whose
// pieces between the * wildcards are not in the form identities are
// compared in (Canon), such as a lookalike letter or a space.
func CheckPattern(p string) error {
	if canonPattern(p) == "" {
		return fmt.Errorf("%q is not a plain identity or pattern (a lookalike or fullwidth letter, a space or a control?)", p)
	}
	return nil
}

// SplitList splits a flag's value: identities separated by commas or spaces.
func SplitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// ParseRoles reads a roles file: lines "owners: a@x, b@x", "drivers: …",
// "viewers: …" (singulars too) and "contact: …"; a key may repeat; # starts
// a comment; blank lines are ignored. Anything else is an error naming the
// line, so that a typo never silently drops someone's access.
func ParseRoles(data []byte) (Roles, error) {
	var r Roles
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return Roles{}, fmt.Errorf("line %d: want \"owners:\", \"drivers:\", \"viewers:\" or \"contact:\" and a list", n)
		}
		var list *[]string
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "owners", "owner":
			list = &r.Owners
		case "drivers", "driver":
			list = &r.Drivers
		case "viewers", "viewer":
			list = &r.Viewers
		case "contact":
			r.Contact = strings.TrimSpace(val)
		default:
			return Roles{}, fmt.Errorf("line %d: unknown key %q (owners, drivers, viewers or contact)", n, strings.TrimSpace(key))
		}
		if list == nil {
			continue
		}
		for _, e := range SplitList(val) {
			if err := CheckPattern(e); err != nil {
				return Roles{}, fmt.Errorf("line %d: %w", n, err)
			}
			*list = append(*list, e)
		}
	}
	if err := sc.Err(); err != nil {
		return Roles{}, err
	}
	return r, nil
}
