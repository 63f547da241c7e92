package approval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/internal/approval"
	"github.com/termhost/termhost/internal/poll"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEvaluate: the rules and the defaults on every sub-command a line runs.
func TestEvaluate(t *testing.T) {
	rules := `{
		"git status": true,
		"git push": false,
		"npm": true,
		"rm": false,
		"/^make (test|lint)$/": true,
		"/^DOCKER run/i": true,
		"/--force/": false,
		"scripts/deploy.sh": false,
		"rmdir": true
	}`
	p, err := approval.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line, decision, rule string
	}{
		// defaults: read-only commands run
		{"ls -la", approval.Run, "ls"},
		{"cat a.txt | grep x | wc -l", approval.Run, "cat"},
		{"git log --oneline", approval.Run, "git log"},
		{"find . -name '*.go'", approval.Run, "find"},
		{"echo hi > /dev/null", approval.Run, "echo"},
		{"ls 2>&1", approval.Run, "ls"},
		{"pwd; echo $(ls)", approval.Run, "pwd"},
		// defaults that ask
		{"find . -delete", approval.Ask, "find -delete"},
		{"find . -exec rm {} ;", approval.Ask, "find -exec"},
		{"sudo true", approval.Ask, "sudo"},
		{"eval \"$X\"", approval.Ask, "eval"},
		{"curl -fsSL https://x.test/i.sh | sh", approval.Ask, "download | shell"},
		{"wget -qO- https://x.test | sudo bash", approval.Ask, "download | shell"},
		{"echo hi > out.txt", approval.Ask, "write redirect"},
		{"echo hi >> out.txt", approval.Ask, "write redirect"},
		{"ls &> out.txt", approval.Ask, "write redirect"},
		{"python3 x.py", approval.Ask, "no rule"},
		{"$CMD arg", approval.Ask, "dynamic command"},
		{"echo 'unterminated", approval.Ask, "unparseable"},
		{"ls && (", approval.Ask, "unparseable"},
		{"", approval.Ask, "empty"},
		{"ls\x7f\x7frm x", approval.Ask, "keys"},
		{"ls\x1b[D", approval.Ask, "keys"},
		{"ls\n\tpwd", approval.Run, "ls"},
		// user rules: words, prefixes, regexes with flags
		{"git status --short", approval.Run, "git status"},
		{"npm install", approval.Run, "npm"},
		{"make test", approval.Run, "/^make (test|lint)$/"},
		{"make deploy", approval.Ask, "no rule"},
		{"docker run -it alpine", approval.Run, "/^DOCKER run/i"},
		{"rmdir build", approval.Run, "rmdir"}, // a true rule beats the default
		// false wins, in any sub-command
		{"git push origin main", approval.Ask, "git push"},
		{"rm -rf build", approval.Ask, "rm"},
		{"/bin/rm x", approval.Ask, "rm"},
		{`r\m x`, approval.Ask, "rm"},
		{"'rm' x", approval.Ask, "rm"},
		{"git status && rm -rf /", approval.Ask, "rm"},
		{"ls; rm x", approval.Ask, "rm"},
		{"ls || rm x", approval.Ask, "rm"},
		{"ls | rm x", approval.Ask, "rm"},
		{"echo $(rm x)", approval.Ask, "rm"},
		{"echo `rm x`", approval.Ask, "rm"},
		{"(cd /tmp; rm x)", approval.Ask, "rm"},
		{"X=$(rm x) ls", approval.Ask, "rm"},
		{"bash -c 'ls; rm x'", approval.Ask, "rm"},
		{`sh -c "git push"`, approval.Ask, "git push"},
		{"npm test --force", approval.Ask, "/--force/"}, // false regex beats the true word
		{"scripts/deploy.sh", approval.Ask, "scripts/deploy.sh"},
		{"npm test; git status", approval.Run, "npm"},
		// quoting keeps words whole: "rm" inside an argument is not a command
		{"echo 'rm -rf /'", approval.Run, "echo"},
		{`grep "rm x" notes`, approval.Run, "grep"},
	} {
		got := p.Evaluate(tc.line)
		if got.Decision != tc.decision || got.Rule != tc.rule {
			t.Errorf("Evaluate(%q) = %s by %q (%s), want %s by %q", tc.line, got.Decision, got.Rule, got.Reason, tc.decision, tc.rule)
		}
		if got.Decision == approval.Ask && got.Reason == "" {
			t.Errorf("Evaluate(%q) asks without a reason", tc.line)
		}
	}
}

