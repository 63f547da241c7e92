package ahp

import (
	"strconv"
	"strings"
)

// SupportedVersions are the caret ranges this package speaks, newest first.
// Ranges from 0.9 up use the Current shape, older ones the Legacy shape.
var SupportedVersions = []string{"^1.0.0", "^0.10.0", "^0.9.0", "^0.8.0", "^0.7.0", "^0.6.0", "^0.5.1"}

type semver struct{ major, minor, patch int }

func parseSemver(s string) (semver, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, false
	}
	var v [3]int
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') {
			return semver{}, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strings.ContainsAny(p, "+-") {
			return semver{}, false
		}
		v[i] = n
	}
	return semver{v[0], v[1], v[2]}, true
}

func (v semver) less(o semver) bool {
	if v.major != o.major {
		return v.major < o.major
	}
	if v.minor != o.minor {
		return v.minor < o.minor
	}
	return v.patch < o.patch
}

// inCaret reports whether v satisfies ^base.
func inCaret(v, base semver) bool {
	if v.less(base) {
		return false
	}
	if base.major > 0 {
		return v.major == base.major
	}
	return v.major == 0 && v.minor == base.minor
}

// Negotiate picks the highest offered version inside a supported range and the
// shape that version uses. ok is false when none is acceptable.
func Negotiate(offered []string) (version string, shape Shape, ok bool) {
	var best semver
	for _, s := range offered {
		v, valid := parseSemver(s)
		if !valid || !supported(v) {
			continue
		}
		if !ok || best.less(v) {
			best, version, ok = v, s, true
		}
	}
	return version, shapeOf(best), ok
}

// shapeOf returns the terminal shape of a (supported) version.
func shapeOf(v semver) Shape {
	if v.major == 0 && v.minor < 9 {
		return Legacy
	}
	return Current
}

// ShapeFor returns the shape of a version string (Current if unparsable).
func ShapeFor(version string) Shape {
	v, ok := parseSemver(version)
	if !ok {
		return Current
	}
	return shapeOf(v)
}

func supported(v semver) bool {
	for _, r := range SupportedVersions {
		base, _ := parseSemver(strings.TrimPrefix(r, "^"))
		if inCaret(v, base) {
			return true
		}
	}
	return false
}
