package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

const attachAbout = `Attach this terminal to a terminal on a running termhost server: its
scrollback is written out, then its live output; what you type goes to it
(the local terminal is put in raw mode, so Ctrl-C, Ctrl-Z and friends reach
the remote program) and its size follows this window.

attach takes the terminal's claim so that you drive it: with the owner token
it always can (the client that held it is told). Through a share link, if
another connected client holds the claim, attach says so and watches
read-only.

The terminal's history is written out without the queries in it (cursor
position, device attributes, colours …): this terminal would answer them,
and the answers would be typed into the remote program. Live output is
passed on untouched.

Detach (the terminal keeps running) with either:
  Ctrl-\ Ctrl-\   Ctrl-\ twice in a row (a single Ctrl-\ is sent on after a second)
  ~.              a tilde then a dot, right after Enter (~~ sends one ~)

The terminal may be given as an id, as ahp-terminal:/<id>, as its URL
<server>/t/<id> on the configured server (the owner token is never sent to
another origin, so a URL on another host is refused), or as a share link
<server>/t/<id>#share=… (then the link's own server and token are used).

attach exits 0 when you detach, and with the remote exit code when the
terminal's program exits.`

const attachExamples = `  termhost attach 3f2c9a1b0d4e
  termhost attach http://127.0.0.1:7681/t/3f2c9a1b0d4e
  TERMHOST_SERVER=https://dev.example.com/term termhost attach --token-file ~/.termhost-token 3f2c9a1b0d4e`

func (a *app) attach(args []string) int {
	f := newCmdFlags("attach", "attach [flags] <id|url>", attachAbout, attachExamples)
	pos, code, ok := f.parse(a, args, false)
	if !ok {
		return code
	}
	t, code, ok := a.oneTarget(f, pos)
	if !ok {
		return code
	}
	ctx := context.Background()
	c, base, code := a.connect(ctx, "attach", f.conn, client.Options{InitialSubscriptions: []string{ahp.RootURI}, MirrorBytes: -1})
	if c == nil {
		return code
	}
	defer func() { _ = c.Close() }()
	uri := ahp.TerminalURI(t.id)
	sctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
	snap, err := c.Subscribe(sctx, uri)
	cancel()
	if client.IsNotFound(err) {
		return a.failf("attach", "no terminal %q on %s (see termhost ls)", t.id, base)
	}
	if err != nil {
		return a.fail("attach", base, err)
	}
	s := &session{a: a, c: c, cmd: "attach", uri: uri, id: t.id, url: client.TerminalURL(base, t.id), base: base,
		forwardStdin: true, claim: true}
	return s.stream(snap)
}

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
	claim        bool // take the claim first (attach)
	created      bool // this client just created the terminal (run): its first snapshot is not old history

	raw      bool   // the local terminal is in raw mode
	ttyOut   bool   // stdout is a terminal
	midLine  bool   // the last byte written to stdout was not a newline
	tail     []byte // the last bytes of output, to line up a resync
	queries  client.QueryFilter
	claimSeq int64
	typing   atomic.Bool // keystrokes are forwarded (not a read-only viewer)
	lastSize [2]int
	sizeMu   sync.Mutex
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
	s.signals(ctx, cancel, &wg)

	// The first output of a command run just now may hold queries its
	// program still waits for; any other snapshot is history.
	s.write(contentText(st), !s.created)
	if st.Lifecycle.Exited() {
		return s.exited(st.Lifecycle.ExitCode)
	}
	restore := s.makeRaw()
	defer restore()
	if s.claim {
		if st.Claim.Kind == ahp.ClaimClient && st.Claim.ClientID == s.c.ClientID() {
			s.claim = false
		} else if seq, err := s.c.Dispatch(ctx, s.uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim(s.c.ClientID())}); err == nil {
			s.claimSeq = seq
		}
	}
	if s.ttyOut {
		s.resize(ctx)
	}
	if s.forwardStdin {
		stop := s.pump(ctx, cancel)
		defer stop()
	}

	code, msg := s.loop(ctx)
	cancel(nil)
	restore()
	if msg != "" {
		s.note("%s", msg)
	}
	return code
}

