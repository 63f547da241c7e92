package handlers_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

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

// TestPresenceOfACrowd: past ext.CrowdThreshold viewers, presence names
// the owner and the driver and counts the viewers, to everyone and to each
// joiner; below it again, it names everyone. A viewer joining the crowd
// gets the end of the history, the owner all of it.
func TestPresenceOfACrowd(t *testing.T) {
	ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) { hc.Budgets.RequestBurst = 1000 })
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
