package cli

import (
	"context"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

const attachAbout = `Attach this terminal to a terminal on a running termhost server: its
scrollback is written out, then its live output; what you type goes to it
(the local terminal is put in raw mode, so Ctrl-C, Ctrl-Z and friends reach
the remote program) and its size follows this window — while you have
control.

Whoever has control of a terminal (holds its claim) types into it and sizes
it; everyone else watches. attach takes control when nobody has it (or you
have it already). When someone else has control, attach says who and
watches read-only; with --take it takes control (owner token: the holder is
told) or, through a share link, asks the holder and waits (the holder grants
or declines; a holder that does not type for 20 s hands it over by itself).

While you have control, requests for control from others are shown: Ctrl-\ y
grants, Ctrl-\ n declines.

The terminal's history is written out without the queries in it (cursor
position, device attributes, colours …): this terminal would answer them,
and the answers would be typed into the remote program. Live output is
passed on untouched.

Detach (the terminal keeps running) with either:
  Ctrl-\ Ctrl-\   Ctrl-\ twice in a row (a single Ctrl-\ is sent on after a second)
  ~.              a tilde then a dot, right after Enter (~~ sends one ~)

The terminal may be given as an id, as ahp-terminal:/<id>, as its URL
<server>/t/<id> on the configured server or on its --public-url (the owner
token is never sent to another origin, so a URL on another host is refused),
or as a share link
<server>/t/<id>#share=… (then the link's own server and token are used).

attach exits 0 when you detach, and with the remote exit code when the
terminal's program exits.`

const attachExamples = `  termhost attach 3f2c9a1b0d4e
  termhost attach http://127.0.0.1:7681/t/3f2c9a1b0d4e
  termhost attach --take 3f2c9a1b0d4e                                      # take control
  termhost attach --take 'http://127.0.0.1:7681/t/3f2c9a1b0d4e#share=…'   # ask for control
  TERMHOST_SERVER=https://dev.example.com/term termhost attach --token-file ~/.termhost-token 3f2c9a1b0d4e`

// attachCommand is "termhost attach".
func (a *app) attachCommand(args []string) int {
	f := newCmdFlags("attach", "attach [flags] <id|url>", attachAbout, attachExamples)
	take := f.Bool("take", false, "take control from whoever has it: with the owner token at once; through a share link, ask the holder and wait")
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
	if code, ok := a.checkPublic("attach", f.conn, c, t); !ok {
		return code
	}
	uri := ahp.TerminalURIOf(t.id)
	sctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
	snap, err := c.Subscribe(sctx, uri)
	cancel()
	if client.IsNotFound(err) {
		return a.failf("attach", "no terminal %q on %s (see termhost ls)", t.id, base)
	}
	if err != nil {
		return a.fail("attach", base, err)
	}
	s := &session{a: a, c: c, cmd: "attach", uri: uri, id: t.id, url: client.TerminalURL(c.LinkBase(), t.id), base: base,
		forwardStdin: true, claim: true, take: *take, viaLink: t.share != ""}
	return s.stream(snap)
}
