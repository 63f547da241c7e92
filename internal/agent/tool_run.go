package agent

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

type runIn struct {
	Host           string  `json:"host,omitempty" jsonschema:"the host the terminal is on, as list_terminals names it (default: the server's own)"`
	Terminal       string  `json:"terminal" jsonschema:"the terminal's id"`
	Command        string  `json:"command" jsonschema:"the command line, as typed at the shell prompt (several lines are pasted as one block)"`
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty" jsonschema:"how long to wait for it to finish (default 60, at most 600); it keeps running after"`
	MaxBytes       int     `json:"maxBytes,omitempty" jsonschema:"the most bytes of text in the result (default 16384, from 2048 to 131072): longer output is cut to head and tail, and read_terminal reads the rest"`
}

func (in runIn) hostName() string { return in.Host }

func (in runIn) limit() int { return clampMaxBytes(in.MaxBytes) }

// Result is a command's outcome as run_command and wait_for report it.
type Result struct {
	Terminal      string `json:"terminal"`
	Command       string `json:"command,omitempty"`
	Status        string `json:"status" jsonschema:"finished, still_running, input_awaited, terminal_exited; denied or timed_out when a person did not approve the command line (it did not run)"`
	Secret        bool   `json:"secret,omitempty" jsonschema:"with input_awaited: the program waits for a password or another secret, which only a person may type in the terminal"`
	Reason        string `json:"reason,omitempty" jsonschema:"with denied: the reason the person gave"`
	AnsweredBy    string `json:"answeredBy,omitempty" jsonschema:"with denied: who denied it"`
	ExitCode      *int   `json:"exitCode,omitempty"`
	DurationMs    int64  `json:"durationMs"`
	Output        string `json:"output" jsonschema:"the output as plain text; head and tail only when longer than maxBytes"`
	OutputBytes   int64  `json:"outputBytes" jsonschema:"size of the whole raw output"`
	OutputStart   int64  `json:"outputStart" jsonschema:"the cursor where the output begins: read_terminal with mode output and since this reads it whole, in pages, while the terminal keeps it"`
	Truncated     bool   `json:"truncated" jsonschema:"output is left out (maxBytes): see omittedFrom"`
	OmittedFrom   int64  `json:"omittedFrom,omitempty" jsonschema:"when truncated: the cursor where the output left out begins (read_terminal with mode output and since this reads it)"`
	OmittedBytes  int64  `json:"omittedBytes,omitempty" jsonschema:"when truncated: how many bytes of output are left out"`
	Simplified    bool   `json:"simplified,omitempty" jsonschema:"rendering the output as a terminal would took too long: part of it is shown with its escape sequences stripped"`
	FullOutputURL string `json:"fullOutputUrl,omitempty" jsonschema:"the terminal's whole output as text: fetch it as fullOutputAuth says; without fullOutputAuth it opens only in a browser signed in to termhost as the owner"`
	// FullOutputAuth says which credential fetches FullOutputURL (see
	// Config.LinkCredentials).
	FullOutputAuth string `json:"fullOutputAuth,omitempty" jsonschema:"how to fetch fullOutputUrl with what you already have"`
	Cursor         int64  `json:"cursor" jsonschema:"output position now, for read_terminal and wait_for since"`
}

// Statuses of a Result.
const (
	statusFinished      = "finished"
	statusRunning       = "still_running"
	statusInputAwaited  = "input_awaited"
	statusExited        = "terminal_exited"
	maxCommandBytes     = 64 << 10
	defaultRunTimeout   = 60
	startTimeout        = 10 * time.Second
	quietForInput       = 3 * time.Second
	inputAwaitedPolling = 500 * time.Millisecond
	pasteWait           = 2 * time.Second
)

