package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/label"
)

const lsAbout = `List the terminals of a running termhost server (its root catalogue): id,
name, state (running or exited), exit code, who has control (types into it
and sizes it, by name; - when nobody connected to it has), how many clients
are connected to it (--json lists them by name), and URL.
--preview adds each terminal's current screen as text (x-termhost/screen).
--all lists every host the server's hosts file names too, with a HOST
column (--json: a host field), each reached with its own token
(TERMHOST_TOKEN_<NAME>, the name upper-cased, - and . as _; never the
server's): a host that cannot be reached or refuses is one line on
stderr ({"host", "error"} in --json), and ls still succeeds.`

const lsExamples = `  termhost ls
  termhost ls --json | jq -r '.[] | select(.state == "running") | .url'
  termhost ls --preview
  TERMHOST_TOKEN_BOX2=… termhost ls --all
  termhost ls --server https://dev.example.com/term --token-file ~/.termhost-token`

// lsEntry is one terminal in ls --json.
type lsEntry struct {
	// Host is the host the terminal is on (--all).
	Host     string    `json:"host,omitempty"`
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	State    string    `json:"state"`
	ExitCode *int      `json:"exitCode,omitempty"`
	Claim    ahp.Claim `json:"claim"`
	// Control names who has control, as presence names it ("" when nobody
	// connected to the terminal holds its claim).
	Control string `json:"control,omitempty"`
	URL     string `json:"url"`
	// Presence is who is connected to the terminal (control.go).
	Presence []ext.Member `json:"presence"`
	// Screen is set with --preview.
	Screen *ext.ScreenResult `json:"screen,omitempty"`
}

// lsCommand is "termhost ls".
func (a *app) lsCommand(args []string) int {
	f := newCmdFlags("ls", "ls [flags]", lsAbout, lsExamples)
	asJSON := f.Bool("json", false, "print a JSON array of {host (with --all), id, title, state, exitCode, claim, control, url, presence, screen}")
	preview := f.Bool("preview", false, "show each terminal's current screen as text")
	all := f.Bool("all", false, "also list the terminals of every host the server's hosts file names, with a HOST column")
	pos, code, ok := f.parse(a, args, false)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return a.failf("ls", "unexpected argument %q (see termhost ls --help)", pos[0])
	}
	var list ext.HostList
	if *all {
		var err error
		if list, _, err = a.fetchHosts(context.Background(), f.conn); err != nil {
			return a.failf("ls", "%v", err)
		}
	}
	c, _, code := a.connect(context.Background(), "ls", f.conn, client.Options{InitialSubscriptions: []string{ahp.RootURI}})
	if c == nil {
		return code
	}
	defer func() { _ = c.Close() }()
	entries, noPreview, err := lsHost(c, *preview)
	if err != nil {
		return a.failf("ls", "%v", err)
	}
	var failed []lsFailure
	if *all {
		for i := range entries {
			entries[i].Host = list.Home.Name
		}
		more, fails := a.lsOtherHosts(f.conn, list, *preview)
		entries, failed = append(entries, more...), fails
	}
	if *asJSON {
		var out []byte
		var err error
		if *all {
			rows := make([]any, 0, len(entries)+len(failed))
			for _, e := range entries {
				rows = append(rows, e)
			}
			for _, f := range failed {
				rows = append(rows, f)
			}
			out, err = json.MarshalIndent(rows, "", "  ")
		} else {
			out, err = json.MarshalIndent(entries, "", "  ")
		}
		if err != nil {
			return a.failf("ls", "%v", err)
		}
		fmt.Fprintf(a.stdout, "%s\n", out)
		return exitOK
	}
	for _, f := range failed {
		fmt.Fprintf(a.stderr, "termhost ls: %s: %s\n", f.Host, label.Clean(f.Error))
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	head := "ID\tNAME\tSTATE\tEXIT\tCONTROL\tHERE\tURL"
	if *all {
		head = "HOST\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, e := range entries {
		exit := "-"
		if e.ExitCode != nil {
			exit = strconv.Itoa(*e.ExitCode)
		}
		if *all {
			fmt.Fprintf(tw, "%s\t", e.Host)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", label.Clean(e.ID), label.Clean(e.Title), e.State, exit, label.Clean(cmp.Or(e.Control, "-")), len(e.Presence), e.URL)
	}
	_ = tw.Flush()
	for _, e := range entries {
		if e.Screen != nil {
			id := e.ID
			if *all {
				id = e.Host + "/" + id
			}
			printScreen(a, id, e.Screen)
		}
	}
	printNoPreviews(a, noPreview)
	return exitOK
}

// lsFailure is a host ls --all could not list.
type lsFailure struct {
	Host  string `json:"host"`
	Error string `json:"error"`
}

// lsHost lists the terminals of the server c is connected to; noPreview
// are the terminals without a preview and why.
func lsHost(c *client.Client, preview bool) ([]lsEntry, [][2]string, error) {
	root, ok := c.Root()
	if !ok {
		return nil, nil, errors.New("the server sent no catalogue")
	}
	entries := make([]lsEntry, 0, len(root.Terminals))
	var noPreview [][2]string // terminal id, the server's reason
	here := agent.Presence(c)
	for _, info := range root.Terminals {
		if here[info.Resource] == nil {
			here[info.Resource] = []ext.Member{}
		}
		id := ahp.TerminalIDOf(info.Resource)
		entries = append(entries, lsEntry{ID: id, Title: info.Title, State: info.Lifecycle.Status,
			ExitCode: info.Lifecycle.ExitCode, Claim: info.Claim, Control: controlName(info, here[info.Resource]),
			URL: client.TerminalURL(c.LinkBase(), id), Presence: here[info.Resource]})
		if preview {
			var why string
			entries[len(entries)-1].Screen, why = screenOf(c, info.Resource)
			if why != "" {
				noPreview = append(noPreview, [2]string{id, why})
			}
		}
	}
	return entries, noPreview, nil
}

// lsOtherHosts lists the other hosts of list at once, each with its own
// credential, in the list's order; a host that fails is a failure.
func (a *app) lsOtherHosts(home *connFlags, list ext.HostList, preview bool) ([]lsEntry, []lsFailure) {
	type result struct {
		entries []lsEntry
		err     string
	}
	results := make([]result, len(list.Hosts))
	var wg sync.WaitGroup
	for i := range list.Hosts {
		cf := *home
		a.forHost(&cf, &list.Hosts[i])
		wg.Go(func() {
			entries, err := a.lsOne(&cf, preview)
			for j := range entries {
				entries[j].Host = cf.otherHost
			}
			results[i] = result{entries, err}
		})
	}
	wg.Wait()
	var entries []lsEntry
	var failed []lsFailure
	for i, r := range results {
		if r.err != "" {
			failed = append(failed, lsFailure{Host: list.Hosts[i].Name, Error: r.err})
		}
		entries = append(entries, r.entries...)
	}
	return entries, failed
}

// lsOne lists one other host's terminals, or says why it cannot.
func (a *app) lsOne(cf *connFlags, preview bool) ([]lsEntry, string) {
	base, err := client.ParseServer(cf.server)
	if err != nil {
		return nil, err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), cf.timeout)
	defer cancel()
	c, err := client.Dial(ctx, base.String(), client.Options{Token: cf.hostToken, InitialSubscriptions: []string{ahp.RootURI}})
	switch {
	case errors.Is(err, client.ErrUnauthorized):
		return nil, needsSignIn(cf)
	case err != nil:
		return nil, "unreachable: " + explainError(base, err)
	}
	defer func() { _ = c.Close() }()
	entries, _, err := lsHost(c, preview)
	if err != nil {
		return nil, err.Error()
	}
	return entries, ""
}

