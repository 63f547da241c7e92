package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/envflag"
	"github.com/termhost/termhost/internal/label"
)

const auditAbout = `termhost audit: read the audit trail that termhost serve --audit-log writes
(one JSON object a line), oldest first, filtered:

  termhost audit --terminal build --event input --since 14:03 --until 14:04
      who typed into the terminal named (or with the id) build at 14:03
  termhost audit --who '*@corp.com' --event control-taken,control-granted --since 24h
  termhost audit --json --who alice@corp.com | jq .

--since and --until take RFC 3339 (2026-12-05T14:03:00Z), "2026-12-05 14:03",
"14:03" (today, local time) or a duration back from now (90m, 24h).
Events: ` + "sign-in, sign-in-refused, connect, disconnect, terminal-created, terminal-disposed, terminal-renamed, control-taken, control-granted, control-requested, share-created, share-revoked, share-used, input, recording-downloaded, server-upgrade."

type auditOptions struct {
	file, who, terminal, since, until string
	events                            envflag.List
	json                              bool
}

func (o *auditOptions) flags() *envflag.Set {
	fs := envflag.New("audit", "TERMHOST_AUDIT_")
	fs.StringVar(&o.file, "audit-log", "", "the audit log `file` (serve's --audit-log)")
	fs.Share("audit-log") // TERMHOST_AUDIT_LOG, like serve's
	fs.StringVar(&o.who, "who", "", "only events of this person: identity, display name, owner, share:<id>, or a pattern with *")
	fs.StringVar(&o.terminal, "terminal", "", "only events of this terminal: its id, URI or title")
	fs.Var(&o.events, "event", "only these event `kinds` (comma-separated or repeated)")
	fs.StringVar(&o.since, "since", "", "only events at or after this `time`")
	fs.StringVar(&o.until, "until", "", "only events before this `time`")
	fs.BoolVar(&o.json, "json", false, "print the matching events as JSON lines (for jq)")
	return fs
}

// Audit is "termhost audit".
func Audit(args []string) int {
	var o auditOptions
	if code, ok := envflag.ParseCommand(o.flags(), args, os.LookupEnv, os.Stdout, os.Stderr, auditAbout); !ok {
		return code
	}
	f, err := o.filter(time.Now())
	if err == nil && o.file == "" {
		err = fmt.Errorf("--audit-log is required (or $TERMHOST_AUDIT_LOG)")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "termhost audit: %v (see termhost audit --help)\n", err)
		return exitUsage
	}
	in, err := os.Open(o.file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "termhost audit: %v\n", err)
		return exitFail
	}
	defer in.Close()
	if err := printAudit(os.Stdout, in, f, o.json); err != nil {
		fmt.Fprintf(os.Stderr, "termhost audit: %v\n", err)
		return exitFail
	}
	return exitOK
}

// filter turns the options into an audit.Filter, times relative to now.
func (o *auditOptions) filter(now time.Time) (audit.Filter, error) {
	f := audit.Filter{Who: o.who, Terminal: o.terminal, Events: o.events}
	for _, e := range o.events {
		if !slices.Contains(audit.Kinds, e) {
			return f, fmt.Errorf("--event %q: want one of %s", e, strings.Join(audit.Kinds, ", "))
		}
	}
	var err error
	if f.Since, err = parseWhen(o.since, now); err != nil {
		return f, fmt.Errorf("--since: %w", err)
	}
	if f.Until, err = parseWhen(o.until, now); err != nil {
		return f, fmt.Errorf("--until: %w", err)
	}
	return f, nil
}

// parseWhen reads --since/--until: RFC 3339, "2006-01-02 15:04[:05]",
// "15:04[:05]" today (local time), or a duration back from now.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			y, m, d := now.Date()
			return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, now.Location()), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time (2026-12-05T14:03:00Z, \"2026-12-05 14:03\", 14:03 or a duration such as 24h)", s)
}

// printAudit writes the events of in that f selects: a table, or JSON lines.
func printAudit(w io.Writer, in io.Reader, f audit.Filter, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		return audit.Read(in, f, func(e audit.Event) error { return enc.Encode(e) })
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tWHO\tTERMINAL\tDETAIL")
	err := audit.Read(in, f, func(e audit.Event) error {
		who := e.Who
		if e.Name != "" && e.Name != e.Who {
			who = e.Name + " <" + e.Who + ">"
		}
		term := e.Terminal
		if term != "" {
			term = term[strings.LastIndexByte(term, '/')+1:]
			if e.Title != "" {
				term = e.Title + " (" + term + ")"
			}
		}
		var detail []string
		if e.Count > 0 {
			detail = append(detail, fmt.Sprintf("×%d until %s", e.Count, e.Until.Local().Format(time.TimeOnly)))
		}
		if e.Bytes > 0 {
			detail = append(detail, fmt.Sprintf("%d bytes", e.Bytes))
		}
		for _, d := range []string{e.Role, e.To, e.Share, e.Detail, e.Remote} {
			if d != "" {
				detail = append(detail, d)
			}
		}
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(time.DateTime), e.Event, label.Clean(who), label.Clean(term), label.Clean(strings.Join(detail, " · ")))
		return err
	})
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	return err
}
