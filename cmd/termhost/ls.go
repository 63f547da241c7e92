package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

const lsAbout = `List the terminals of a running termhost server (its root catalogue): id,
title, state (running or exited), exit code, who holds the claim, and URL.`

const lsExamples = `  termhost ls
  termhost ls --json | jq -r '.[] | select(.state == "running") | .url'
  termhost ls --server https://dev.example.com/term --token-file ~/.termhost-token`

// lsEntry is one terminal in ls --json.
type lsEntry struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	State    string    `json:"state"`
	ExitCode *int      `json:"exitCode,omitempty"`
	Claim    ahp.Claim `json:"claim"`
	URL      string    `json:"url"`
}

// lsCommand is "termhost ls".
func (a *app) lsCommand(args []string) int {
	f := newCmdFlags("ls", "ls [flags]", lsAbout, lsExamples)
	asJSON := f.Bool("json", false, "print a JSON array of {id, title, state, exitCode, claim, url}")
	pos, code, ok := f.parse(a, args, false)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return a.failf("ls", "unexpected argument %q (see termhost ls --help)", pos[0])
	}
	c, base, code := a.connect(context.Background(), "ls", f.conn, client.Options{InitialSubscriptions: []string{ahp.RootURI}})
	if c == nil {
		return code
	}
	defer func() { _ = c.Close() }()
	root, ok := c.Root()
	if !ok {
		return a.failf("ls", "the server sent no catalogue")
	}
	entries := make([]lsEntry, 0, len(root.Terminals))
	for _, info := range root.Terminals {
		id := ahp.TerminalIDOf(info.Resource)
		entries = append(entries, lsEntry{ID: id, Title: info.Title, State: info.Lifecycle.Status,
			ExitCode: info.Lifecycle.ExitCode, Claim: info.Claim, URL: client.TerminalURL(base, id)})
	}
	if *asJSON {
		out, err := json.MarshalIndent(entries, "", "  ")
		if err != nil {
			return a.failf("ls", "%v", err)
		}
		fmt.Fprintf(a.stdout, "%s\n", out)
		return exitOK
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tSTATE\tEXIT\tCLAIM\tURL")
	for _, e := range entries {
		exit := "-"
		if e.ExitCode != nil {
			exit = strconv.Itoa(*e.ExitCode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", printable(e.ID), printable(e.Title), e.State, exit, printable(claimText(e.Claim)), e.URL)
	}
	_ = tw.Flush()
	return exitOK
}

// printable replaces control characters (a title comes from the shell and
// could carry escape sequences) and tabs, which would break the table.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\t' {
			return '?'
		}
		return r
	}, s)
}

func claimText(c ahp.Claim) string {
	switch c.Kind {
	case ahp.ClaimClient:
		return "client " + c.ClientID
	case ahp.ClaimSession:
		return "session " + c.Session
	}
	return c.Kind
}
