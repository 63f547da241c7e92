package agent

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

type waitIn struct {
	Host           string  `json:"host,omitempty" jsonschema:"the host the terminal is on, as list_terminals names it (default: the server's own)"`
	Terminal       string  `json:"terminal" jsonschema:"the terminal's id"`
	Pattern        string  `json:"pattern,omitempty" jsonschema:"a regular expression (RE2) to wait for in the output as plain text; without it, wait for the running command to finish"`
	Since          *int64  `json:"since,omitempty" jsonschema:"look at output from this cursor on (default: output from now on)"`
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty" jsonschema:"how long to wait (default 30, at most 600)"`
	MaxBytes       int     `json:"maxBytes,omitempty" jsonschema:"the most bytes of text in the result (default 16384, from 2048 to 131072): longer output is cut, and read_terminal reads the rest"`
}

func (in waitIn) hostName() string { return in.Host }

func (in waitIn) limit() int { return clampMaxBytes(in.MaxBytes) }

type waitOut struct {
	Result
	Match string `json:"match,omitempty" jsonschema:"the text the pattern matched"`
}

const (
	defaultWaitTimeout = 30
	maxPatternBytes    = 4 << 10
	matchWindow        = 64 << 10 // the output the pattern is matched against: its last 64 KiB
	matchEvery         = 100 * time.Millisecond
)

func (a *Agent) wait(ctx context.Context, s *session, in waitIn) (waitOut, string, error) {
	uri, err := terminalURI(in.Terminal)
	if err != nil {
		return waitOut{}, "", err
	}
	timeout, err := timeoutOf(in.TimeoutSeconds, defaultWaitTimeout)
	if err != nil {
		return waitOut{}, "", err
	}
	maxBytes, err := maxBytesOf(in.MaxBytes)
	if err != nil {
		return waitOut{}, "", err
	}
	var re *regexp.Regexp
	if in.Pattern != "" {
		if len(in.Pattern) > maxPatternBytes {
			return waitOut{}, "", fmt.Errorf("pattern is %d bytes; at most %d", len(in.Pattern), maxPatternBytes)
		}
		if re, err = regexp.Compile(in.Pattern); err != nil {
			return waitOut{}, "", fmt.Errorf("pattern is not a valid regular expression (RE2 syntax): %v", err)
		}
	}
	if err := s.mayUse(uri); err != nil {
		return waitOut{}, "", err
	}
	c, t, err := s.follow(ctx, uri)
	if err != nil {
		return waitOut{}, "", err
	}
	deadline, budget := time.Now().Add(seconds(timeout)), a.renderBudget(seconds(timeout))
	if re == nil {
		s.mu.Lock()
		cmd := t.running()
		last := t.cmd
		s.mu.Unlock()
		if cmd == nil {
			res := s.result(ctx, c, t, last, statusFinished, budget, maxBytes)
			if last == nil {
				return waitOut{Result: res}, "No command is running and none ran yet.", nil
			}
			return waitOut{Result: res}, "No command is running; the last one: " + resultText(res), nil
		}
		res, text, err := s.awaitCommand(ctx, c, t, cmd, deadline, budget, maxBytes)
		return waitOut{Result: res}, text, err
	}
	return s.waitPattern(ctx, c, t, re, in.Since, deadline, budget, maxBytes)
}

// waitPattern matches the output since the cursor after each change. The
// output is copied under the session lock and rendered outside it (the
// pump and the session's other calls go on meanwhile), each rendering
// within budget and started before the deadline, so that the call returns
// at most about a budget after its timeout. Renderings are at least
// matchEvery apart, and at least as far apart as the last one took: at
// most half the call's time goes to rendering when output floods. The
// result's output is the end of the text matched against, within maxBytes.
func (s *session) waitPattern(ctx context.Context, c *client.Client, t *term, re *regexp.Regexp, since *int64, deadline time.Time, budget time.Duration, maxBytes int) (waitOut, string, error) {
	s.mu.Lock()
	cursor := t.total
	if since != nil {
		cursor = min(max(*since, 0), t.total)
	}
	s.mu.Unlock()
	var match, text string
	var simplified, ended, timedOut, secret bool
	checked, next := int64(-1), time.Time{}
	var window int64 // output bytes since the cursor (text renders the last matchWindow of them)
	for match == "" {
		if !time.Now().Before(deadline) {
			timedOut = true
			break
		}
		var raw string
		fresh := false
		var err error
		timedOut, err = s.wait(ctx, deadline, matchEvery, func() bool {
			if t.gone {
				ended = true
			}
			if secretUp(c, t.uri) {
				secret = true
				return true
			}
			if t.total == checked || time.Now().Before(next) {
				return ended
			}
			b, _ := t.since(cursor)
			raw, checked, fresh = string(tailOf(b, matchWindow)), t.total, true
			window = int64(len(b))
			return true
		})
		if err != nil {
			return waitOut{}, "", err
		}
		if timedOut || !fresh || secret {
			break
		}
		start := time.Now()
		rctx, cancel := context.WithTimeout(ctx, budget)
		text, simplified = Plain(rctx, raw)
		cancel()
		took := time.Since(start)
		next = start.Add(took + max(matchEvery, took))
		if loc := re.FindStringIndex(text); loc != nil {
			match = text[loc[0]:loc[1]]
		}
	}
	shown, cut := tailText(text, maxBytes-noteBytes)
	out := waitOut{Result: Result{Terminal: ahp.TerminalIDOf(t.uri), Output: shown, Simplified: simplified,
		OutputStart: cursor, OutputBytes: window, Truncated: cut || window > matchWindow}, Match: match}
	s.mu.Lock()
	out.Cursor = t.total
	s.mu.Unlock()
	note := ""
	if out.Truncated {
		out.OmittedFrom = cursor
		note = fmt.Sprintf("\n[The output since the cursor is %d bytes: this is its end. read_terminal with mode output and since %d reads all of it, in pages.]", window, cursor)
	}
	if simplified {
		note += "\n" + simplifiedNote
	}
	switch {
	case secret && match == "":
		out.Status, out.Secret = statusInputAwaited, true
		return out, secretText(), nil
	case match != "":
		out.Status = "matched"
		return out, fmt.Sprintf("Matched %q.", clip(match, 200)) + note, nil
	case timedOut:
		out.Status = "timeout"
		return out, fmt.Sprintf("No match within the timeout. Output since the cursor:\n%s", shown) + note, nil
	}
	out.Status = statusExited
	return out, "The terminal was closed before the pattern appeared.", nil
}
