package cli

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseTTL(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0}, {"never", 0}, {"1h", time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}, {"90m", 90 * time.Minute}, {"1s", time.Second},
	}
	for _, tt := range tests {
		if got, err := parseTTL(tt.in); err != nil || got != tt.want {
			t.Errorf("parseTTL(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"soon", "-1h", "1x", "500ms", "d", "-2d"} {
		if got, err := parseTTL(bad); err == nil {
			t.Errorf("parseTTL(%q) = %v, want an error", bad, got)
		}
	}
}

func TestShareParams(t *testing.T) {
	tests := []struct {
		role string
		ttl  time.Duration
		want string
	}{
		{"viewer", time.Hour, `{"channel":"ahp-root://","terminal":"ahp-terminal:/abc","role":"viewer","ttlSeconds":3600}`},
		{"driver", 7 * 24 * time.Hour, `{"channel":"ahp-root://","terminal":"ahp-terminal:/abc","role":"driver","ttlSeconds":604800}`},
		{"viewer", 0, `{"channel":"ahp-root://","terminal":"ahp-terminal:/abc","role":"viewer"}`},
	}
	for _, tt := range tests {
		b, _ := json.Marshal(newShareParams("abc", tt.role, tt.ttl))
		if string(b) != tt.want {
			t.Errorf("params(%s, %v) = %s, want %s", tt.role, tt.ttl, b, tt.want)
		}
	}
	for _, r := range []string{"viewer", "driver"} {
		if err := checkRole(r); err != nil {
			t.Errorf("checkRole(%q) = %v", r, err)
		}
	}
	if checkRole("owner") == nil {
		t.Errorf("checkRole(owner) accepted")
	}
}

func TestShare(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "shared", c.ClientID())
	tests := []struct {
		args       []string
		wantStderr string
	}{
		{[]string{id}, `^termhost: share link to shared \(viewer, expires [^)]+\)\n$`},
		{[]string{"--role", "driver", "--ttl", "0", id}, `^termhost: share link to shared \(driver, no expiry\)\n$`},
		{[]string{ts.URL + "/t/" + id, "--ttl", "7d"}, `^termhost: share link to shared \(viewer, expires [^)]+\)\n$`},
	}
	for _, tt := range tests {
		code, stdout, stderr := call(t, ownerEnv(ts), "share", tt.args...)
		if code != 0 {
			t.Fatalf("share %q: exit %d, %s", tt.args, code, stderr)
		}
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(ts.URL+"/t/"+id+"#share=") + `\S+\n$`).MatchString(stdout) {
			t.Errorf("share %q stdout = %q, want the link's URL", tt.args, stdout)
		}
		if !regexp.MustCompile(tt.wantStderr).MatchString(stderr) {
			t.Errorf("share %q stderr = %q, want %s", tt.args, stderr, tt.wantStderr)
		}
	}
}

// TestShareHelpSaysWhatADriverCanDo: where people choose a role, the help
// says that a driver link is full shell access as the server's user (and so
// the owner's power), and that viewer is the safe default.
func TestShareHelpSaysWhatADriverCanDo(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"share", []string{
			"A viewer link (the default) is the safe choice.",
			"A driver link is full shell\naccess as the server's Unix user",
			"read the owner token file",
			"become\nowner",
			"--role string\n      what the link allows: viewer (read-only, the safe choice) or driver (full shell\n      access as the server's Unix user: it can read the owner token and become owner) (default viewer)",
		}},
		{"run", []string{
			"--share string\n      also create a share link with this role: viewer (read-only, the safe choice) or driver\n      (full shell access as the server's Unix user: it can read the owner token and become owner)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			code, stdout, stderr := call(t, nil, tc.cmd, "--help")
			if code != 0 || stderr != "" {
				t.Fatalf("termhost %s --help: exit %d, stderr %q", tc.cmd, code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("termhost %s --help lacks %q:\n%s", tc.cmd, w, stdout)
				}
			}
		})
	}
}

// TestShareDefaultTTL: a link from `termhost share` and
// one from the Share dialog last as long by default.
func TestShareDefaultTTL(t *testing.T) {
	d, err := parseTTL(defaultShareTTL)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../assets/workbench/share.ts")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`DEFAULT_SHARE_TTL_SECONDS = (\d+);`).FindSubmatch(src)
	if m == nil {
		t.Fatal("assets/workbench/share.ts declares no DEFAULT_SHARE_TTL_SECONDS")
	}
	if want := strconv.FormatInt(int64(d.Seconds()), 10); string(m[1]) != want {
		t.Errorf("the Share dialog's default expiry is %s s, the CLI's %s (%s s): want one default", m[1], defaultShareTTL, want)
	}
}