// loop handles events until the terminal exits, the user detaches, a signal
// arrives or the connection is lost for good.
func (s *session) loop(ctx context.Context) (int, string) {
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
			return exitUsage, describe(s.base, err) + fmt.Sprintf(" (the terminal may still be running at %s)", s.url)
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
			if code, msg, done := s.action(ctx, ev.Envelope, ev.Replayed); done {
				return code, msg
			}
		case client.EventGone:
			if ev.Channel == s.uri {
				return exitFail, "the terminal was closed on the server"
			}
		case client.EventDisconnected:
			s.note("lost the connection to %s; reconnecting…", s.base)
		case client.EventReconnected:
			s.note("reconnected")
		}
	}
}

// action handles one envelope of the terminal (replayed: from a reconnect
// replay, not happening now).
func (s *session) action(ctx context.Context, env ahp.Envelope, replayed bool) (code int, msg string, done bool) {
	mine := env.Origin != nil && env.Origin.ClientID == s.c.ClientID()
	if env.RejectionReason != "" {
		if mine && env.Origin.ClientSeq == s.claimSeq && env.Action.Type == ahp.TerminalClaimed {
			s.typing.Store(false)
			s.note("%s; watching read-only (detach with Ctrl-\\ Ctrl-\\)", env.RejectionReason)
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
		ours := env.Action.Claim.Kind == ahp.ClaimClient && env.Action.Claim.ClientID == s.c.ClientID()
		if was := s.typing.Swap(ours); was != ours {
			if ours {
				s.note("you have the claim again; typing goes to the terminal")
				if s.ttyOut {
					s.sizeMu.Lock()
					s.lastSize = [2]int{} // the terminal may have another size now
					s.sizeMu.Unlock()
					s.resize(ctx)
				}
			} else {
				s.note("another client took the claim; watching read-only")
			}
		}
	}
	return 0, "", false
}

// exited reports an exit seen in the first snapshot.
func (s *session) exited(code *int) int {
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

// makeRaw puts the local terminal in raw mode when stdin and stdout are
// terminals and stdin is forwarded; the returned function restores it (and
// may be called more than once).
func (s *session) makeRaw() func() {
	if !s.forwardStdin || !s.ttyOut {
		return func() {}
	}
	fd, ok := fdOf(s.a.stdin)
	if !ok || !term.IsTerminal(fd) {
		return func() {}
	}
	old, err := term.MakeRaw(fd)
	if err != nil {
		s.note("cannot put the terminal in raw mode: %v", err)
		return func() {}
	}
	s.raw = true
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = term.Restore(fd, old)
			s.raw = false
		})
	}
}

// signals handles SIGWINCH (resize), SIGINT (sent on as Ctrl-C when the
// terminal is not raw) and SIGTERM/SIGHUP/SIGQUIT (end, leaving the remote
// terminal running).
func (s *session) signals(ctx context.Context, cancel context.CancelCauseFunc, wg *sync.WaitGroup) {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGWINCH, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-ch:
				switch sig {
				case syscall.SIGWINCH:
					if s.ttyOut {
						s.resize(ctx)
					}
				case syscall.SIGINT:
					_, _ = s.c.Dispatch(ctx, s.uri, ahp.Action{Type: ahp.TerminalInput, Data: "\x03"})
				default:
					cancel(signalled{sig.(syscall.Signal)})
					return
				}
			}
		}
	}()
}

// resize sends the local size when it changed and this client drives.
func (s *session) resize(ctx context.Context) {
	cols, rows, ok := termSize(s.a.stdout)
	if !ok || !s.typing.Load() {
		return
	}
	s.sizeMu.Lock()
	defer s.sizeMu.Unlock()
	if s.lastSize == [2]int{cols, rows} {
		return
	}
	if _, err := s.c.Dispatch(ctx, s.uri, ahp.Action{Type: ahp.TerminalResized, Cols: cols, Rows: rows}); err == nil {
		s.lastSize = [2]int{cols, rows}
	}
}

