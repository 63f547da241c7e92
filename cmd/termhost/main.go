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
  termhost help              this text

Run "termhost serve --help" for the server's flags.
`)
}
