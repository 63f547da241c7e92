package handlers_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/bench/wirecount"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// quiet runs cat instead of a shell: no prompt, title or shell-integration
// action ever moves a byte unless a test types, so byte counts are exact.
var quiet = testserver.Terminals(func(c *terminalsConfig) { c.Shell, c.ShellArgs = "/bin/cat", nil })

// presenceCount returns a predicate for the next x-termhost/presence of uri
// listing n members.
func presenceCount(uri string, n int) func(*ahp.Message) bool {
	return func(m *ahp.Message) bool {
		var p terminals.PresenceList
		return m.Method == terminals.MethodPresence && json.Unmarshal(m.Params, &p) == nil && p.Channel == uri && len(p.Members) == n
	}
}

// TestJoinCostFlat: what a join and a leave on one
// terminal cost an owner tab (root and that terminal subscribed), byte for
// byte on the wire, is the same with 1 terminal as with 50 terminals and
// 10 viewers on another one; those viewers receive nothing. (The full
// catalogue with every terminal's presence went to every root subscriber.)
func TestJoinCostFlat(t *testing.T) {
	t.Parallel()
	perJoin := map[int]int64{}
	for _, n := range []int{1, 50} {
		t.Run(fmt.Sprintf("%d terminals", n), func(t *testing.T) {
			ts := newServer(t, quiet)
			var wire atomic.Int64
			h := http.Header{}
			h.Set("Authorization", "Bearer "+ownerToken)
			owner := ahptest.MustDial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", ahptest.Options{Header: h, HTTPClient: wirecount.Client(&wire)})
			owner.Initialize("1.0.0", "owner-tab", ahp.RootURI)
			var uris []string
			for i := range n {
				uri := ahp.TerminalURI(fmt.Sprintf("t%02d", i))
				owner.MustCall(ahp.MethodCreateTerminal, map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": "owner-tab"}})
				uris = append(uris, uri)
			}
			var others []*client
			if n > 1 {
				tok := shareLabelled(t, owner, uris[1], "viewer", "crowd")
				for i := range 10 {
					v := ts.dial(t, "Authorization", "Bearer "+tok)
					v.Initialize("1.0.0", fmt.Sprintf("viewer-%02d", i), ahp.RootURI, uris[1])
					others = append(others, v)
				}
				for _, v := range others {
					v.NextFrame("the crowd's presence", presenceCount(uris[1], 10))
				}
			}
			tok := shareLabelled(t, owner, uris[0], "driver", "alice")
			owner.Subscribe(uris[0])
			owner.NextFrame("the owner's own presence", presenceCount(uris[0], 1))
			seen := make([]int, len(others))
			for i, v := range others {
				seen[i] = len(v.Frames())
			}

			before := wire.Load()
			alice := ts.dial(t, "Authorization", "Bearer "+tok)
			alice.Initialize("1.0.0", "alice-tab", ahp.RootURI, uris[0])
			owner.NextFrame("alice in presence", presenceCount(uris[0], 2))
			_ = alice.Conn().Close(websocket.StatusNormalClosure, "")
			owner.NextFrame("alice gone from presence", presenceCount(uris[0], 1))
			perJoin[n] = wire.Load() - before

			for i, v := range others {
				if got := len(v.Frames()); got != seen[i] {
					t.Errorf("a viewer of %s got %d frames when alice joined and left %s, want none", uris[1], got-seen[i], uris[0])
				}
			}
		})
	}
	if perJoin[1] == 0 || perJoin[1] != perJoin[50] {
		t.Errorf("a join and a leave cost an owner tab %d bytes with 1 terminal, %d with 50 terminals and 10 viewers elsewhere; want the same (and some)",
			perJoin[1], perJoin[50])
	}
}

// TestConnectionLimits: one share link, or the share
// links of one address, cannot open connections without bound: past the
// limit a new connection is closed with 4029 and a reason that says why.
// The owner is not limited.
func TestConnectionLimits(t *testing.T) {
	ts := newServer(t, quiet, testserver.Handlers(func(c *handlers.Config) { c.MaxLinkConns, c.MaxAddrConns = 2, 3 }))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("lim", "owner", nil)
	one, two := shareLabelled(t, owner, uri, "viewer", "one"), shareLabelled(t, owner, uri, "viewer", "two")

	open := func(tok, id string) *client {
		c := ts.dial(t, "Authorization", "Bearer "+tok)
		c.Initialize("1.0.0", id)
		return c
	}
	refused := func(what string, c *client, want string) {
		t.Helper()
		err := c.WaitClosed()
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4029 || !strings.Contains(ce.Reason, want) {
			t.Errorf("%s: closed with %v, want 4029 %q", what, err, want)
		}
	}
	open(one, "v1")
	open(one, "v2")
	third := ts.dial(t, "Authorization", "Bearer "+one)
	refused("a third connection of a link limited to 2", third, "too many connections of this share link (at most 2)")
	open(two, "v3")
	fourth := ts.dial(t, "Authorization", "Bearer "+two)
	refused("a fourth share-link connection from an address limited to 3", fourth, "too many share-link connections from this address (at most 3)")
	for i := range 4 {
		owner := ts.dial(t)
		owner.Initialize("1.0.0", fmt.Sprintf("owner-%d", i))
	}
}
