package hosts_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/hosts"
	"github.com/termhost/termhost/internal/poll"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestParse: names, URLs (normalized to end with a slash), comments and
// blank lines; every bad line is an error naming file:line.
func TestParse(t *testing.T) {
	got, err := hosts.Parse([]byte("# the team\n\n box2\thttps://Dev.Corp/box2 # build box\nbox3 http://127.0.0.1:8080\nb_4.x-y https://b4.tail.ts.net/term/\n"), "hosts")
	if err != nil {
		t.Fatal(err)
	}
	want := []ext.Host{{Name: "box2", URL: "https://dev.corp/box2/"}, {Name: "box3", URL: "http://127.0.0.1:8080/"}, {Name: "b_4.x-y", URL: "https://b4.tail.ts.net/term/"}}
	if len(got) != len(want) {
		t.Fatalf("Parse = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("host %d = %v, want %v", i, got[i], want[i])
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"box2\n", `f:1: want "NAME URL", got 1 fields`},
		{"\nbox2 https://a/ extra\n", "f:2: want"},
		{"_box https://a/\n", `f:1: bad host name "_box"`},
		{strings.Repeat("a", 64) + " https://a/\n", "f:1: bad host name"},
		{"box é\n", "f:1: host box:"},
		{"box /box2/\n", "f:1: host box: \"/box2/\" is not an absolute URL"},
		{"box ftp://a/\n", "not an http or https URL"},
		{"box https://me:pw@a/\n", "has user info"},
		{"box https://a/?x=1\n", "query or a fragment"},
		{"box https://a/ # ok\nbox https://b/\n", "f:2: host box is named twice (first on line 1)"},
		{"a https://a/\nb https://A/\n", "f:2: https://a/ is listed twice"},
	} {
		if _, err := hosts.Parse([]byte(tc.text), "f"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", tc.text, err, tc.want)
		}
	}
}

// TestDefaultName: the machine's name cut to a valid host name.
func TestDefaultName(t *testing.T) {
	for in, want := range map[string]string{
		"devbox":                "devbox",
		"dev-box.corp.example":  "dev-box.corp.example",
		"box 1":                 "box",
		"":                      "termhost",
		"-x":                    "termhost",
		strings.Repeat("a", 70): strings.Repeat("a", 63),
		"münchen":               "m",
	} {
		if got := hosts.DefaultName(in); got != want || !hosts.ValidName(got) {
			t.Errorf("DefaultName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestListHomeAndReload: the home host is left out (by name or by public
// URL); a change notifies once; a bad file keeps the list.
func TestListHomeAndReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("box1 https://x/one\nhome https://dev.corp/home/\nbox2 https://x/two/\n")
	l, err := hosts.Open(path, "box1", "https://dev.corp/home", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Current(); got.Home.Name != "box1" || len(got.Hosts) != 1 || got.Hosts[0].Name != "box2" {
		t.Fatalf("Current = %+v, want box2 alone", got)
	}
	var calls []ext.HostList
	remove := l.OnChange(func(h ext.HostList) { calls = append(calls, h) })
	defer remove()
	if err := l.Reload(); err != nil || len(calls) != 0 {
		t.Fatalf("Reload of the same file: %v, %d notices; want none", err, len(calls))
	}
	write("box3 https://x/three/\n")
	if err := l.Reload(); err != nil || len(calls) != 1 || calls[0].Hosts[0].Name != "box3" {
		t.Fatalf("Reload: %v, %+v", err, calls)
	}
	write("box3 https://x/three/\nbad/name https://x/\n")
	if err := l.Reload(); err == nil || !strings.Contains(err.Error(), path+":2:") {
		t.Fatalf("Reload of a bad file = %v, want an error at %s:2", err, path)
	}
	if got := l.Current(); len(got.Hosts) != 1 || got.Hosts[0].Name != "box3" || len(calls) != 1 {
		t.Errorf("after a bad file: %+v, %d notices; want box3 kept", got, len(calls))
	}
}

// TestListWatched: a write in place is seen by the watcher.
func TestListWatched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte("box2 https://x/two/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := hosts.Open(path, "box1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	wait, err := l.Watch(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() { cancel(); wait() }()
	if err := os.WriteFile(path, []byte("box2 https://x/two/\nbox3 https://x/three/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, poll.Long, "box3 listed", func() bool { return len(l.Current().Hosts) == 2 })
}
