package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
)

const runAbout = `Run a command in a new terminal on a running termhost server, so that it
can be watched (and driven) from the browser while it runs here: the
terminal's URL <server>/t/<id> is printed on stderr, the command's output
streams to stdout, and termhost run exits with the command's exit code. The
command is run directly, without a shell: pass "sh -c '…'" for shell syntax.

When stdin and stdout are a terminal, it is put in raw mode and what you type
goes to the command (Ctrl-C included); its size follows this window. Detach
with Ctrl-\ Ctrl-\ or ~. after Enter (see termhost attach --help): the
command keeps running and run exits 0. Otherwise Ctrl-C (SIGINT) is sent on
to the command as Ctrl-C input, and SIGTERM, SIGHUP or SIGQUIT end run while
the command keeps running.

The terminal stays on the server after the command exits, until closed in
the browser or with termhost kill; with --record its page then offers a
Replay of the recording, command by command.`

const runExamples = `  termhost run -- make build
  termhost run --name tests --share viewer --ttl 24h -- go test ./...
  termhost run --record -- make build
  termhost run -- sh -c 'for i in 1 2 3; do echo $i; sleep 1; done; exit 4'; echo "exit $?"
  termhost run --server http://127.0.0.1:7790 --cwd ~/src/app -- npm run dev`

// runCommand is "termhost run".
func (a *app) runCommand(args []string) int {
	f := newCmdFlags("run", "run [flags] [--] CMD [ARGS…]", runAbout, runExamples)
	name := f.String("name", "", "title of the terminal (default: the command's name)")
	cwd := f.String("cwd", "", "working directory of the command on the server (default: the current directory\n      when the server is on this machine, else the server's default)")
	role := f.String("share", "", "also create a share link with this role: viewer (read-only, the safe choice) or driver\n      (full shell access as the server's Unix user: it can read the owner token and become owner)")
	ttlFlag := f.String("ttl", defaultShareTTL, "lifetime of the --share link: e.g. 1h, 24h, 7d, or 0 for no expiry")
	record := f.Bool("record", false, "record the terminal on the server as an asciicast v2 file: <terminal URL>/recording.cast\n      (and /output.txt as plain text), kept until the terminal is closed")
	host := f.String("host", "", "start the command on this host of the server's hosts file (`NAME`), with that host's own\n      token from TERMHOST_TOKEN_<NAME> (the name upper-cased, - and . as _), never the server's")
	pos, code, ok := f.parse(a, args, true)
	if !ok {
		return code
	}
	if *host != "" {
		if code, ok := a.useHost("run", f.conn, *host); !ok {
			return code
		}
	}
	if len(pos) == 0 || pos[0] == "" {
		return a.failf("run", "no command given (termhost run [flags] -- CMD [ARGS…])")
	}
	if *role != "" {
		if err := checkRole(*role); err != nil {
			return a.failf("run", "--share: %v", err)
		}
	}
	ttl, err := parseTTL(*ttlFlag)
	if err != nil {
		return a.failf("run", "--ttl: %v", err)
	}

	ctx := context.Background()
	c, base, code := a.connect(ctx, "run", f.conn, client.Options{InitialSubscriptions: []string{ahp.RootURI}, MirrorBytes: -1})
	if c == nil {
		return code
	}
	defer func() { _ = c.Close() }()

	dir := *cwd
	if dir == "" && client.IsLoopback(base) {
		dir, _ = os.Getwd()
	}
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return a.failf("run", "--cwd: %v", err)
		}
	}
	id := client.RandomID(6)
	uri := ahp.TerminalURI(id)
	params, err := createParams(uri, c.ClientID(), *name, dir, pos, a.stdout)
	if err != nil {
		return a.failf("run", "%v", err)
	}
	if *record { // termhost's _meta extension; a server without it ignores it
		params.Meta, _ = json.Marshal(map[string]any{ext.MetaCommand: pos, ext.MetaRecord: true})
	}
	cctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
	defer cancel()
	if _, err := c.Call(cctx, ahp.MethodCreateTerminal, params); err != nil {
		return a.fail("run", base, err)
	}
	termURL := client.TerminalURL(c.LinkBase(), id)
	fmt.Fprintf(a.stderr, "termhost: terminal %s\n", termURL)
	if *record {
		fmt.Fprintf(a.stderr, "termhost: recording %s/recording.cast\n", termURL)
	}
	if *role != "" {
		sh, err := createShare(cctx, c, id, *role, ttl)
		if err != nil {
			// A build nobody asked to run unshared is not left behind.
			_, _ = c.Call(cctx, ahp.MethodDisposeTerminal, ahp.ChannelParams{Channel: uri})
			return a.fail("run", base, err)
		}
		fmt.Fprintf(a.stderr, "termhost: share link (%s): %s\n", describeShare(sh), sh.URL)
	}
	snap, err := c.Subscribe(cctx, uri)
	if err != nil {
		return a.fail("run", base, err)
	}
	interactive := isTerminal(a.stdin) && isTerminal(a.stdout)
	s := &session{a: a, c: c, cmd: "run", uri: uri, id: id, url: termURL, base: base, forwardStdin: interactive, created: true}
	return s.stream(snap)
}

// createParams builds the createTerminal request of run: the command in
// termhost's _meta extension, the client's claim, the size of this terminal
// (else 80×24).
func createParams(uri, clientID, name, dir string, argv []string, stdout any) (ahp.CreateTerminalParams, error) {
	meta, err := json.Marshal(map[string][]string{ext.MetaCommand: argv})
	if err != nil {
		return ahp.CreateTerminalParams{}, err
	}
	claim := ahp.ClientClaim(clientID)
	p := ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Cols: 80, Rows: 24, Meta: meta}
	if cols, rows, ok := termSize(stdout); ok {
		p.Cols, p.Rows = cols, rows
	}
	if name != "" {
		p.Name = &name
	}
	if dir != "" {
		p.Cwd = ahp.FileURI(dir)
	}
	return p, nil
}
