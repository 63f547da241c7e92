// Command termhost serves real shells to browsers and AHP clients over one
// WebSocket, and drives a running server from the command line.
package main

import (
	"fmt"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run dispatches to a subcommand; serve is the default.
func run(args []string) int {
	cmd := "serve"
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args)
	case "run":
		return runCommand(args)
	case "attach":
		return attachCommand(args)
	case "ls":
		return lsCommand(args)
	case "share":
		return shareCommand(args)
	case "kill":
		return killCommand(args)
	case "bench":
		return benchCommand(args)
	case "help":
		usage(os.Stdout)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "termhost: unknown command %q (see termhost help)\n", cmd)
		return 2
	}
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

func usage(w *os.File) {
	fmt.Fprint(w, `termhost — terminals in the browser, over the Agent Host Protocol

Usage:
  termhost [serve] [flags]   run the server (default)
  termhost run [flags] -- CMD [ARGS…]
                             run a command in a new terminal on the server, stream
                             its output, exit with its exit code
  termhost attach <id|url>   attach this terminal to a server terminal (detach: Ctrl-\ Ctrl-\)
  termhost ls [--json]       list the server's terminals
  termhost share <id|url> [--role viewer|driver] [--ttl 1h|24h|7d|0]
                             create a share link for a terminal
  termhost kill <id|url>     close a terminal
  termhost bench [--quick]   measure speed and memory against the raw pty
  termhost help              this text

Run "termhost serve --help" for the server's flags and "termhost COMMAND --help"
for a client command's. The client commands reach the server at --server
(default http://127.0.0.1:7681, or $TERMHOST_SERVER).
`)
}