func (a *Agent) run(ctx context.Context, s *session, in runIn) (Result, string, error) {
	uri, err := terminalURI(in.Terminal)
	if err != nil {
		return Result{}, "", err
	}
	timeout, err := timeoutOf(in.TimeoutSeconds, defaultRunTimeout)
	if err != nil {
		return Result{}, "", err
	}
	maxBytes, err := maxBytesOf(in.MaxBytes)
	if err != nil {
		return Result{}, "", err
	}
	if err := checkCommand(in.Command); err != nil {
		return Result{}, "", err
	}
	if err := s.mayUse(uri); err != nil {
		return Result{}, "", err
	}
	c, t, err := s.follow(ctx, uri)
	if err != nil {
		return Result{}, "", err
	}
	if strings.Contains(in.Command, "\n") {
		// The shell turns bracketed paste on as it draws its prompt, which
		// may come just after the last command's end was reported.
		_, _ = s.wait(ctx, time.Now().Add(pasteWait), 0, func() bool { return pasteMode(t.ring) })
	}
	if err := s.confirmControl(ctx, c, t.uri); err != nil {
		return Result{}, "", err
	}
	prev, err := s.startRun(c, t, in.Command)
	if err != nil {
		return Result{}, "", err
	}
	defer func() { s.mu.Lock(); t.busy = false; s.mu.Unlock() }()
	// Nothing is typed before the line is approved (when it must be).
	v, err := s.approve(ctx, c, uri, in.Command, seconds(timeout))
	if err != nil {
		return Result{}, "", err
	}
	if v.status != "" {
		s.mu.Lock()
		cursor := t.total
		s.mu.Unlock()
		r := Result{Terminal: ahp.TerminalIDOf(uri), Command: in.Command, Status: v.status, Reason: v.reason, AnsweredBy: v.answeredBy, Cursor: cursor}
		return r, v.text(in.Command), nil
	}
	s.bindCall(ctx, c, uri)
	defer s.unbindCall(c, uri)

	line := in.Command
	if strings.Contains(line, "\n") {
		// Pasted as one block (bracketed paste) and grouped, so that the
		// shell runs and reports it as one command.
		line = "\x1b[200~{ " + line + "\n}\x1b[201~"
	}
	if err := s.dispatch(ctx, c, uri, ahp.Action{Type: ahp.TerminalInput, Data: line + "\r"}); err != nil {
		return Result{}, "", s.inputRefused(c, uri, err)
	}
	// The shell reports the command once it starts it.
	var cmd *command
	timedOut, err := s.wait(ctx, time.Now().Add(min(startTimeout, seconds(timeout))), 0, func() bool {
		if t.cmd != prev && t.cmd != nil {
			cmd = t.cmd
		}
		return cmd != nil || t.gone || exited(c, uri)
	})
	switch {
	case err != nil:
		return Result{}, "", err
	case cmd == nil && !timedOut:
		return s.result(ctx, c, t, nil, statusExited, 0, maxBytes), "", nil
	case cmd == nil:
		return Result{}, "", fmt.Errorf("the shell did not start the command within %s: the line may be incomplete (an unclosed quote or bracket) "+
			"or the shell is busy. read_terminal shows the screen; send_input with keys [\"Ctrl-C\"] clears the line", min(startTimeout, seconds(timeout)))
	}
	return s.awaitCommand(ctx, c, t, cmd, time.Now().Add(seconds(timeout)), a.renderBudget(seconds(timeout)), maxBytes)
}

