package buildinfo

import (
	"regexp"
	"runtime/debug"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestVersionText(t *testing.T) {
	info := func(mainVersion string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/termhost/termhost", Version: mainVersion}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	tests := []struct {
		name    string
		release string
		bi      *debug.BuildInfo
		want    string
	}{
		{"release from ldflags", "v1.4.0", info("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "false"), "termhost v1.4.0 (commit 0123456789ab, go1.26.0)"},
		{"go install of a tag", "dev", info("v1.3.2"), "termhost v1.3.2 (go1.26.0)"},
		{"dirty checkout", "dev", info("(devel)", "vcs.revision", "abc", "vcs.modified", "true"), "termhost dev (commit abc-dirty, go1.26.0)"},
		{"no build info", "dev", nil, "termhost dev"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionText(tc.release, tc.bi); got != tc.want {
				t.Errorf("versionText(%q, …) = %q, want %q", tc.release, got, tc.want)
			}
		})
	}
}

// TestBuildText: two builds of one version tell apart by their binary's
// hash and time, and by the commit when the build recorded it.
func TestBuildText(t *testing.T) {
	built := time.Date(2026, 12, 7, 11, 52, 13, 0, time.UTC)
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name, release string
		bi            *debug.BuildInfo
		sum           string
		want          string
	}{
		{"a checkout", "dev", vcs, "1a2b3c4d5e6f", "dev (binary 1a2b3c4d5e6f, built 2026-12-07 11:52:13 UTC; commit 0123456789ab-dirty)"},
		{"no VCS", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "9f8e7d6c5b4a", "dev (binary 9f8e7d6c5b4a, built 2026-12-07 11:52:13 UTC)"},
		{"a release", "v1.4.0", nil, "", "v1.4.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := built
			if tc.sum == "" {
				b = time.Time{}
			}
			if got := buildText(tc.release, tc.bi, tc.sum, b); got != tc.want {
				t.Errorf("buildText = %q, want %q", got, tc.want)
			}
		})
	}
	if this := This(); !regexp.MustCompile(`^\S+ \(binary [0-9a-f]{12}, built `).MatchString(this) {
		t.Errorf("This() = %q, want the version, the binary's hash and time", this)
	}
}
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
