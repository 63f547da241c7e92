// Command termhost serves real shells to browsers and AHP clients over one
// WebSocket, and drives a running server from the command line.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/termhost/termhost/internal/buildinfo"
	"github.com/termhost/termhost/internal/cli"
	"github.com/termhost/termhost/internal/serve"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes of the dispatch itself; each command has its own.
const (
	exitOK    = 0
	exitUsage = 2 // an unknown command
)

func main() {
	buildinfo.Release = version
	os.Exit(runCLI(os.Args[1:]))
}

// runCLI dispatches to a subcommand (serve is the default) and returns the
// exit code.
func runCLI(args []string) int {
	name := "serve"
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		name = "help" // the overview, which points to serve --help
	case len(args) == 1 && (args[0] == "-version" || args[0] == "--version"):
		name = "version"
	case len(args) > 0 && !isFlag(args[0]):
		name, args = args[0], args[1:]
	}
	commands := map[string]func([]string) int{
		"serve":  serve.Command,
		"run":    cli.Run,
		"attach": cli.Attach,
		"ls":     cli.Ls,
		"share":  cli.Share,
		"kill":   cli.Kill,
		// Approvals of agents' and drivers' command lines.
		"approvals": cli.Approvals,
		"approve":   cli.Approve,
		"deny":      cli.Deny,
		"bench":     cli.Bench,
		"upgrade":   serve.Upgrade,
		"audit":     cli.Audit,
		// The probe an upgrading server runs on the new binary (not in help).
		"handover-check": serve.HandoverCheck,
		"mcp":            cli.MCP,
	}
	switch name {
	case "help":
		usage(os.Stdout)
		return exitOK
	case "version":
		buildinfo.Print(os.Stdout)
		return exitOK
	}
	command, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "termhost: unknown command %q (see termhost help)\n", name)
		return exitUsage
	}
	return command(args)
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

func usage(w io.Writer) {
	fmt.Fprint(w, `termhost — terminals in the browser, over the Agent Host Protocol

Usage:
  termhost [serve] [flags]   run the server (default)
  termhost run [flags] -- CMD [ARGS…]
                             run a command in a new terminal on the server, stream
                             its output, exit with its exit code
  termhost attach [--take] <id|url>
                             attach this terminal to a server terminal (detach:
                             Ctrl-\ Ctrl-\; --take: take or ask for control)
  termhost ls [--all] [--json] [--preview]
                             list the server's terminals (--preview: their screens;
                             --all: every host's, see serve --hosts)
  termhost share <id|url> [--role viewer|driver] [--ttl 1h|24h|7d|0] [--label L]
                             create a share link for a terminal (default: viewer,
                             24h; --label names whoever gets it)
  termhost kill <id|url>     close a terminal (host/id: on another host, for attach
                             and share too)
  termhost approvals [--json]
                             list the command lines agents and drivers wait to run
  termhost approve [--always] <id>
  termhost deny [--reason R] <id>
                             answer one
  termhost mcp               let a coding agent use terminals over MCP (stdio)
  termhost bench [--quick]   measure speed and memory against the raw pty
  termhost audit [--who W] [--terminal T] [--event E] [--since S] [--until U] [--json]
                             read the audit trail of serve --audit-log
  termhost upgrade           hand the running server's shells to the binary now
                             installed, without ending them (same as SIGUSR2)
  termhost version           the version, commit and Go version (also --version)
  termhost help              this text (also --help)

Run "termhost serve --help" for the server's flags and "termhost COMMAND --help"
for a client command's. The client commands reach the server at --server
(default http://127.0.0.1:7681, or $TERMHOST_SERVER).

Every flag can also be set in the environment: TERMHOST_<FLAG> for serve,
bench and the connection flags, TERMHOST_<COMMAND>_<FLAG> for a client
command's own flags (e.g. TERMHOST_RUN_CWD); --help shows each name.
`)
}
