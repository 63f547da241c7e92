package agent

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTools registers the tools. Each handler returns structured content
// and a short text; every failure is an error, which the SDK sends as a
// tool result with isError and the error's sentence. Each tool's
// annotations say what it does to the terminals (hints for the client,
// which may ask the user before a call that is not read-only).
func (a *Agent) addTools() {
	addTool(a, toolList, "List Terminals", readOnly, "List the terminals this agent may use (by default those it opened): id, title, working directory, running command, last exit code, who controls it, who watches.", a.list)
	addTool(a, toolOpen, "Open Terminal", effects{openWorld: true}, "Open a new terminal on the user's termhost server, visible live in their browser, running their shell (or a given program). Returns its id for the other tools.", a.open)
	addTool(a, toolRun, "Run Command", effects{destructive: true, openWorld: true}, "Run one shell command line in a terminal and wait for it to finish: returns its exit code, duration and output as plain text (long output cut to head and tail, with the cursor to read the rest from with read_terminal). On timeout the command keeps running: wait_for continues, send_input with keys [\"Ctrl-C\"] interrupts.", a.run)
	addTool(a, toolRead, "Read Terminal", readOnly, "Read a terminal: its current screen (mode screen, the default), or its output as plain text since a cursor (mode output), a page of at most maxBytes at a time: pass the cursor it returns as since to read on.", a.read)
	addTool(a, toolInput, "Send Input", effects{destructive: true, openWorld: true}, "Type into a terminal: text and/or named keys (Enter, Tab, Escape, Up, Down, Left, Right, Backspace, Ctrl-C, Ctrl-D …), for interactive programs and prompts.", a.input)
	addTool(a, toolWait, "Wait For Output", readOnly, "Wait until a regular expression appears in a terminal's new output, or (without a pattern) until its running command finishes; with a timeout.", a.wait)
	addTool(a, toolClose, "Close Terminal", effects{destructive: true, idempotent: true}, "Close a terminal this agent opened, ending whatever runs in it.", a.closeTerminal)
}

// effects are a tool's MCP annotations: what a call does beyond reading.
// A tool that is not read-only changes the terminals: destructive when it
// may end or undo something (a command, a program, a terminal), idempotent
// when calling it again with the same arguments changes nothing more,
// open world when what it starts may reach anything outside termhost.
type effects struct {
	readOnly, destructive, idempotent, openWorld bool
}

// readOnly is the effects of a tool that only looks.
var readOnly = effects{readOnly: true, idempotent: true}

func (e effects) annotations(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: e.readOnly, DestructiveHint: &e.destructive,
		IdempotentHint: e.idempotent, OpenWorldHint: &e.openWorld}
}

// Tool names.
const (
	toolList  = "list_terminals"
	toolOpen  = "open_terminal"
	toolRun   = "run_command"
	toolRead  = "read_terminal"
	toolInput = "send_input"
	toolWait  = "wait_for"
	toolClose = "close_terminal"
)

// handler is a tool's job: given the session, it returns the structured
// result and its short text.
type handler[In, Out any] func(ctx context.Context, s *session, in In) (Out, string, error)

func addTool[In, Out any](a *Agent, name, title string, e effects, description string, h handler[In, Out]) {
	mcp.AddTool(a.srv, &mcp.Tool{Name: name, Title: title, Description: description, Annotations: e.annotations(title)},
		func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			var zero Out
			s, err := a.session(req)
			if err != nil {
				return nil, zero, err
			}
			if h, ok := any(in).(hosted); ok {
				if s, err = s.onHost(ctx, h.hostName()); err != nil {
					return nil, zero, err
				}
			}
			out, text, err := h(ctx, s, in)
			if err != nil {
				a.cfg.Logger.Debug("tool failed", "tool", name, "err", err)
				return nil, zero, err
			}
			limit := defaultMaxBytes
			if l, ok := any(in).(limited); ok {
				limit = l.limit()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: capText(text, limit)}}}, out, nil
		})
}

// timeoutOf reads a timeoutSeconds argument.
func timeoutOf(seconds float64, def float64) (float64, error) {
	switch {
	case seconds == 0:
		return def, nil
	case seconds < 0 || seconds > maxTimeoutSeconds:
		return 0, fmt.Errorf("timeoutSeconds must be between 1 and %d (got %g); a longer job can be waited for again with wait_for", maxTimeoutSeconds, seconds)
	}
	return seconds, nil
}

const maxTimeoutSeconds = 600