// startRun checks that a command can be typed now and marks the terminal
// busy; it returns the last command seen before.
func (s *session) startRun(c *client.Client, t *term, line string) (*command, error) {
	if err := s.inControl(c, t.uri); err != nil {
		return nil, err
	}
	st, _ := c.Terminal(t.uri)
	id := ahp.TerminalIDOf(t.uri)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case t.gone:
		return nil, fmt.Errorf("terminal %s was closed: open a new one with open_terminal", id)
	case t.busy:
		return nil, fmt.Errorf("another run_command is in progress in terminal %s: wait for it, or open another terminal to run commands side by side", id)
	case st.SupportsCommandDetection == nil || !*st.SupportsCommandDetection:
		return nil, fmt.Errorf("terminal %s reports no command ends (its shell has no shell integration, or runs a program): "+
			"use send_input to type and wait_for with a pattern to see the result, or open a new terminal with open_terminal", id)
	}
	if r := t.running(); r != nil {
		return nil, fmt.Errorf("command %q is still running in terminal %s (for %s): wait for it with wait_for, "+
			"interrupt it with send_input keys [\"Ctrl-C\"], or open another terminal", clip(r.line, 80), id, time.Since(r.started).Round(time.Second))
	}
	if strings.Contains(line, "\n") && !pasteMode(t.ring) {
		return nil, fmt.Errorf("terminal %s's shell does not accept a pasted block (no bracketed paste): run the lines one at a time, or join them with ;", id)
	}
	t.busy = true
	return t.cmd, nil
}

// awaitCommand waits for cmd to finish, for the deadline, for the
// terminal to exit, for a prompt that waits for input, or for a person to
// take control. Its output is rendered within budget (see Plain), cut to
// maxBytes of text.
func (s *session) awaitCommand(ctx context.Context, c *client.Client, t *term, cmd *command, deadline time.Time, budget time.Duration, maxBytes int) (Result, string, error) {
	status := ""
	lost, secret := false, false
	var secretSeen time.Time // when the terminal was first seen at a secret prompt
	timedOut, err := s.wait(ctx, deadline, inputAwaitedPolling, func() bool {
		up := secretUp(c, t.uri)
		if !up {
			secretSeen = time.Time{}
		} else if secretSeen.IsZero() {
			secretSeen = time.Now()
		}
		switch {
		case cmd.done:
			status = statusFinished
		case t.gone || exited(c, t.uri):
			status = statusExited
		case s.lostControl(c, t.uri):
			lost = true
		case up && (promptShown(cmd) || time.Since(secretSeen) >= quietForInput):
			// The prompt's text may reach us after the terminal's modes
			// say it waits: report it with its prompt, or after a quiet
			// while for a program that prints none.
			status, secret = statusInputAwaited, true
		case awaitsInput(t, cmd):
			status = statusInputAwaited
		}
		return status != "" || lost
	})
	if err != nil {
		return Result{}, "", err
	}
	if timedOut {
		status = statusRunning
	}
	res := s.result(ctx, c, t, cmd, status, budget, maxBytes)
	res.Secret = secret
	if lost {
		return Result{}, "", fmt.Errorf("%w. The command is still running; its output so far:\n%s", s.inControl(c, t.uri), clip(res.Output, 2000))
	}
	return res, resultText(res), nil
}

// lostControl reports whether a terminal this session opened has been
// taken by someone else (called under the session lock).
func (s *session) lostControl(c *client.Client, uri string) bool {
	if !s.opened[uri] {
		return false
	}
	st, ok := c.Terminal(uri)
	return ok && !s.holds(st.Claim)
}

// awaitsInput guesses that a command waits for the terminal's input: it
// printed a prompt (a last line without a newline) and has been quiet for
// quietForInput since. It runs under the session lock, on every change:
// the prompt is read by strip, in one linear pass, not by the emulator.
func awaitsInput(t *term, cmd *command) bool {
	return time.Since(t.lastOut) >= quietForInput && promptShown(cmd)
}

// promptShown reports whether cmd's output ends in an unfinished,
// non-blank line: what a prompt looks like.
func promptShown(cmd *command) bool {
	if cmd.bytes == 0 {
		return false
	}
	tail := tailOf(cmd.tail, 512)
	if len(tail) == 0 || tail[len(tail)-1] == '\n' {
		return false
	}
	lines := strings.Split(strip(string(tail)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]) != ""
}