// screenOf asks for a terminal's screen; nil and the reason the server
// gave when it has none (a terminal without a screen model, an older
// server).
func screenOf(c *client.Client, uri string) (*ext.ScreenResult, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Screen(ctx, uri)
	if err != nil {
		if rpcErr, ok := errors.AsType[*ahp.Error](err); ok {
			return nil, rpcErr.Message
		}
		return nil, err.Error()
	}
	return &r, ""
}

// printNoPreviews says why terminals have no preview, as the server said
// it: once when every terminal has the same reason.
func printNoPreviews(a *app, list [][2]string) {
	same := len(list) > 0
	for _, e := range list {
		same = same && e[1] == list[0][1]
	}
	if same && len(list) > 1 {
		fmt.Fprintf(a.stderr, "termhost ls: No previews: %s\n", label.Clean(list[0][1]))
		return
	}
	for _, e := range list {
		fmt.Fprintf(a.stderr, "termhost ls: No preview of %s: %s\n", label.Clean(e[0]), label.Clean(e[1]))
	}
}

// printScreen prints a screen under a rule naming its terminal, without
// its trailing blank rows.
func printScreen(a *app, id string, s *ext.ScreenResult) {
	lines := s.Lines
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	fmt.Fprintf(a.stdout, "\n── %s (%d×%d) ──\n", label.Clean(id), s.Cols, s.Rows)
	for _, l := range lines {
		fmt.Fprintln(a.stdout, printable(l))
	}
}

// printable replaces control characters of a screen line (names and
// titles go through label.Clean).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\t' {
			return '?'
		}
		return r
	}, s)
}

// controlName names who has control of a running terminal: a person by
// their presence name, never a clientId; "" when the holder is not
// connected to it.
func controlName(info ahp.TerminalInfo, present []ext.Member) string {
	if info.Lifecycle.Exited() {
		return ""
	}
	if name := claimHolderName(info.Claim, present); name != notHere {
		return name
	}
	return ""
}
