package terminals

import (
	"fmt"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/content"
	"github.com/termhost/termhost/terminals/screen"
)

// TestRedrawKeepsCommandOutput: a joiner's redraw never
// lands in a command's output, and the content, written in order, still
// draws the watcher's screen, before and after more output.
func TestRedrawKeepsCommandOutput(t *testing.T) {
	const cols, rows, budget = 40, 8, 2 << 10
	var history strings.Builder
	for i := range 200 {
		fmt.Fprintf(&history, "history line %d\r\n", i)
	}
	printed := "\x1b[31mbuild step 1\x1b[0m\r\nbuild step 2\r\n"
	for _, tc := range []struct {
		name    string
		actions []ahp.Action
		whole   bool // the running command's output is whole in the snapshot
	}{
		{"running command", []ahp.Action{data("$ "), run("make"), data(printed)}, true},
		{"running full-screen command", []ahp.Action{data("$ "), run("top"), data("\x1b[?1049h\x1b[Htop screen\x1b[5;3Hload")}, true},
		{"running command first", []ahp.Action{run("make"), data(printed)}, true},
		{"running command, output trimmed", []ahp.Action{data("$ "), run("yes"), data(history.String())}, false},
		{"completed command", []ahp.Action{data("$ "), run("make"), data(printed), finished(), data("$ ")}, false},
		{"completed command last", []ahp.Action{data("$ "), run("make"), data(printed), finished()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := content.New(budget)
			model := screen.New(cols, rows)
			model.Start()
			defer model.Close()
			var watched, cmd strings.Builder // all output; what the command printed
			inCommand := false
			apply := func(a ahp.Action) {
				store.Apply(a)
				switch a.Type {
				case ahp.TerminalData:
					model.Feed(a.Data)
					watched.WriteString(a.Data)
					if inCommand {
						cmd.WriteString(a.Data)
					}
				case ahp.TerminalCommandExecuted, ahp.TerminalCommandFinished:
					inCommand = a.Type == ahp.TerminalCommandExecuted
					if inCommand {
						model.CommandStart() // as screenTap.Action does
					}
				}
			}
			apply(data(history.String()))
			for _, a := range tc.actions {
				apply(a)
			}
			st, ok := model.Mark().Wait(t.Context())
			if !ok || st.Redraw == nil {
				t.Fatal("no redraw")
			}
			parts := withRedraw(store.Snapshot(), st)
			if last := parts[len(parts)-1]; tc.whole && last.Output != cmd.String() {
				t.Fatalf("running command's output %q, want all it printed, %q", last.Output, cmd.String())
			}

			var joined strings.Builder
			for _, p := range parts {
				joined.WriteString(p.Text())
				if p.Type == ahp.PartCommand && !strings.HasSuffix(cmd.String(), p.Output) {
					t.Fatalf("command output %q is not (a suffix of) what the command printed, %q", p.Output, cmd.String())
				}
			}
			want, got := newVT(t, cols, rows, watched.String()), newVT(t, cols, rows, joined.String())
			if diff := screenDiff(want, got); diff != "" {
				t.Fatalf("joined screen differs from the watcher's:\n%s", diff)
			}
			// More output lands where it does for the watcher.
			more := data("more output\r\n")
			state := ahp.ReduceTerminal(ahp.TerminalState{Content: parts}, more)
			want.write(more.Data)
			got.write(more.Data)
			if diff := screenDiff(want, got); diff != "" {
				t.Fatalf("after more output, joined screen differs from the watcher's:\n%s", diff)
			}
			last := state.Content[len(state.Content)-1]
			if last.Type == ahp.PartCommand && !strings.HasSuffix(cmd.String()+more.Data, last.Output) {
				t.Fatalf("the running command's output %q is not (a suffix of) what it printed", last.Output)
			}
		})
	}
}

func data(d string) ahp.Action { return ahp.Action{Type: ahp.TerminalData, Data: d} }

func run(line string) ahp.Action {
	return ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: "c1", CommandLine: line, Timestamp: 1}
}

func finished() ahp.Action {
	code := 0
	return ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: "c1", ExitCode: &code}
}

// TestRedrawNeverOverflowsSnapshot: a redraw that would take a snapshot
// past what the smallest send queue holds is left out.
func TestRedrawNeverOverflowsSnapshot(t *testing.T) {
	m := testManager(t, Config{Scrollback: 16 << 10})
	defer m.Close()
	const uri = "ahp-terminal:/big"
	for _, tc := range []struct {
		name    string
		history string
		redraw  bool
	}{
		{"small history", strings.Repeat("line\r\n", 4<<10), true},
		// As JSON, every control byte takes six: 1 MiB of them is 6 MiB.
		{"history of control bytes", strings.Repeat("\x1b[m\x01\x02\x03", 256<<10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := screen.New(40, 8)
			model.Start()
			defer model.Close()
			model.Feed(tc.history)
			snap := ahp.Snapshot{Resource: uri, State: ahp.TerminalState{Content: []ahp.Part{{Type: ahp.PartUnclassified, Value: tc.history}}}}
			tap := &screenTap{model: model, scrollback: int64(m.cfg.Scrollback), log: m.log}
			tap.Snapshot()(&snap)
			content := snap.State.(ahp.TerminalState).Content
			if got := content[0].Value != tc.history; got != tc.redraw {
				t.Fatalf("redraw added %v, want %v (content %d bytes as JSON)", got, tc.redraw, jsonSize(content))
			}
			if size := jsonSize(content); tc.redraw && size > maxWithRedraw {
				t.Fatalf("content with the redraw: %d bytes as JSON, limit %d", size, maxWithRedraw)
			}
		})
	}
}
