package ahp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name      string
		offered   []string
		want      string
		wantShape ahp.Shape
		wantOK    bool
	}{
		// Every version the generated clients advertise, alone.
		{name: "0.5.1", offered: []string{"0.5.1"}, want: "0.5.1", wantShape: ahp.Legacy, wantOK: true},
		{name: "0.5.2", offered: []string{"0.5.2"}, want: "0.5.2", wantShape: ahp.Legacy, wantOK: true},
		{name: "0.5.9 patch inside ^0.5.1", offered: []string{"0.5.9"}, want: "0.5.9", wantShape: ahp.Legacy, wantOK: true},
		{name: "0.6.0", offered: []string{"0.6.0"}, want: "0.6.0", wantShape: ahp.Legacy, wantOK: true},
		{name: "0.7.0", offered: []string{"0.7.0"}, want: "0.7.0", wantShape: ahp.Legacy, wantOK: true},
		{name: "0.8.0", offered: []string{"0.8.0"}, want: "0.8.0", wantShape: ahp.Legacy, wantOK: true},
		{name: "0.8.3", offered: []string{"0.8.3"}, want: "0.8.3", wantShape: ahp.Legacy, wantOK: true},
		{name: "0.9.0", offered: []string{"0.9.0"}, want: "0.9.0", wantShape: ahp.Current, wantOK: true},
		{name: "0.10.0", offered: []string{"0.10.0"}, want: "0.10.0", wantShape: ahp.Current, wantOK: true},
		{name: "1.0.0", offered: []string{"1.0.0"}, want: "1.0.0", wantShape: ahp.Current, wantOK: true},
		{name: "1.1.0 unreleased inside ^1.0.0", offered: []string{"1.1.0"}, want: "1.1.0", wantShape: ahp.Current, wantOK: true},
		{name: "1.99.7", offered: []string{"1.99.7"}, want: "1.99.7", wantShape: ahp.Current, wantOK: true},
		// Rejected.
		{name: "0.5.0 below ^0.5.1", offered: []string{"0.5.0"}},
		{name: "0.4.9", offered: []string{"0.4.9"}},
		{name: "0.11.0 unknown minor", offered: []string{"0.11.0"}},
		{name: "2.0.0", offered: []string{"2.0.0"}},
		{name: "two parts", offered: []string{"1.0"}},
		{name: "four parts", offered: []string{"1.0.0.0"}},
		{name: "pre-release", offered: []string{"1.0.0-beta"}},
		{name: "build metadata", offered: []string{"1.0.0+build"}},
		{name: "leading zero", offered: []string{"01.0.0"}},
		{name: "leading zero minor", offered: []string{"0.09.0"}},
		{name: "leading zero patch", offered: []string{"1.0.00"}},
		{name: "plus sign", offered: []string{"+1.0.0"}},
		{name: "minus sign", offered: []string{"-1.0.0"}},
		{name: "v prefix", offered: []string{"v1.0.0"}},
		{name: "caret range", offered: []string{"^1.0.0"}},
		{name: "spaces", offered: []string{" 1.0.0"}},
		{name: "empty part", offered: []string{"1..0"}},
		{name: "empty string", offered: []string{""}},
		{name: "nothing offered", offered: nil},
		{name: "huge number", offered: []string{"99999999999999999999.0.0"}},
		// Mixed lists: the highest acceptable wins, whatever the order.
		{
			name:    "go client list",
			offered: []string{"1.1.0", "1.0.0", "0.10.0", "0.9.0", "0.8.0", "0.7.0", "0.6.0", "0.5.2", "0.5.1"},
			want:    "1.1.0", wantShape: ahp.Current, wantOK: true,
		},
		{
			name:    "ascending order",
			offered: []string{"0.5.1", "0.8.0", "0.9.0", "1.0.0"},
			want:    "1.0.0", wantShape: ahp.Current, wantOK: true,
		},
		{
			name:    "unsorted with junk",
			offered: []string{"0.8.0", "junk", "2.0.0", "0.10.0", "1.0.0-rc.1", "0.9.0"},
			want:    "0.10.0", wantShape: ahp.Current, wantOK: true,
		},
		{
			name:    "only legacy acceptable",
			offered: []string{"3.0.0", "0.7.0", "0.4.0", "0.8.0"},
			want:    "0.8.0", wantShape: ahp.Legacy, wantOK: true,
		},
		{
			name:    "minor ordering is numeric not lexical",
			offered: []string{"0.9.0", "0.10.0"},
			want:    "0.10.0", wantShape: ahp.Current, wantOK: true,
		},
		{
			name:    "duplicates",
			offered: []string{"0.8.0", "0.8.0"},
			want:    "0.8.0", wantShape: ahp.Legacy, wantOK: true,
		},
		{name: "none acceptable", offered: []string{"2.0.0", "0.4.0", "1.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, shape, ok := ahp.Negotiate(tt.offered)
			if ok != tt.wantOK || got != tt.want || (ok && shape != tt.wantShape) {
				t.Errorf("Negotiate(%q) = %q, %s, %v; want %q, %s, %v", tt.offered, got, shapeName(shape), ok, tt.want, shapeName(tt.wantShape), tt.wantOK)
			}
			if ok {
				if s := ahp.ShapeFor(got); s != shape {
					t.Errorf("ShapeFor(%q) = %s, want %s (as Negotiate)", got, shapeName(s), shapeName(shape))
				}
			}
		})
	}
}

func TestNegotiateEveryClientVersionInAnyPosition(t *testing.T) {
	versions := []string{"0.5.1", "0.5.2", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0", "1.0.0", "1.1.0"}
	for _, v := range versions {
		for pos := range 3 {
			offered := []string{"2.0.0", "0.4.0"}
			offered = append(offered[:pos], append([]string{v}, offered[pos:]...)...)
			t.Run(fmt.Sprintf("%s at %d", v, pos), func(t *testing.T) {
				got, _, ok := ahp.Negotiate(offered)
				if !ok || got != v {
					t.Errorf("Negotiate(%q) = %q, %v; want %q", offered, got, ok, v)
				}
			})
		}
	}
}

func TestShapeFor(t *testing.T) {
	tests := []struct {
		version string
		want    ahp.Shape
	}{
		{"0.5.1", ahp.Legacy}, {"0.8.0", ahp.Legacy}, {"0.8.99", ahp.Legacy},
		{"0.9.0", ahp.Current}, {"0.10.0", ahp.Current}, {"1.0.0", ahp.Current}, {"1.1.0", ahp.Current},
		{"", ahp.Current}, {"garbage", ahp.Current},
	}
	for _, tt := range tests {
		if got := ahp.ShapeFor(tt.version); got != tt.want {
			t.Errorf("ShapeFor(%q) = %s, want %s", tt.version, shapeName(got), shapeName(tt.want))
		}
	}
}

func TestSupportedVersionsAreCaretRanges(t *testing.T) {
	for _, r := range ahp.SupportedVersions {
		v, ok := strings.CutPrefix(r, "^")
		if !ok {
			t.Errorf("SupportedVersions entry %q is not a caret range", r)
			continue
		}
		if got, _, ok := ahp.Negotiate([]string{v}); !ok || got != v {
			t.Errorf("Negotiate([%q]) = %q, %v: the base of supported range %q must be accepted", v, got, ok, r)
		}
	}
}