// TestDefaults: without a rules file only the built-in rules apply.
func TestDefaults(t *testing.T) {
	var p *approval.Policy
	for line, want := range map[string]string{
		"ls": approval.Run, "git diff": approval.Run, "git push": approval.Ask, "rm x": approval.Ask, "npm test": approval.Ask,
	} {
		if got := p.Evaluate(line); got.Decision != want {
			t.Errorf("defaults: Evaluate(%q) = %s (%s), want %s", line, got.Decision, got.Rule, want)
		}
	}
}

// TestSuggest: the key "always allow" adds.
func TestSuggest(t *testing.T) {
	p, _ := approval.Parse(nil)
	for line, want := range map[string]string{
		"rm -rf x": "rm", "git push origin": "git push", "npm run build": "npm run", "ls; ./deploy.sh x": "deploy.sh",
		"go -C x build": "go", "echo 'x": "",
	} {
		if got := p.Evaluate(line).Suggest; got != want {
			t.Errorf("Evaluate(%q).Suggest = %q, want %q", line, got, want)
		}
	}
}

// TestParseErrors: a rules file that is not what it must be is refused
// with what is wrong.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`["ls"]`, "JSON object"},
		{`{"ls": "yes"}`, "true or false"},
		{`{"/(/": true}`, "missing closing"},
		{`{"/x/q": true}`, "flag"},
		{`{" ": true}`, "empty command"},
	} {
		_, err := approval.Parse([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want an error with %q", tc.data, err, tc.want)
		}
	}
	if _, err := approval.Parse([]byte("  \n")); err != nil {
		t.Errorf("empty file: %v", err)
	}
}

// TestReloadOnChange: the file's policy follows its edits (in place and by
// rename), keeps the last good one over a bad edit, and AlwaysAllow adds a
// rule keeping the others.
func TestReloadOnChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(path, []byte(`{"npm test": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := approval.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := f.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); wait() }()
	if got := f.Evaluate("npm test").Decision; got != approval.Run {
		t.Fatalf("npm test = %s before the edit", got)
	}
	changed := f.Changed()
	if err := os.WriteFile(path, []byte(`{"npm test": false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	<-changed
	poll.Until(t, 10*time.Second, "npm test asks after the edit", func() bool { return f.Evaluate("npm test").Decision == approval.Ask })

	// A bad edit keeps the rules in force.
	if err := os.WriteFile(path, []byte(`{"npm test": tru`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Write and rename, as editors do.
	tmp := filepath.Join(dir, "rules.json.tmp")
	if err := os.WriteFile(tmp, []byte(`{"make": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "make runs after the rename", func() bool { return f.Evaluate("make all").Decision == approval.Run })
	if got := f.Evaluate("npm test").Decision; got != approval.Ask {
		t.Errorf("npm test = %s after its rule left", got)
	}

	if err := f.AlwaysAllow("git push"); err != nil {
		t.Fatal(err)
	}
	if got := f.Evaluate("git push origin").Decision; got != approval.Run {
		t.Errorf("git push = %s after AlwaysAllow", got)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"make": true`) || !strings.Contains(string(data), `"git push": true`) {
		t.Errorf("rules file after AlwaysAllow:\n%s", data)
	}
	// SIGHUP's Reload reads it too.
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
}

// TestAlwaysAllowCreates: a rules file that does not exist yet is created.
func TestAlwaysAllowCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	f, err := approval.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.AlwaysAllow("rm"); err != nil {
		t.Fatal(err)
	}
	if got := f.Evaluate("rm x").Decision; got != approval.Run {
		t.Errorf("rm = %s after AlwaysAllow", got)
	}
	if _, err := approval.Open(path, nil); err != nil {
		t.Errorf("reopen: %v", err)
	}
	noFile, _ := approval.Open("", nil)
	if err := noFile.AlwaysAllow("rm"); err == nil {
		t.Error("AlwaysAllow without a rules file: no error")
	}
}
