package agent_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolAnnotations: tools/list, through the SDK's client, gives every
// tool a title and annotations that are true of it: listing, reading and
// waiting only look; opening adds a terminal; closing one, running a
// command and typing may end or undo something, and what a command or
// typed keys start may reach anything; closing twice closes no more.
func TestToolAnnotations(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	type hints struct {
		title                                        string
		readOnly, destructive, idempotent, openWorld bool
	}
	want := map[string]hints{
		"list_terminals": {"List Terminals", true, false, true, false},
		"open_terminal":  {"Open Terminal", false, false, false, true},
		"run_command":    {"Run Command", false, true, false, true},
		"read_terminal":  {"Read Terminal", true, false, true, false},
		"send_input":     {"Send Input", false, true, false, true},
		"wait_for":       {"Wait For Output", true, false, true, false},
		"close_terminal": {"Close Terminal", false, true, true, false},
	}
	res, err := r.cs.ListTools(t.Context(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		a := tool.Annotations
		switch {
		case !ok:
			t.Errorf("tool %s is not in the table", tool.Name)
		case a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil:
			t.Errorf("%s: annotations %+v, want every hint set", tool.Name, a)
		case tool.Title != w.title || a.Title != w.title:
			t.Errorf("%s: title %q, annotations' title %q, want %q", tool.Name, tool.Title, a.Title, w.title)
		default:
			got := hints{a.Title, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
			if got != w {
				t.Errorf("%s: %+v, want %+v", tool.Name, got, w)
			}
		}
	}
}
