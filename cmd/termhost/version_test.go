package main

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
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
