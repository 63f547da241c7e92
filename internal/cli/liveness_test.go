package cli

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/testserver"
)

// TestRunNoticesDeadLink: termhost run behind a path
// that stops forwarding without closing (a frozen proxy) says it lost the
// connection within the ping interval + timeout, and once the path is back
// prints every line exactly once.
func TestRunNoticesDeadLink(t *testing.T) {
	const (
		interval = 100 * time.Millisecond
		timeout  = 300 * time.Millisecond
		slack    = 2 * time.Second
	)
	ts := newTestServer(t)
	p := testserver.NewProxy(t, ts.Listener.Addr().String())
	file, _, open := newGate(t)
	script := `i=0; while [ ! -e ` + file + ` ]; do i=$((i+1)); echo line-$i; sleep 0.02; done; exit 6`
	a, out, errOut := testApp(t, map[string]string{"TERMHOST_SERVER": p.URL(), "TERMHOST_TOKEN": testToken})
	a.liveness = func(o *client.Options) { o.PingInterval, o.PingTimeout = interval, timeout }
	done := make(chan int, 1)
	go func() { done <- a.runCommand([]string{"--", "sh", "-c", script}) }()

	waitFor(t, "line-3", func() bool { return strings.Contains(out.String(), "line-3\r\n") })
	p.Freeze()
	frozen := time.Now()
	waitFor(t, "the dead link reported", func() bool { return strings.Contains(errOut.String(), "lost the connection to "+p.URL()) })
	if took, bound := time.Since(frozen), interval+timeout+slack; took > bound {
		t.Errorf("dead link reported after %s, want within %s", took, bound)
	}
	p.Resume()
	waitFor(t, "the reconnect", func() bool { return strings.Contains(errOut.String(), "termhost: reconnected\n") })
	before := strings.Count(out.String(), "\n")
	waitFor(t, "more output", func() bool { return strings.Count(out.String(), "\n") > before+3 })
	open()
	if code := await(t, done); code != 6 {
		t.Errorf("run exit = %d, want 6 (stderr %q)", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\r\n"), "\r\n")
	for i, l := range lines {
		if want := "line-" + strconv.Itoa(i+1); l != want {
			t.Fatalf("stdout line %d = %q, want %q (a gap or a repeat):\n%q", i+1, l, want, out.String())
		}
	}
}
