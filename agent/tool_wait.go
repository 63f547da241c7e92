package agent

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/termhost/termhost/ahp"
)

type waitIn struct {
	Terminal       string  `json:"terminal" jsonschema:"the terminal's id"`
	Pattern        string  `json:"pattern,omitempty" jsonschema:"a regular expression (RE2) to wait for in the output as plain text; without it, wait for the running command to finish"`
	Since          *int64  `json:"since,omitempty" jsonschema:"look at output from this cursor on (default: output from now on)"`
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty" jsonschema:"how long to wait (default 30, at most 600)"`
}

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
			res := s.result(ctx, c, t, last, statusFinished, budget)
			if last == nil {
				return waitOut{Result: res}, "No command is running and none ran yet.", nil
			}
			return waitOut{Result: res}, "No command is running; the last one: " + resultText(res), nil
		}
		res, text, err := s.awaitCommand(ctx, c, t, cmd, deadline, budget)
		return waitOut{Result: res}, text, err
	}
	return s.waitPattern(ctx, t, re, in.Since, deadline, budget)
}

// waitPattern matches the output since the cursor after each change. The
// output is copied under the session lock and rendered outside it (the
// pump and the session's other calls go on meanwhile), each rendering
// within budget and started before the deadline, so that the call returns
// at most about a budget after its timeout. Renderings are at least
// matchEvery apart, and at least as far apart as the last one took: at
// most half the call's time goes to rendering when output floods.
func (s *session) waitPattern(ctx context.Context, t *term, re *regexp.Regexp, since *int64, deadline time.Time, budget time.Duration) (waitOut, string, error) {
	s.mu.Lock()
	cursor := t.total
	if since != nil {
		cursor = *since
	}
	s.mu.Unlock()
	var match, text string
	var simplified, ended, timedOut bool
	checked, next := int64(-1), time.Time{}
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
			if t.total == checked || time.Now().Before(next) {
				return ended
			}
			b, _ := t.since(cursor)
			raw, checked, fresh = string(tailOf(b, matchWindow)), t.total, true
			return true
		})
		if err != nil {
			return waitOut{}, "", err
		}
		if timedOut || !fresh {
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
	out := waitOut{Result: Result{Terminal: ahp.TerminalIDOf(t.uri), Output: clip(text, 8<<10), Simplified: simplified}, Match: match}
	s.mu.Lock()
	out.Cursor = t.total
	s.mu.Unlock()
	note := ""
	if simplified {
		note = "\n" + simplifiedNote
	}
	switch {
	case match != "":
		out.Status = "matched"
		return out, fmt.Sprintf("Matched %q.", clip(match, 200)) + note, nil
	case timedOut:
		out.Status = "timeout"
		return out, fmt.Sprintf("No match within the timeout. Output since the cursor:\n%s", clip(text, 4<<10)) + note, nil
	}
	out.Status = statusExited
	return out, "The terminal was closed before the pattern appeared.", nil
}
