package cli

import (
	"context"
	"io"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/buildinfo"
)

const mcpAbout = `Serve termhost's terminals to a coding agent over the Model Context Protocol
on stdin and stdout: the agent opens terminals on the running termhost
server, runs commands in them (exit code, duration and output as text), types
into interactive programs and reads the screen, while you watch live in the
browser and can take control at any moment (the agent's input then fails
until you hand the terminal back).

The agent reaches the server like the other commands (--server or
$TERMHOST_SERVER, the owner token from the token file or $TERMHOST_TOKEN),
with one AHP connection per MCP session, shown as "Agent · <its name>". By
default it may only use the terminals it opened; --allow-any-terminal lets it
use every terminal. It never sees share links or the token.

Before it runs a command line the rules do not allow (--approve, by default:
read-only commands run, anything else asks), it asks you: the browser shows
the command with Approve and Deny (or termhost approvals / approve / deny),
and nothing is typed until you approve. It never types at a password prompt.

Configure your agent to start it, e.g. claude mcp add termhost -- termhost mcp
(see the README, "Let an agent use your terminals").`

const mcpExamples = `  termhost mcp
  termhost mcp --allow-any-terminal
  termhost mcp --approve-rules ~/.config/termhost/approve.json
  termhost mcp --server http://127.0.0.1:7790`

// mcpCommand is "termhost mcp".
func (a *app) mcpCommand(args []string) int {
	f := newCmdFlags("mcp", "mcp [flags]", mcpAbout, mcpExamples)
	anyTerm := f.Bool("allow-any-terminal", false, "let the agent use every terminal of the server, not only those it opened")
	var ao agent.ApproveOptions
	f.StringVar(&ao.Mode, "approve", agent.ApproveRules, agent.ApproveUsage)
	f.StringVar(&ao.Rules, "approve-rules", "", agent.ApproveRulesUsage)
	if _, code, ok := f.parse(a, args, false); !ok {
		return code
	}
	if err := ao.Check(); err != nil {
		return a.failf("mcp", "%v", err)
	}
	base, err := client.ParseServer(f.conn.server)
	if err != nil {
		return a.failf("mcp", "--server: %v (want e.g. http://127.0.0.1:7681)", err)
	}
	tok, err := a.resolveToken(f.conn, base)
	if err != nil {
		return a.failf("mcp", "%v", err)
	}
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rules, stopRules, err := ao.OpenRules(log)
	if err != nil {
		return a.failf("mcp", "%v", err)
	}
	defer stopRules()
	ag := agent.New(agent.Config{
		Base: base, AllowAnyTerminal: *anyTerm, Logger: log, Version: buildinfo.Release, Approve: ao.Mode, Rules: rules,
		Dial: func(ctx context.Context, opts client.Options) (*client.Client, error) {
			opts.Token = tok
			if a.liveness != nil {
				a.liveness(&opts)
			}
			dctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
			defer cancel()
			return client.Dial(dctx, base.String(), opts)
		},
		Hosts: func(ctx context.Context) (ext.HostList, error) {
			l, _, err := a.fetchHosts(ctx, f.conn)
			return l, err
		},
		// Another host gets its own token alone, never the home host's.
		DialHost: func(ctx context.Context, h ext.Host, opts client.Options) (*client.Client, error) {
			opts.Token = strings.TrimSpace(a.env(agent.HostTokenVar(h.Name)))
			if a.liveness != nil {
				a.liveness(&opts)
			}
			dctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
			defer cancel()
			return client.Dial(dctx, strings.TrimSuffix(h.URL, "/"), opts)
		},
	})
	defer ag.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := ag.Server().Run(ctx, &mcp.IOTransport{Reader: a.stdin, Writer: nopCloser{a.stdout}}); err != nil && ctx.Err() == nil {
		return a.failf("mcp", "%v", err)
	}
	return exitOK
}

// nopCloser keeps the MCP transport from closing this process's stdout.
type nopCloser struct{ w io.Writer }

func (n nopCloser) Write(p []byte) (int, error) { return n.w.Write(p) }
func (nopCloser) Close() error                  { return nil }
