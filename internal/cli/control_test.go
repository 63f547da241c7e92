package cli

import (
	"encoding/json"
	"os"
	"os/user"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/agent"
)

// waitControlNotice takes c's events until an x-termhost/controlRequest of
// status arrives.
func waitControlNotice(t *testing.T, c *client.Client, status string) ext.ControlNotice {
	t.Helper()
	var n ext.ControlNotice
	nextUntil(t, c, "controlRequest "+status, func(ev client.Event) bool {
		if ev.Kind != client.EventNotification || ev.Method != ext.NotifyControlRequest {
			return false
		}
		n = ext.ControlNotice{}
		_ = json.Unmarshal(ev.Params, &n)
		return n.Status == status
	})
	return n
}

// cliText is how attach names a termhost CLI of this user in presence.
func cliText() string {
	u, _ := user.Current()
	host, _ := os.Hostname()
	return u.Username + "@" + host + " (CLI)"
}

// heldShell is a terminal held by a connected owner client subscribed to
// it (so it is told of control requests), and a driver link labelled alice.
func heldShell(t *testing.T, ts *testServer, id string) (holder *client.Client, uri string, link ext.ShareInfo) {
	t.Helper()
	holder = ts.dial(t)
	ts.shell(t, holder, id, holder.ClientID())
	uri = ahp.TerminalURI(id)
	if _, err := holder.Subscribe(t.Context(), uri); err != nil {
		t.Fatal(err)
	}
	link, err := createShareLabelled(t.Context(), holder, id, "driver", "alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return holder, uri, link
}

// TestAttachTakeAsksTheHolder: attach --take through a driver link asks the
// connected holder, who is told who asks; once granted, attach types. The
// owner's attach --take takes control at once.
func TestAttachTakeAsksTheHolder(t *testing.T) {
	ts := newTestServer(t)
	holder, uri, link := heldShell(t, ts, "take")
	p := startPty(t, ts, 80, 24, "attach", "--take", link.URL)
	p.waitOutput("asked for control; waiting for the holder")
	asked := waitControlNotice(t, holder, "pending")
	if asked.From.Name != "alice" || asked.From.Kind != ext.KindDriver {
		t.Errorf("the holder was told %+v asks, want alice (driver)", asked.From)
	}
	if err := holder.AnswerControl(t.Context(), uri, asked.RequestID, true); err != nil {
		t.Fatal(err)
	}
	p.waitOutput("you have control; typing goes to the terminal")
	p.typeKeys("echo took-$((6*7))\r")
	p.waitOutput("took-42")
	granted, _ := ts.info(uri)

	owner := startPty(t, ts, 80, 24, "attach", "--take", ts.URL+"/t/take")
	waitFor(t, "the owner's attach --take to take control", func() bool {
		in, _ := ts.info(uri)
		return in.Claim != granted.Claim && in.Claim != ahp.ClientClaim(holder.ClientID())
	})
	p.waitOutput(cliText() + " has control now; watching read-only (attach --take asks for control)")
	owner.typeKeys("~.")
	p.typeKeys("~.")
	if code := p.exit(); code != 0 {
		t.Errorf("attach exit after ~. = %d, want 0", code)
	}
}

// TestAttachShowsRequests: the holder's attach shows who asks for control;
// Ctrl-\ y grants it.
func TestAttachShowsRequests(t *testing.T) {
	ts := newTestServer(t)
	creator, uri, link := heldShell(t, ts, "asked")
	p := startPty(t, ts, 80, 24, "attach", "--take", ts.URL+"/t/asked")
	waitFor(t, "attach --take to take the claim", func() bool {
		in, _ := ts.info(uri)
		return in.Claim.ClientID != creator.ClientID()
	})
	_, token, _ := strings.Cut(link.URL, "#share=")
	driver, err := client.Dial(t.Context(), ts.URL, client.Options{Token: token, InitialSubscriptions: []string{uri}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = driver.Close() })
	if r, err := driver.RequestControl(t.Context(), uri, true); err != nil || r.Status != ext.ControlPending {
		t.Fatalf("requestControl = %+v, %v; want pending", r, err)
	}
	p.waitOutput("alice (driver link) asks for control: Ctrl-\\ y grants")
	p.typeKeys("\x1cy")
	waitControlNotice(t, driver, "granted")
	if in, _ := ts.info(uri); in.Claim != ahp.ClientClaim(driver.ClientID()) {
		t.Errorf("claim = %+v, want the driver's", in.Claim)
	}
	p.waitOutput("control handed to alice (driver link)")
	p.typeKeys("~.")
	if code := p.exit(); code != 0 {
		t.Errorf("attach exit after ~. = %d, want 0", code)
	}
}

// TestLsPresence: ls counts who is connected to each terminal, and --json
// lists them by name (a CLI as user@host), never by clientId.
func TestLsPresence(t *testing.T) {
	ts := newTestServer(t)
	c, err := client.Dial(t.Context(), ts.URL, client.Options{Token: testToken, ClientInfo: ahp.Implementation{Name: "termhost-cli", Title: "bob@build1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	id := ts.shell(t, c, "here", c.ClientID())
	if _, err := c.Subscribe(t.Context(), ahp.TerminalURI(id)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "presence", func() bool { return len(agent.Presence(c)[ahp.TerminalURI(id)]) == 1 })
	code, stdout, stderr := call(t, ownerEnv(ts), "ls", "--json")
	if code != 0 {
		t.Fatalf("ls --json: exit %d, %s", code, stderr)
	}
	var got []lsEntry
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got) != 1 {
		t.Fatalf("ls --json = %s (%v)", stdout, err)
	}
	p := got[0].Presence
	raw, _ := json.Marshal(p)
	if len(p) != 1 || p[0].Name != "bob@build1" || p[0].Kind != ext.KindCLI || !p[0].Control || strings.Contains(string(raw), c.ClientID()) {
		t.Errorf("presence = %s, want bob@build1 (cli) in control, no clientId", raw)
	}
	code, stdout, _ = call(t, ownerEnv(ts), "ls")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	col := strings.Index(lines[0], "HERE")
	if code != 0 || len(lines) != 2 || col < 0 || len(lines[1]) <= col || lines[1][col] != '1' {
		t.Errorf("ls table:\n%s\nwant a HERE column with 1", stdout)
	}
	// Who has control, by name, never a clientId (an opaque id means
	// nothing to the person reading the list).
	if got[0].Control != "bob@build1 (CLI)" {
		t.Errorf("ls --json control = %q, want bob@build1 (CLI)", got[0].Control)
	}
	if col := strings.Index(lines[0], "CONTROL"); col < 0 || !strings.HasPrefix(lines[1][col:], "bob@build1 (CLI)") || strings.Contains(stdout, c.ClientID()) {
		t.Errorf("ls table:\n%s\nwant bob@build1 (CLI) under CONTROL and no clientId", stdout)
	}
}

// TestShareLabelFlag: share --label names who the link is for.
func TestShareLabelFlag(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "lbl", c.ClientID())
	code, stdout, stderr := call(t, ownerEnv(ts), "share", "--label", "alice", id)
	if code != 0 || !strings.Contains(stdout, "#share=") {
		t.Fatalf("share --label: exit %d, %q %q", code, stdout, stderr)
	}
	oneLine(t, "share --label", stderr, "(alice, viewer, expires")
}
