package handlers_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/terminals"
	"github.com/termhost/termhost/terminals/hub"
)

// waitCrowd waits for the next x-termhost/presence notification of uri
// whose members read want and which counts viewers (0: none counted), and
// returns its frame's size.
func waitCrowd(t *testing.T, c *client, uri string, want []string, viewers int) int {
	t.Helper()
	size := 0
	c.NextFrame(fmt.Sprintf("presence %v and %d viewers", want, viewers), func(m *ahp.Message) bool {
		var p terminals.PresenceList
		if m.Method != terminals.MethodPresence || json.Unmarshal(m.Params, &p) != nil || p.Channel != uri {
			return false
		}
		size = len(m.Params)
		return slices.Equal(describe(p.Members), want) && p.Viewers == viewers
	})
	return size
}

// readerLimits lets a crowd's test clients, read on a loaded machine,
// fall behind without being evicted (a queue bound, a ping unanswered,
// a write timeout): eviction has tests of its own, and a crowd that
// loses a member is no longer the crowd the test counts.
func readerLimits(hc *handlersConfig) {
	hc.SendQueue, hc.PingInterval, hc.WriteTimeout = 64<<20, noPings, time.Hour
}

// TestPresenceOfACrowd: past ext.CrowdThreshold viewers, presence names
// the owner and the driver and counts the viewers, to everyone and to each
// joiner; below it again, it names everyone. A viewer joining the crowd
// gets the end of the history, the owner all of it.
func TestPresenceOfACrowd(t *testing.T) {
	ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) {
		hc.Budgets.RequestBurst = 1000
		readerLimits(hc)
	})
	owner := ts.dial(t, "User-Agent", firefoxUA)
	owner.Initialize("1.0.0", "web-owner")
	uri, _ := owner.CreateTerminal("talk", "web-owner", nil)
	alice := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", "alice"))
	alice.Initialize("1.0.0", "web-alice")
	alice.Subscribe(uri)
	named := []string{"Owner/owner/Firefox on Linux/true", "alice/driver//false"}
	tok := shareLabelled(t, owner, uri, "viewer", "audience")
	var audience []*client
	join := func() *client {
		v := ts.dial(t, "Authorization", "Bearer "+tok)
		v.Initialize("1.0.0", fmt.Sprintf("web-viewer-%03d", len(audience)))
		v.Subscribe(uri)
		audience = append(audience, v)
		return v
	}
	for range ext.CrowdThreshold {
		join()
	}
	everyone := slices.Clone(named)
	for range ext.CrowdThreshold {
		everyone = append(everyone, "audience/viewer//false")
	}
	waitCrowd(t, owner, uri, everyone, 0)

	// About 200 KB of history: a viewer joining the crowd gets its end.
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "seq 1 30000; echo do''ne\r"})
	owner.WaitOutput(uri, "done\r\n")
	history := func(snap ahp.Snapshot) int {
		b, _ := json.Marshal(snap.State)
		return len(b)
	}
	if n := history(owner.Subscribe(uri)); n < 150<<10 {
		t.Fatalf("the owner's snapshot holds %d bytes, want the whole history", n)
	}
	v := ts.dial(t, "Authorization", "Bearer "+tok)
	v.Initialize("1.0.0", fmt.Sprintf("web-viewer-%03d", len(audience)))
	if n := history(v.Subscribe(uri)); n > hub.CrowdScrollback+16<<10 {
		t.Errorf("a viewer joining the crowd got %d bytes of history, want at most about %d", n, hub.CrowdScrollback)
	}
	audience = append(audience, v)
	last := v
	for name, c := range map[string]*client{"owner": owner, "the driver": alice, "a viewer": audience[0], "the joiner": last} {
		if size := waitCrowd(t, c, uri, named, ext.CrowdThreshold+1); size > 1024 {
			t.Errorf("%s: the crowd's presence is %d bytes", name, size)
		}
	}

	_ = last.Conn().CloseNow()
	waitCrowd(t, owner, uri, everyone, 0)
}

// crowdOutput is the output of the command crowdCommand prints, from its
// echo to its end, in a client's output of uri.
const crowdCommand = "echo sta''rt; seq 1 30000; echo do''ne\r"

func crowdOutput(t *testing.T, c *client, uri string) string {
	t.Helper()
	out := c.Output(uri)
	i := strings.Index(out, "echo sta''rt")
	j := strings.Index(out, "done\r\n")
	if i < 0 || j < i {
		t.Fatalf("no output from the command to its end: %d bytes", len(out))
	}
	return out[i : j+len("done\r\n")]
}

