package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"
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

// termhost --help lists every subcommand; --version prints one line.
func TestHelpAndVersionFlags(t *testing.T) {
	bin := needBinary(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"termhost [serve]", "termhost run", "termhost attach", "termhost ls", "termhost share", "termhost kill", "termhost bench", "termhost version"}},
		{[]string{"-h"}, []string{"termhost run", "termhost version"}},
		{[]string{"help"}, []string{"termhost run", "termhost version"}},
		{[]string{"--version"}, []string{"termhost "}},
		{[]string{"version"}, []string{"termhost "}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = os.Environ()
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("termhost %v: %v", tc.args, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("termhost %v output lacks %q:\n%s", tc.args, w, out)
				}
			}
			if tc.args[0] != "--help" && tc.args[0] != "-h" && tc.args[0] != "help" && strings.Count(string(out), "\n") != 1 {
				t.Errorf("termhost %v: %q, want one line", tc.args, out)
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
	if this := thisBuild(); !regexp.MustCompile(`^\S+ \(binary [0-9a-f]{12}, built `).MatchString(this) {
		t.Errorf("thisBuild() = %q, want the version, the binary's hash and time", this)
	}
}

// checkUpgradeMessage checks termhost upgrade's report: it names process
// pid and both builds, upgrade-next and dev, which it tells apart.
func checkUpgradeMessage(t *testing.T, out string, pid int) {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`process %d now runs upgrade-next \(binary ([0-9a-f]{12}), built [^)]*\), was dev \(binary ([0-9a-f]{12}), built `, pid))
	m := re.FindStringSubmatch(out)
	if m == nil || m[1] == m[2] {
		t.Fatalf("termhost upgrade said %q, want process %d now runs upgrade-next, was dev, each with its binary's own hash", out, pid)
	}
}
