package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// versionText is what termhost --version prints: the release (-ldflags
// "-X main.version=…"), else the module version a `go install` recorded,
// then the commit and Go version from the build info.
func versionText(release string, bi *debug.BuildInfo) string {
	v := release
	if bi != nil && (v == "" || v == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "dev"
	}
	var extra []string
	if bi != nil {
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if settings["vcs.modified"] == "true" {
				rev += "-dirty"
			}
			extra = append(extra, "commit "+rev)
		}
		if bi.GoVersion != "" {
			extra = append(extra, bi.GoVersion)
		}
	}
	if len(extra) == 0 {
		return "termhost " + v
	}
	return fmt.Sprintf("termhost %s (%s)", v, strings.Join(extra, ", "))
}

func printVersion(w io.Writer) {
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(w, versionText(version, bi))
}
