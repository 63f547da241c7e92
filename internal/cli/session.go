package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// session streams one terminal to stdout and, when asked, stdin to it. It is
// shared by run and attach.
type session struct {
	a    *app
	c    *client.Client
	cmd  string // for messages: "run" or "attach"
	uri  string
	id   string
	url  string
	base *url.URL

	forwardStdin bool // read stdin and send it as input (attach; run on a terminal)
	claim        bool // drive the terminal: take its claim if nobody holds it (attach)
	take         bool // attach --take: take the claim (owner) or ask the holder (share link; control.go)
	viaLink      bool // connected through a share link, not as the owner
	created      bool // this client just created the terminal (run): its first snapshot is not old history

	raw      bool   // the local terminal is in raw mode
	ttyOut   bool   // stdout is a terminal
	midLine  bool   // the last byte written to stdout was not a newline
	tail     []byte // the last bytes of output, to line up a resync
	queries  client.QueryFilter
	claimSeq int64
	typing   atomic.Bool // keystrokes are forwarded (not a read-only viewer)
	holding  atomic.Bool // we hold the claim: we size the terminal
	lastSize [2]int
	sizeMu   sync.Mutex
	ctl      controlState // a request for control waiting for our answer
}

// Causes of the end of a session's context.
var errDetached = errors.New("detached")

type signalled struct{ sig syscall.Signal }

func (s signalled) Error() string { return "signal " + s.sig.String() }

// stream runs the session from a subscription snapshot to the end and returns
// the exit code.
func (s *session) stream(snap ahp.Snapshot) int {
	st, _ := snap.State.(ahp.TerminalState)
	s.ttyOut = isTerminal(s.a.stdout)
	s.typing.Store(true)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil) // before the wait: the helpers watch ctx
	// Signals first: once any output is out, Ctrl-C is handled.
	s.handleSignals(ctx, cancel, &wg)

	// The first output of a command run just now may hold queries its
	// program still waits for; any other snapshot is history.
	s.write(contentText(st), !s.created)
	if st.Lifecycle.Exited() {
		return s.reportExit(st.Lifecycle.ExitCode)
	}
	restore := s.makeRaw()
	defer restore()
	s.holding.Store(s.ours(st.Claim))
	s.typing.Store(s.holding.Load())
	if s.claim && !s.holding.Load() {
		switch {
		case s.take && s.viaLink:
			s.requestControl(ctx, true)
		case s.take: // the owner may always take control
			if seq, err := s.c.Dispatch(ctx, s.uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim(s.c.ClientID())}); err == nil {
				s.claimSeq = seq
				s.holding.Store(true) // accepted before anything we send next
				s.typing.Store(true)
			}
		default: // only a claim nobody holds
			s.requestControl(ctx, false)
		}
	}
	if s.ttyOut && s.holding.Load() {
		s.resize(ctx)
	}
	if s.forwardStdin {
		stop := s.pumpStdin(ctx, cancel)
		defer stop()
	}

	code, msg := s.handleEvents(ctx)
	cancel(nil)
	restore()
	if msg != "" {
		s.note("%s", msg)
	}
	return code
}

// handleEvents handles events until the terminal exits, the user detaches,
// a signal arrives or the connection is lost for good.
func (s *session) handleEvents(ctx context.Context) (int, string) {
	seen := false // our terminal was in the catalogue
	if root, ok := s.c.Root(); ok {
		for _, info := range root.Terminals {
			seen = seen || info.Resource == s.uri
		}
	}
	for {
		ev, err := s.c.Next(ctx)
		if err != nil {
			var sig signalled
			cause := context.Cause(ctx)
			switch {
			case errors.Is(cause, errDetached):
				return exitOK, fmt.Sprintf("detached from %s; it keeps running", s.url)
			case errors.As(cause, &sig):
				return 128 + int(sig.sig), fmt.Sprintf("%s; the terminal keeps running at %s", sig.sig, s.url)
			}
			return exitUsage, explainError(s.base, err) + fmt.Sprintf(" (the terminal may still be running at %s)", s.url)
		}
		switch ev.Kind {
		case client.EventAction, client.EventResync:
			if ev.Channel == ahp.RootURI {
				root, _ := ev.State.(ahp.RootState)
				present := false
				for _, info := range root.Terminals {
					present = present || info.Resource == s.uri
				}
				if seen && !present {
					return exitFail, "the terminal was closed on the server"
				}
				seen = seen || present
				continue
			}
			if ev.Channel != s.uri {
				continue
			}
			if ev.Kind == client.EventResync {
				st, _ := ev.State.(ahp.TerminalState)
				s.resync(contentText(st))
				if st.Lifecycle.Exited() {
					return s.exitResult(st.Lifecycle.ExitCode)
				}
				continue
			}
			if code, msg, done := s.handleAction(ctx, ev.Envelope, ev.Replayed); done {
				return code, msg
			}
		case client.EventGone:
			if ev.Channel == s.uri {
				return exitFail, "the terminal was closed on the server"
			}
		case client.EventNotification:
			s.onNotification(ev)
		case client.EventDisconnected:
			s.note("lost the connection to %s; reconnecting…", s.base)
		case client.EventReconnected:
			s.note("reconnected")
		}
	}
}

