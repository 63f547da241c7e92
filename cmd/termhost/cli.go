package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// Exit codes of the client subcommands (run and attach also pass on the
// remote command's code).
const (
	exitOK    = 0
	exitFail  = 1 // the terminal ended without a code, or was closed
	exitUsage = 2 // bad arguments, bad server URL or token, unreachable server, AHP errors
)

// app is the process seen by a client subcommand; tests substitute its files.
type app struct {
	stdin  *os.File
	stdout io.Writer
	stderr io.Writer
	getenv func(string) (string, bool)
}

func newApp() *app {
	return &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.LookupEnv}
}

func (a *app) env(key string) string {
	v, _ := a.getenv(key)
	return v
}

// Entry points for main's subcommand switch.
func runCommand(args []string) int    { return newApp().run(args) }
func attachCommand(args []string) int { return newApp().attach(args) }
func lsCommand(args []string) int     { return newApp().ls(args) }
func shareCommand(args []string) int  { return newApp().share(args) }
func killCommand(args []string) int   { return newApp().kill(args) }

// cmdFlags is a subcommand's flag set. Unlike serve's, only the connection
// flags read the environment: TERMHOST_CWD or TERMHOST_NAME meant for the
// server must not leak into "termhost run".
type cmdFlags struct {
	*flag.FlagSet
	name     string // "run", "attach", …
	synopsis string // the usage line after "termhost"
	about    string
	examples string
	env      map[string]string // flag → environment variable
	conn     *connFlags
}

// connFlags are the flags every client subcommand has.
type connFlags struct {
	server     string
	tokenFile  string
	timeout    time.Duration
	explicit   bool   // --server was given (flag or environment)
	shareToken string // from a share link's URL: used instead of the owner token
}

func newCmdFlags(name, synopsis, about, examples string) *cmdFlags {
	f := &cmdFlags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), name: name, synopsis: synopsis,
		about: about, examples: examples, env: map[string]string{}, conn: &connFlags{}}
	f.SetOutput(io.Discard) // errors are reported in one line; --help prints usage
	f.StringVar(&f.conn.server, "server", client.DefaultServer, "the termhost server: an http or https `URL`, with its base path if any")
	f.StringVar(&f.conn.tokenFile, "token-file", "", "read the owner token from `FILE` (default: $TERMHOST_TOKEN, else the token file of a server on this machine)")
	f.DurationVar(&f.conn.timeout, "connect-timeout", 10*time.Second, "how long to wait for the server to connect and answer (a `duration` like 10s)")
	f.env["server"] = "TERMHOST_SERVER"
	f.env["token-file"] = "TERMHOST_TOKEN_FILE"
	return f
}

// usage writes the complete help of the subcommand.
func (f *cmdFlags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: termhost %s\n\n%s\n\nFlags:\n", f.synopsis, strings.TrimSpace(f.about))
	f.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		if name != "" {
			name = " " + name
		}
		fmt.Fprintf(w, "  --%s%s\n      %s", fl.Name, name, usage)
		if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" && fl.DefValue != "0s" {
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		if env := f.env[fl.Name]; env != "" {
			fmt.Fprintf(w, " [$%s]", env)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprint(w, `  --help
      this text

Environment:
  TERMHOST_SERVER      default for --server
  TERMHOST_TOKEN_FILE  default for --token-file
  TERMHOST_TOKEN       the owner token itself, used when no token file is given
  XDG_STATE_HOME       a server on this machine keeps its token in
                       $XDG_STATE_HOME/termhost/token (default ~/.local/state/termhost/token);
                       it is read when no token is given and --server is a loopback address

Exit status: 0 on success; 2 for bad arguments, a bad server URL or token, an
unreachable server or an error answered by the server`)
	if f.name == "run" || f.name == "attach" {
		fmt.Fprint(w, "; the remote command's exit code\nwhen it exits (1 if it ended without one, e.g. killed by a signal)")
	}
	fmt.Fprintf(w, ".\n\nExamples:\n%s\n", strings.TrimRight(f.examples, "\n"))
}

// parse reads the environment for the connection flags, then the command
// line. Positional arguments may come before or between flags unless
// stopAtArg (run: the command and its arguments start at the first one).
// It returns the positional arguments, or an error after which the caller
// returns the exit code.
func (f *cmdFlags) parse(a *app, args []string, stopAtArg bool) ([]string, int, bool) {
	explicit := false
	for flagName, env := range f.env {
		if v, ok := a.getenv(env); ok && v != "" {
			if err := f.Set(flagName, v); err != nil {
				return nil, a.failf(f.name, "$%s: %v", env, err), false
			}
			explicit = explicit || flagName == "server"
		}
	}
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.usage(a.stdout)
				return nil, exitOK, false
			}
			return nil, a.failf(f.name, "%v (see termhost %s --help)", err, f.name), false
		}
		rest := f.Args()
		if len(rest) == 0 {
			break
		}
		dashdash := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
		if stopAtArg || dashdash {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	f.Visit(func(fl *flag.Flag) { explicit = explicit || fl.Name == "server" })
	f.conn.explicit = explicit
	return pos, 0, true
}

