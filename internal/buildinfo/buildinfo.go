// Package buildinfo names the running build of termhost: its version line
// (termhost --version) and, to tell two builds of one version apart, its
// binary's checksum and time.
package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Release is the release version. The command sets it from its own
// main.version, set at build time with -ldflags "-X main.version=…".
var Release = "dev"

// versionText is what termhost --version prints: the release, else the module version a `go install` recorded,
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

// Print writes the version line of the running program.
func Print(w io.Writer) {
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(w, versionText(Release, bi))
}

// buildText names one build, so that two of the same version (two builds
// of a checkout, both "dev") tell apart: the version, then the binary's
// SHA-256 (its first 12 hex digits) and modification time (when it was
// built or installed), and the commit with -dirty when the build recorded
// one.
func buildText(release string, bi *debug.BuildInfo, sum string, built time.Time) string {
	v := strings.TrimPrefix(versionText(release, bi), "termhost ")
	v, _, _ = strings.Cut(v, " (")
	var extra []string
	if sum != "" {
		b := "binary " + sum
		if !built.IsZero() {
			b += ", built " + built.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		extra = append(extra, b)
	}
	if bi != nil {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev := s.Value[:min(12, len(s.Value))]
				for _, m := range bi.Settings {
					if m.Key == "vcs.modified" && m.Value == "true" {
						rev += "-dirty"
					}
				}
				extra = append(extra, "commit "+rev)
			}
		}
	}
	if len(extra) == 0 {
		return v
	}
	return v + " (" + strings.Join(extra, "; ") + ")"
}

// This is buildText of the running program: its binary is read through
// /proc/self/exe, the file it runs even when a new one replaced it at its
// path.
var This = sync.OnceValue(func() string {
	bi, _ := debug.ReadBuildInfo()
	var sum string
	var built time.Time
	if f, err := os.Open("/proc/self/exe"); err == nil {
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			sum = hex.EncodeToString(h.Sum(nil))[:12]
		}
		if st, err := f.Stat(); err == nil {
			built = st.ModTime()
		}
		_ = f.Close()
	}
	return buildText(Release, bi, sum, built)
})
