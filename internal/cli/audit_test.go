package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/cmdtest"
)

// TestAuditCommand: termhost audit answers "who typed into build at 14:03"
// and refuses unknown event kinds and times with exit 2.
func TestAuditCommand(t *testing.T) {
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	lines := `{"time":"2026-12-05T14:02:10Z","event":"input","who":"alice@corp.com","name":"Alice","terminal":"ahp-terminal:/t1","title":"build","bytes":3}
{"time":"2026-12-05T14:03:20Z","event":"input","who":"bob@corp.com","name":"Bob","terminal":"ahp-terminal:/t1","title":"build","bytes":7}
{"time":"2026-12-05T14:03:40Z","event":"input","who":"carol@corp.com","terminal":"ahp-terminal:/t2","title":"deploy","bytes":1}
{"time":"2026-12-05T14:05:00Z","event":"connect","who":"share:x1","name":"Ev\u202ee\u001b[2J","terminal":"ahp-terminal:/t3","title":"ops\u2067\u200f","count":2254,"until":"2026-12-05T14:05:59Z"}
`
	if err := os.WriteFile(trail, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(cmdtest.Binary(t), append([]string{"audit", "--audit-log", trail}, args...)...)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := run("--terminal", "build", "--event", "input", "--since", "2026-12-05T14:03:00Z", "--until", "2026-12-05T14:04:00Z")
	if code != 0 || !strings.Contains(out, "Bob <bob@corp.com>") || !strings.Contains(out, "7 bytes") || strings.Contains(out, "alice") || strings.Contains(out, "carol") {
		t.Errorf("who typed into build at 14:03: exit %d\n%s", code, out)
	}
	out, code = run("--json", "--who", "carol@corp.com")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"title":"deploy"`) {
		t.Errorf("--json --who carol: exit %d\n%s", code, out)
	}
	// Names and titles without direction or control characters; a
	// summary of coalesced events with its count.
	out, code = run("--event", "connect")
	if code != 0 || !strings.Contains(out, "Eve[2J <share:x1>") || !strings.Contains(out, "ops (t3)") || !strings.Contains(out, "×2254") ||
		strings.ContainsAny(out, "\u202e\u2067\u200f\x1b") {
		t.Errorf("termhost audit --event connect: exit %d\n%q", code, out)
	}
	for _, bad := range [][]string{{"--event", "typed"}, {"--since", "yesterday-ish"}} {
		if out, code := run(bad...); code != 2 {
			t.Errorf("termhost audit %v: exit %d, want 2\n%s", bad, code, out)
		}
	}
}

func TestAuditParseWhen(t *testing.T) {
	now := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"2026-12-05T14:03:00Z", time.Date(2026, 12, 5, 14, 3, 0, 0, time.UTC)},
		{"2026-12-04 09:30", time.Date(2026, 12, 4, 9, 30, 0, 0, time.UTC)},
		{"14:03", time.Date(2026, 12, 5, 14, 3, 0, 0, time.UTC)},
		{"90m", time.Date(2026, 12, 5, 13, 30, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		got, err := parseWhen(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := parseWhen("-5m", now); err == nil {
		t.Error("parseWhen(-5m) = nil error")
	}
}
