package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// The tests with a rig run in parallel: each has its own server and shells
// (newRig), and they mostly wait for shells, not for the CPU. Those that
// render costly output, or bound how long something takes, run alone.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is an MCP client connected in memory to the agent, which talks AHP
// to a real in-process termhost whose shell is bash with shell integration.
type rig struct {
	ts    *testserver.Server
	proxy *testserver.Proxy // the agent's AHP connections go through it
	cs    *mcp.ClientSession
}

func newRig(t *testing.T, allowAny bool) *rig {
	t.Helper()
	return newRigWith(t, func(c *agent.Config) { c.AllowAnyTerminal = allowAny })
}

// newRigWith is newRig with the agent's Config set by configure.
func newRigWith(t *testing.T, configure func(*agent.Config), opts ...testserver.Option) *rig {
	t.Helper()
	ts := testserver.New(t, append([]testserver.Option{testserver.Terminals(func(c *terminals.Config) {
		c.ShellIntegration, c.ShellArgs = true, nil
	})}, opts...)...)
	base, err := client.ParseServer(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testserver.NewProxy(t, ts.Listener.Addr().String())
	cfg := agent.Config{Base: base, Logger: testserver.Logger(t),
		Dial: func(ctx context.Context, opts client.Options) (*client.Client, error) {
			opts.Token = ts.Token
			return client.Dial(ctx, proxy.URL(), opts)
		}}
	configure(&cfg)
	ag := agent.New(cfg)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := ag.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
		ag.Close()
	})
	return &rig{ts: ts, proxy: proxy, cs: cs}
}

// call calls a tool and returns its structured result and text; isError
// says whether it failed (as a tool error, never a protocol error).
func (r *rig) call(t *testing.T, name string, args map[string]any) (out map[string]any, text string, isError bool) {
	t.Helper()
	out, text, isError, err := r.try(t, name, args)
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", name, args, err)
	}
	return out, text, isError
}

// try is call for another goroutine than the test's: a protocol error is
// returned, not fatal.
func (r *rig) try(t *testing.T, name string, args map[string]any) (out map[string]any, text string, isError bool, err error) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &out)
	}
	return out, b.String(), res.IsError, nil
}

// ok calls a tool that must succeed.
func (r *rig) ok(t *testing.T, name string, args map[string]any) (map[string]any, string) {
	t.Helper()
	out, text, isErr := r.call(t, name, args)
	if isErr {
		t.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	return out, text
}

// fails calls a tool that must fail with a message containing want.
func (r *rig) fails(t *testing.T, name string, args map[string]any, want string) string {
	t.Helper()
	_, text, isErr := r.call(t, name, args)
	if !isErr || !strings.Contains(text, want) {
		t.Fatalf("%s(%v) = %q (isError %v), want an error containing %q", name, args, text, isErr, want)
	}
	return text
}

// open opens a shell terminal and returns its id.
func (r *rig) open(t *testing.T) string {
	t.Helper()
	out, text := r.ok(t, "open_terminal", map[string]any{"name": "agent test"})
	if out["shellIntegration"] != true {
		t.Fatalf("open_terminal: no shell integration: %s %v", text, out)
	}
	return out["id"].(string)
}

func num(v any) int { f, _ := v.(float64); return int(f) }