// result builds the Result of cmd (nil: the terminal ended first). Its
// output is copied under the session lock and rendered after, within
// budget: the pump and the session's other calls never wait for it. The
// output's text is cut to head and tail when longer than maxBytes allows.
func (s *session) result(ctx context.Context, c *client.Client, t *term, cmd *command, status string, budget time.Duration, maxBytes int) Result {
	s.mu.Lock()
	id := ahp.TerminalIDOf(t.uri)
	r := Result{Terminal: id, Status: status, Cursor: t.total}
	if base := s.linkBase(c); base != nil {
		r.FullOutputURL = client.TerminalURL(base, id) + "/output.txt"
		r.FullOutputAuth = s.a.cfg.LinkCredentials
	}
	if cmd == nil {
		s.mu.Unlock()
		return r
	}
	r.Command, r.OutputBytes, r.OutputStart = cmd.line, cmd.bytes, cmd.start
	head, tail, tailAt := cmd.output()
	if cmd.done {
		r.ExitCode = cmd.exitCode
	}
	if cmd.durationMs != nil {
		r.DurationMs = *cmd.durationMs
	} else {
		r.DurationMs = time.Since(cmd.started).Milliseconds()
	}
	s.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var omittedFrom int64
	r.Output, omittedFrom, r.OmittedBytes, r.Simplified = renderOutput(rctx, head, tail, tailAt, cmd.start, maxBytes-noteBytes)
	if r.OmittedBytes > 0 {
		r.Truncated, r.OmittedFrom = true, cmd.start+omittedFrom
	}
	return r
}

// output is what is kept of the command's output: its head, and its tail
// from tailAt on (offsets in the output); when tailAt is within the head,
// the two hold all of it.
func (c *command) output() (head, tail string, tailAt int64) {
	return string(c.head), string(c.tail), c.bytes - int64(len(c.tail))
}

// renderOutput renders a command's output (what output returned; it began
// at the terminal's cursor start) as plain text of at most budget bytes:
// all of it, or its head and its tail with a line between them that says
// how many bytes are left out and from which cursor read_terminal reads
// them. omittedFrom is the offset in the output where they begin.
func renderOutput(ctx context.Context, head, tail string, tailAt, start int64, budget int) (text string, omittedFrom, omitted int64, simplified bool) {
	if tailAt <= int64(len(head)) { // all of it is known
		whole := head + tail[int64(len(head))-tailAt:]
		text, n, simplified := renderPage(ctx, whole, budget)
		if n == len(whole) {
			return strings.TrimRight(text, "\n"), 0, 0, simplified
		}
		head, tail, tailAt = whole, whole, 0
	}
	headText, hn, headSimplified := renderPage(ctx, head, budget/2)
	tailText, from, tailSimplified := renderTail(ctx, tail, budget/2)
	simplified = headSimplified || tailSimplified
	tailStart := tailAt + int64(from)
	if tailStart <= int64(hn) { // the two meet (text longer than its bytes): the tail from the head's end
		tailText, tailSimplified = plainPage(ctx, tail[int64(hn)-tailAt:])
		return strings.TrimRight(headText+tailText, "\n"), 0, 0, simplified || tailSimplified
	}
	omittedFrom, omitted = int64(hn), tailStart-int64(hn)
	text = strings.TrimRight(headText, "\n") +
		fmt.Sprintf("\n[… %d bytes omitted: read_terminal with mode output and since %d reads them …]\n", omitted, start+omittedFrom) +
		strings.TrimRight(tailText, "\n")
	return text, omittedFrom, omitted, simplified
}