// handleAction handles one envelope of the terminal (replayed: from a reconnect
// replay, not happening now).
func (s *session) handleAction(ctx context.Context, env ahp.Envelope, replayed bool) (code int, msg string, done bool) {
	mine := env.Origin != nil && env.Origin.ClientID == s.c.ClientID()
	if env.RejectionReason != "" {
		if mine && env.Origin.ClientSeq == s.claimSeq && env.Action.Type == ahp.TerminalClaimed {
			s.typing.Store(false)
			s.note("%s; watching read-only (detach with Ctrl-\\ Ctrl-\\)", env.RejectionReason)
		}
		if mine && env.Action.Type == ahp.TerminalInput && s.typing.Swap(false) {
			s.note("%s has control; watching read-only (%s)", s.holderName(), s.takeHint())
		}
		return 0, "", false
	}
	switch env.Action.Type {
	case ahp.TerminalData:
		s.write(env.Action.Data, replayed)
	case ahp.TerminalExited:
		code, msg := s.exitResult(env.Action.ExitCode)
		return code, msg, true
	case ahp.TerminalClaimed:
		ours := s.ours(env.Action.Claim)
		was := s.holding.Swap(ours)
		typed := s.typing.Swap(ours)
		switch {
		case ours && !was:
			if s.forwardStdin {
				s.note("you have control; typing goes to the terminal")
			}
			if s.ttyOut {
				s.sizeMu.Lock()
				s.lastSize = [2]int{} // the terminal may have another size now
				s.sizeMu.Unlock()
				s.resize(ctx)
			}
		case !ours && (was || typed):
			s.note("%s has control now; watching read-only (%s)", claimHolderName(env.Action.Claim, s.presence()), s.takeHint())
		}
	}
	return 0, "", false
}

// reportExit reports an exit seen in the first snapshot.
func (s *session) reportExit(code *int) int {
	c, msg := s.exitResult(code)
	if msg != "" {
		s.note("%s", msg)
	}
	return c
}

// exitResult is the exit code for the remote exit code and what to say.
func (s *session) exitResult(code *int) (int, string) {
	if code == nil {
		return exitFail, "the command ended without an exit code (killed by a signal?)"
	}
	c := *code
	if c < 0 || c > 255 {
		c &= 0xff
	}
	if s.cmd == "attach" {
		return c, fmt.Sprintf("the terminal exited with code %d", *code)
	}
	return c, ""
}

// write copies terminal output to stdout. Replayed history (a snapshot, a
// reconnect replay) loses its queries on the way: the local terminal would
// answer them on stdin, and attach would type the answers into the live
// shell.
func (s *session) write(data string, replayed bool) {
	if data == "" {
		return
	}
	var out string
	if replayed {
		out = s.queries.Replay(data)
	} else {
		out = s.queries.Live(data)
	}
	if out != "" {
		_, _ = io.WriteString(s.a.stdout, out)
		s.midLine = out[len(out)-1] != '\n'
	}
	s.tail = append(s.tail, data...)
	if over := len(s.tail) - tailKeep; over > 0 {
		s.tail = append(s.tail[:0], s.tail[over:]...)
	}
}

const tailKeep = 4096

// resync writes what a snapshot has beyond what was already written.
func (s *session) resync(text string) {
	rest, ok := resyncOutput(string(s.tail), text)
	if !ok {
		s.note("output resynchronized after the reconnect; some of it may repeat")
	}
	s.write(rest, true)
}

// resyncOutput returns the part of text that follows tail (the end of what
// was written before), or all of text and false when they cannot be lined up.
func resyncOutput(tail, text string) (string, bool) {
	if tail == "" {
		return text, true
	}
	if i := strings.LastIndex(text, tail); i >= 0 {
		return text[i+len(tail):], true
	}
	return text, false
}

// note prints a message on stderr on a line of its own.
func (s *session) note(format string, args ...any) {
	nl := "\n"
	if s.raw {
		nl = "\r\n"
	}
	prefix := ""
	if s.ttyOut && s.midLine {
		prefix = nl
		s.midLine = false
	}
	fmt.Fprintf(s.a.stderr, "%stermhost: %s%s", prefix, fmt.Sprintf(format, args...), nl)
}

// contentText is the whole output held in a terminal state.
func contentText(st ahp.TerminalState) string {
	var b strings.Builder
	for _, p := range st.Content {
		b.WriteString(p.Text())
	}
	return b.String()
}
