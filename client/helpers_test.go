package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/testserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testToken = testserver.OwnerToken

// newServer is the real router and terminal manager behind httptest.
func newServer(t *testing.T) *testserver.Server {
	t.Helper()
	return testserver.New(t)
}

// newProxy is a cuttable relay to target (host:port).
func newProxy(t *testing.T, target string) *testserver.Proxy {
	t.Helper()
	return testserver.NewProxy(t, target)
}

// dial connects a client that the test closes at cleanup.
func dial(t *testing.T, url string, opts client.Options) *client.Client {
	t.Helper()
	if opts.Token == "" {
		opts.Token = testToken
	}
	c, err := client.Dial(t.Context(), url, opts)
	if err != nil {
		t.Fatalf("Dial(%s): %v", url, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// createShell creates a bash terminal claimed by c and subscribes to it.
func createShell(t *testing.T, c *client.Client, id string) string {
	t.Helper()
	uri := ahp.TerminalURI(id)
	_, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: uri,
		Claim: &ahp.Claim{Kind: ahp.ClaimClient, ClientID: c.ClientID()}})
	if err != nil {
		t.Fatalf("createTerminal: %v", err)
	}
	if _, err := c.Subscribe(t.Context(), uri); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	return uri
}

// text is the whole output of a terminal state.
func text(st ahp.TerminalState) string {
	var b strings.Builder
	for _, p := range st.Content {
		b.WriteString(p.Text())
	}
	return b.String()
}

// waitEvent takes events until match accepts one (or fails the test at the
// deadline), returning every event taken.
func waitEvent(t *testing.T, c *client.Client, what string, match func(client.Event) bool) []client.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var seen []client.Event
	for {
		ev, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v (after %d events)", what, err, len(seen))
		}
		seen = append(seen, ev)
		if match(ev) {
			return seen
		}
	}
}

// waitOutput waits until c's mirror of channel holds s: at once when it
// does already (the subscribe's snapshot can hold a shell's first prompt,
// and then no action brings it), else up to the action that brings it.
func waitOutput(t *testing.T, c *client.Client, channel, what, s string) {
	t.Helper()
	if st, _ := c.Terminal(channel); strings.Contains(text(st), s) {
		return
	}
	waitEvent(t, c, what, outputContains(c, channel, s))
}

// outputContains matches an action event of channel after which c's
// mirror of it holds s (events carry no content: the mirror has it).
func outputContains(c *client.Client, channel, s string) func(client.Event) bool {
	return func(ev client.Event) bool {
		if ev.Kind != client.EventAction || ev.Channel != channel {
			return false
		}
		st, _ := c.Terminal(channel)
		return strings.Contains(text(st), s)
	}
}

func isAHPError(err error, code int) bool {
	var e *ahp.Error
	return errors.As(err, &e) && e.Code == code
}