func resultText(r Result) string {
	var b strings.Builder
	switch r.Status {
	case statusFinished:
		code := "unknown"
		if r.ExitCode != nil {
			code = strconv.Itoa(*r.ExitCode)
		}
		fmt.Fprintf(&b, "Exit code %s after %s.", code, time.Duration(r.DurationMs)*time.Millisecond)
	case statusRunning:
		fmt.Fprintf(&b, "Still running after %s (it keeps running): wait_for waits again, send_input keys [\"Ctrl-C\"] interrupts.", time.Duration(r.DurationMs)*time.Millisecond)
	case statusInputAwaited:
		if r.Secret {
			b.WriteString(secretText())
			break
		}
		b.WriteString("The command seems to wait for input (it printed a prompt and went quiet): answer with send_input, or interrupt with keys [\"Ctrl-C\"].")
	case statusExited:
		b.WriteString("The terminal exited (or was closed) before the command finished.")
	}
	if r.Truncated {
		fmt.Fprintf(&b, " Output (%d bytes, cut to head and tail within maxBytes):\n", r.OutputBytes)
	} else if r.Output != "" {
		b.WriteString(" Output:\n")
	}
	b.WriteString(r.Output)
	if r.Simplified {
		b.WriteString("\n" + simplifiedNote)
	}
	return b.String()
}

// checkCommand refuses what cannot be typed as a command line.
func checkCommand(line string) error {
	switch {
	case strings.TrimSpace(line) == "":
		return fmt.Errorf("command is empty: pass the command line to run")
	case len(line) > maxCommandBytes:
		return fmt.Errorf("command is %d bytes, more than the %d a command line may have here: write it to a script file and run that", len(line), maxCommandBytes)
	case strings.Contains(line, "\x1b[201~"):
		return fmt.Errorf("command contains the end-of-paste sequence ESC [201~, which would end the paste early: remove it")
	}
	for _, r := range line {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return fmt.Errorf("command contains the control character %q, which the shell would act on as a key: use send_input for keys", r)
		}
	}
	return nil
}

// pasteMode reports whether the shell last turned bracketed paste on.
func pasteMode(ring []byte) bool {
	return bytes.LastIndex(ring, []byte("\x1b[?2004h")) > bytes.LastIndex(ring, []byte("\x1b[?2004l"))
}

// bindCall binds this session's claim to the tool call, so people see the
// running call; a terminal not held by the session is left alone.
func (s *session) bindCall(ctx context.Context, c *client.Client, uri string) {
	st, ok := c.Terminal(uri)
	if !ok || !s.holds(st.Claim) {
		return
	}
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	claim := s.claim
	claim.TurnID, claim.ToolCallID = "turn-"+strconv.FormatInt(n, 10), "call-"+strconv.FormatInt(n, 10)
	// Not waited for: the input dispatched next follows it on the socket,
	// and a refusal (a person took the terminal meanwhile) shows there.
	_, _ = c.Dispatch(ctx, uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: claim})
}

// unbindCall narrows the claim back once the call returns.
func (s *session) unbindCall(c *client.Client, uri string) {
	st, ok := c.Terminal(uri)
	if !ok || !s.holds(st.Claim) || st.Claim.ToolCallID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), dispatchTimeout)
	defer cancel()
	_, _ = c.Dispatch(ctx, uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: s.claim})
}

// inputRefused explains a refused input: a person took control, or the
// server's reason.
func (s *session) inputRefused(c *client.Client, uri string, err error) error {
	if cerr := s.inControl(c, uri); cerr != nil {
		return cerr
	}
	return fmt.Errorf("typing into terminal %s failed: %w", ahp.TerminalIDOf(uri), err)
}

// exited reports whether a terminal has exited or left the catalogue
// (disposed: a closed terminal's channel sends no exit of its own).
func exited(c *client.Client, uri string) bool {
	if st, ok := c.Terminal(uri); ok && st.Lifecycle.Exited() {
		return true
	}
	return !inCatalogue(c, uri)
}

// inCatalogue reports whether the server lists the terminal (true while
// the catalogue is unknown).
func inCatalogue(c *client.Client, uri string) bool {
	root, ok := c.Root()
	if !ok {
		return true
	}
	for _, info := range root.Terminals {
		if info.Resource == uri {
			return true
		}
	}
	return false
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