// joinCrowd has n viewers join uri on a viewer link, each asking for binary
// data messages as the browser does, each read by its own goroutine from
// its dial on (ahptest's reader: every client drains its socket all along).
func joinCrowd(t *testing.T, ts *testServer, owner *client, uri string, n int) []*client {
	t.Helper()
	tok := shareLabelled(t, owner, uri, "viewer", "audience")
	var audience []*client
	for i := range n {
		v := ts.dial(t, "Authorization", "Bearer "+tok)
		v.InitializeWith("1.0.0", fmt.Sprintf("web-viewer-%03d", i), map[string]any{ext.CapabilityBinaryData: map[string]any{}})
		v.Subscribe(uri)
		audience = append(audience, v)
	}
	return audience
}

// TestCrowdOutputPaced: a terminal's output reaches each of a crowd's
// viewers (ext.CrowdThreshold subscribers or more) at the crowd's cadence,
// every byte, in order, once; the holder's and a driver's output never
// waits for it. With the cadence stopped, the owner and the driver still
// get all the output at once, and each viewer gets what waited for it in
// one message when it is woken (here: the crowd shrinks below the
// threshold); with the cadence running, every viewer gets every byte the
// holder got.
func TestCrowdOutputPaced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cycle time.Duration
	}{
		{"the cadence stopped", time.Hour}, // no tick comes during the test
		{"the cadence running", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, func(tcfg *terminals.Config, hc *handlersConfig) {
				hc.Budgets.RequestBurst = 1000
				readerLimits(hc)
				tcfg.CrowdCycle = tc.cycle
			})
			owner := ts.dial(t)
			owner.InitializeWith("1.0.0", "web-owner", map[string]any{ext.CapabilityBinaryData: map[string]any{}})
			uri, _ := owner.CreateTerminal("crowd", "web-owner", nil)
			driver := ts.dial(t, "Authorization", "Bearer "+shareLabelled(t, owner, uri, "driver", "alice"))
			driver.Initialize("1.0.0", "web-alice")
			driver.Subscribe(uri)
			audience := joinCrowd(t, ts, owner, uri, ext.CrowdThreshold)
			// Presence naming all of them reached everyone before the
			// output: nothing but output comes to the viewers during it.
			for _, c := range append([]*client{owner}, audience...) {
				c.WaitFrame("presence of everyone", func(m *ahp.Message, _ int) bool {
					var p terminals.PresenceList
					return m.Method == terminals.MethodPresence && json.Unmarshal(m.Params, &p) == nil && p.Channel == uri &&
						len(p.Members) == 2+ext.CrowdThreshold
				})
			}

			owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": crowdCommand})
			owner.WaitOutput(uri, "done\r\n")
			driver.WaitOutput(uri, "done\r\n")
			want := crowdOutput(t, owner, uri)
			if got := crowdOutput(t, driver, uri); got != want {
				t.Fatalf("the driver got %d bytes of the command's output, the owner %d", len(got), len(want))
			}
			if !strings.Contains(want, "\n1\r\n2\r\n3\r\n") || !strings.Contains(want, "\n29999\r\n30000\r\n") {
				t.Fatalf("the owner's output of the command is not seq's: %q…", want[:min(len(want), 80)])
			}

			watching := audience
			if tc.cycle == time.Hour {
				// Three leave: 2 + 47 subscribers, no crowd; everyone left is
				// woken for what waited.
				for _, v := range audience[:3] {
					_ = v.Conn().CloseNow()
				}
				watching = audience[3:]
			}
			for i, v := range watching {
				v.WaitOutput(uri, "done\r\n")
				if got := crowdOutput(t, v, uri); got != want {
					t.Fatalf("viewer %d got %d bytes of the command's output, the owner %d", i, len(got), len(want))
				}
				if tc.cycle != time.Hour {
					continue
				}
				// seq's output waited for the viewer's writer, which sent it
				// at once, joined in one message (from line 2000 on: the
				// writer, just done with the presence, may have been still
				// running when the first lines came).
				whole := false
				for _, e := range v.Envelopes() {
					if e.Channel == uri && e.Action.Type == ahp.TerminalData &&
						strings.Contains(e.Action.Data, "\n2000\r\n2001\r\n") && strings.Contains(e.Action.Data, "\n30000\r\ndone\r\n") {
						whole = true
					}
				}
				if !whole {
					t.Fatalf("viewer %d got seq's output in %d binary messages, not lines 2000 to the end in one: it was not paced", i, v.BinaryMessages())
				}
			}
		})
	}
}
