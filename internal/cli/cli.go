package cli

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

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/envflag"
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
	// liveness overrides the client's ping timings (tests; nil: defaults).
	liveness func(*client.Options)
}

func newApp() *app {
	return &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.LookupEnv}
}

func (a *app) env(key string) string {
	v, _ := a.getenv(key)
	return v
}

// cmdFlags are the flags of a client subcommand: its own and the
// connection flags every client subcommand has.
type cmdFlags struct {
	*envflag.Set
	name     string // "run", "attach", …
	synopsis string // the usage line after "termhost"
	about    string
	examples string
	conn     *connFlags
}

// connFlags are the flags every client subcommand has.
type connFlags struct {
	server     string
	tokenFile  string
	timeout    time.Duration
	explicit   bool   // --server was given (flag or environment)
	shareToken string // from a share link's URL: used instead of the owner token
	// elsewhere is a terminal URL argument on another origin than server's
	// (without its fragment): it is refused unless the server states it
	// as its public URL, and when the server cannot be reached.
	elsewhere string
	// otherHost names the host, not the home host, that server is
	// (hosts.go): hostToken, its own token from the environment, is the
	// only credential sent there ("" sends none).
	otherHost, hostToken string
}

func newCmdFlags(name, synopsis, about, examples string) *cmdFlags {
	f := &cmdFlags{Set: envflag.New(name, "TERMHOST_"+strings.ToUpper(name)+"_"), name: name, synopsis: synopsis,
		about: about, examples: examples, conn: &connFlags{}}
	f.StringVar(&f.conn.server, "server", client.DefaultServer, "the termhost server: an http or https `URL`, with its base path if any")
	f.StringVar(&f.conn.tokenFile, "token-file", "", "read the owner token from `FILE` (default: $TERMHOST_TOKEN, else the token file of a server on this machine)")
	f.DurationVar(&f.conn.timeout, "connect-timeout", 10*time.Second, "how long to wait for the server to connect and answer (a `duration` like 10s)")
	for _, shared := range []string{"server", "token-file", "connect-timeout"} {
		f.Share(shared)
	}
	return f
}

// usage writes the complete help of the subcommand.
func (f *cmdFlags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: termhost %s\n\n%s\n\nFlags (each also read from the environment variable shown; the command line wins):\n",
		f.synopsis, strings.TrimSpace(f.about))
	f.WriteFlags(w)
	fmt.Fprint(w, `  --help
      this text

Environment:
  TERMHOST_TOKEN       the owner token itself, used when no token file is given
  XDG_STATE_HOME       a server on this machine keeps its token in
                       $XDG_STATE_HOME/termhost/token (default, and when it is not an
                       absolute path: ~/.local/state/termhost/token); it is read when
                       no token is given and --server is a loopback address

Exit status: 0 on success; 2 for bad arguments, a bad server URL or token, an
unreachable server or an error answered by the server`)
	if f.name == "run" || f.name == "attach" {
		fmt.Fprint(w, "; the remote command's exit code\nwhen it exits (1 if it ended without one, e.g. killed by a signal)")
	}
	fmt.Fprintf(w, ".\n\nExamples:\n%s\n", strings.TrimRight(f.examples, "\n"))
}

// parse reads the flags' environment twins, then the command line.
// Positional arguments may come before or between flags unless stopAtArg
// (run: the command and its arguments start at the first one). It returns
// the positional arguments, or ok false and the exit code.
func (f *cmdFlags) parse(a *app, args []string, stopAtArg bool) (pos []string, code int, ok bool) {
	if err := f.SetFromEnv(a.getenv); err != nil {
		return nil, a.failf(f.name, "%v", err), false
	}
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
	f.conn.explicit = f.IsSet("server")
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
	return a.failf(cmd, "%s", explainError(server, err))
}

// explainError turns a client error into a sentence a user can act on.
func explainError(server *url.URL, err error) string {
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