// failf prints one line on stderr and returns exitUsage.
func (a *app) failf(cmd, format string, args ...any) int {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	fmt.Fprintf(a.stderr, "termhost %s: %s\n", cmd, msg)
	return exitUsage
}

// fail reports err in one clear line and returns exitUsage.
func (a *app) fail(cmd string, server *url.URL, err error) int {
	return a.failf(cmd, "%s", describe(server, err))
}

// describe turns a client error into a sentence a user can act on.
func describe(server *url.URL, err error) string {
	where := ""
	if server != nil {
		where = server.String()
	}
	var rpcErr *ahp.Error
	var status *client.StatusError
	var netErr net.Error
	switch {
	case errors.Is(err, client.ErrBadServer):
		return err.Error() + " (want e.g. http://127.0.0.1:7681)"
	case errors.Is(err, client.ErrUnauthorized):
		return fmt.Sprintf("the server at %s refused the token (%s); pass --token-file or set TERMHOST_TOKEN", where, statusText(err))
	case errors.As(err, &status):
		return fmt.Sprintf("no termhost server at %s (the WebSocket endpoint answered HTTP %s); check --server and its base path", where, status.Status)
	case errors.As(err, &rpcErr):
		if rpcErr.Code == ahp.CodeMethodNotFound {
			return fmt.Sprintf("the server does not support this: %s (AHP error %d)", rpcErr.Message, rpcErr.Code)
		}
		return fmt.Sprintf("%s (AHP error %d)", rpcErr.Message, rpcErr.Code)
	case errors.Is(err, client.ErrConnectionLost):
		return fmt.Sprintf("lost the connection to %s: %v", where, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("the server at %s did not answer in time", where)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("cannot reach the termhost server at %s: connection refused (is it running? see --server)", where)
	case errors.As(err, &netErr):
		return fmt.Sprintf("cannot reach the termhost server at %s: %s", where, innermost(err))
	}
	return err.Error()
}

func statusText(err error) string {
	var status *client.StatusError
	if errors.As(err, &status) {
		return "HTTP " + status.Status
	}
	return "unauthorized"
}

// innermost is the last message in a chain of wrapped errors.
func innermost(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// connect resolves the server and token and dials.
func (a *app) connect(ctx context.Context, cmd string, cf *connFlags, opts client.Options) (*client.Client, *url.URL, int) {
	base, err := client.ParseServer(cf.server)
	if err != nil {
		return nil, nil, a.failf(cmd, "--server: %v (want e.g. http://127.0.0.1:7681)", err)
	}
	tok, err := a.token(cf, base)
	if err != nil {
		return nil, base, a.failf(cmd, "%v", err)
	}
	opts.Token = tok
	dctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	c, err := client.Dial(dctx, base.String(), opts)
	if err != nil {
		return nil, base, a.fail(cmd, base, err)
	}
	return c, base, 0
}

// token is, in order: a share link's own token, --token-file,
// $TERMHOST_TOKEN, or the token file of a server on this machine (a missing
// file means no token). The local file is never sent to a remote server.
func (a *app) token(cf *connFlags, base *url.URL) (string, error) {
	if cf.shareToken != "" {
		return cf.shareToken, nil
	}
	if cf.tokenFile != "" {
		tok, err := client.ReadToken(cf.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		return tok, nil
	}
	if tok := strings.TrimSpace(a.env("TERMHOST_TOKEN")); tok != "" {
		return tok, nil
	}
	if !client.IsLoopback(base) {
		return "", nil
	}
	path, err := client.LocalTokenPath(a.env)
	if err != nil {
		return "", nil
	}
	tok, err := client.ReadToken(path)
	if errors.Is(err, client.ErrNoToken) {
		return "", nil
	}
	return tok, err
}

// target is a terminal named on the command line.
type target struct {
	id     string
	server string // from a URL argument, "" otherwise
	share  string // the token of a share link URL (#share=…), "" otherwise
}

// parseTarget accepts an id, ahp-terminal:/<id>, or a terminal page URL
// <server>/t/<id>, possibly a share link (<server>/t/<id>#share=<token>).
func parseTarget(arg string) (target, error) {
	arg = strings.TrimSpace(arg)
	switch {
	case strings.HasPrefix(arg, ahp.TerminalScheme):
		id, err := ahp.TerminalID(arg)
		if err != nil {
			return target{}, err
		}
		return target{id: id}, nil
	case strings.Contains(arg, "://"):
		u, err := url.Parse(arg)
		if err != nil {
			return target{}, fmt.Errorf("bad terminal URL %q", arg)
		}
		i := strings.LastIndex(u.Path, "/t/")
		if i < 0 {
			return target{}, fmt.Errorf("bad terminal URL %q: want <server>/t/<id>", arg)
		}
		id, err := url.PathUnescape(strings.TrimSuffix(u.Path[i+len("/t/"):], "/"))
		if err != nil {
			return target{}, fmt.Errorf("bad terminal URL %q: %v", arg, err)
		}
		if _, err := ahp.TerminalID(ahp.TerminalURI(id)); err != nil {
			return target{}, fmt.Errorf("bad terminal URL %q: %v", arg, err)
		}
		base := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path[:i]}
		share := ""
		if frag, err := url.ParseQuery(u.Fragment); err == nil {
			share = frag.Get("share")
		}
		return target{id: id, server: base.String(), share: share}, nil
	}
	if _, err := ahp.TerminalID(ahp.TerminalURI(arg)); err != nil {
		return target{}, fmt.Errorf("bad terminal id %q", arg)
	}
	return target{id: arg}, nil
}

// oneTarget takes the single terminal argument of attach, share and kill.
// A share link's URL brings its own server and token. Any other URL must be
// on the configured server's origin: the owner token goes nowhere else, so a
// pasted link to another host cannot collect it. Its base path is then used
// unless --server was given.
func (a *app) oneTarget(f *cmdFlags, pos []string) (target, int, bool) {
	if len(pos) != 1 {
		return target{}, a.failf(f.name, "want one terminal id or URL, got %d arguments (see termhost %s --help)", len(pos), f.name), false
	}
	t, err := parseTarget(pos[0])
	if err != nil {
		return target{}, a.failf(f.name, "%v", err), false
	}
	switch {
	case t.server == "":
	case t.share != "":
		f.conn.server, f.conn.shareToken = t.server, t.share
	case !sameOrigin(t.server, f.conn.server):
		return target{}, a.failf(f.name, "%s is not on the configured server %s, and the owner token is only sent there; "+
			"set --server or TERMHOST_SERVER to that server if you trust it, or use a share link", redactURL(pos[0]), f.conn.server), false
	case !f.conn.explicit:
		f.conn.server = t.server
	}
	return t, 0, true
}

// sameOrigin reports whether two server URLs have the same scheme, host and
// port (default ports made explicit); unparsable URLs never match.
func sameOrigin(a, b string) bool {
	ua, errA := client.ParseServer(a)
	ub, errB := client.ParseServer(b)
	return errA == nil && errB == nil && origin(ua) == origin(ub)
}

func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// redactURL drops a URL's fragment and user info before it is printed.
func redactURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "the URL"
	}
	u.Fragment, u.RawFragment, u.User = "", "", nil
	return u.String()
}

// fdOf returns a file's descriptor without switching it to blocking mode
// (os.File.Fd would), so read deadlines keep working.
func fdOf(f *os.File) (int, bool) {
	if f == nil {
		return 0, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	if rc.Control(func(u uintptr) { fd = int(u) }) != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}

// isTerminal reports whether w is an *os.File on a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fd, ok := fdOf(f)
	return ok && term.IsTerminal(fd)
}

// termSize is the size of the terminal w is on.
func termSize(w any) (cols, rows int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile {
		return 0, 0, false
	}
	fd, ok := fdOf(f)
	if !ok {
		return 0, 0, false
	}
	cols, rows, err := term.GetSize(fd)
	if err != nil || cols < 1 || rows < 1 {
		return 0, 0, false
	}
	return min(cols, ahp.MaxDimension), min(rows, ahp.MaxDimension), true
}