// pump forwards stdin as terminal/input until a detach key, end of input or
// the end of ctx. The returned function stops it: it unblocks the read when
// stdin supports deadlines, else leaves the goroutine to the process's exit.
func (s *session) pump(ctx context.Context, cancel context.CancelCauseFunc) func() {
	in := s.a.stdin
	done := make(chan struct{})
	var mu sync.Mutex // guards d and timer
	d := detacher{lineStart: true}
	var timer *time.Timer
	send := func(b []byte) {
		if len(b) > 0 && s.typing.Load() {
			_, _ = s.c.Dispatch(ctx, s.uri, ahp.Action{Type: ahp.TerminalInput, Data: string(b)})
		}
	}
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		var carry []byte
		for {
			n, err := in.Read(buf)
			if n > 0 {
				mu.Lock()
				out, detach := d.feed(buf[:n])
				if timer != nil {
					timer.Stop()
					timer = nil
				}
				if d.held() && !detach {
					timer = time.AfterFunc(detachWait, func() {
						mu.Lock()
						b := d.release()
						mu.Unlock()
						send(b)
					})
				}
				mu.Unlock()
				var whole []byte
				whole, carry = splitUTF8(append(carry, out...))
				send(whole)
				if detach {
					cancel(errDetached)
					return
				}
			}
			if err != nil {
				if ctx.Err() == nil && errors.Is(err, io.EOF) {
					cancel(errDetached)
				}
				return
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return func() {
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		if in.SetReadDeadline(time.Now()) == nil {
			<-done
			_ = in.SetReadDeadline(time.Time{})
		}
	}
}

// detachWait is how long a single Ctrl-\ waits for a second before it is
// sent on.
const detachWait = time.Second

// detacher finds the detach keys in typed input: Ctrl-\ twice, or "~." at the
// start of a line. It holds back a Ctrl-\ or a line-start "~" until the next
// byte tells what it is.
type detacher struct {
	lineStart bool
	ctrl      bool // a Ctrl-\ is held
	tilde     bool // a line-start ~ is held
}

const ctrlBackslash = 0x1c

// feed returns the bytes to send and whether a detach sequence was typed
// (the bytes after it are dropped).
func (d *detacher) feed(in []byte) (out []byte, detach bool) {
	for _, b := range in {
		switch {
		case d.ctrl:
			d.ctrl = false
			if b == ctrlBackslash {
				return out, true
			}
			out = append(out, ctrlBackslash)
			d.lineStart = false
		case d.tilde:
			d.tilde = false
			switch b {
			case '.':
				return out, true
			case '~':
				out = append(out, '~')
				d.lineStart = false
				continue
			}
			out = append(out, '~')
			d.lineStart = false
		}
		switch {
		case b == ctrlBackslash:
			d.ctrl = true
		case b == '~' && d.lineStart:
			d.tilde = true
		default:
			out = append(out, b)
			d.lineStart = b == '\r' || b == '\n'
		}
	}
	return out, false
}

// held reports a held Ctrl-\ (a held ~ waits for the next key, like ssh).
func (d *detacher) held() bool { return d.ctrl }

// release gives up a held Ctrl-\ after detachWait.
func (d *detacher) release() []byte {
	if !d.ctrl {
		return nil
	}
	d.ctrl, d.lineStart = false, false
	return []byte{ctrlBackslash}
}

// splitUTF8 splits off an incomplete UTF-8 sequence at the end of b, to be
// sent with the next read (a JSON string cannot carry half a character).
func splitUTF8(b []byte) (whole, rest []byte) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i], append([]byte(nil), b[i:]...)
			}
			break
		}
	}
	return b, nil
}

// contentText is the whole output held in a terminal state.
func contentText(st ahp.TerminalState) string {
	var b strings.Builder
	for _, p := range st.Content {
		b.WriteString(p.Text())
	}
	return b.String()
}
