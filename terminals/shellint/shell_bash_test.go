package shellint

import (
	"fmt"
	"strings"
	"testing"
)

// Commands bash runs without a DEBUG trap before them (a subshell) or
// without a prompt between them (the lines of a multi-line paste) are each
// reported, with their command line and exit status.
func TestBashCommandsWithoutTrapOrPrompt(t *testing.T) {
	type cmd struct {
		line string
		exit *int // nil: unknown
	}
	const paste = "\x1b[200~%s\x1b[201~\r" // bracketed paste, then Enter
	tests := []struct {
		name  string
		rc    string // extra ~/.bashrc
		keys  string
		want  []cmd
		wantO string // in the output of the last command
	}{
		{name: "subshell", keys: "(exit 3)\r", want: []cmd{{"(exit 3)", code(3)}}},
		{name: "subshell with output", keys: "(echo sub; exit 5)\r", want: []cmd{{"(echo sub; exit 5)", code(5)}}},
		{name: "false", keys: "false\r", want: []cmd{{"false", code(1)}}},
		{name: "bash -c exit", keys: "bash -c 'exit 4'\r", want: []cmd{{"bash -c 'exit 4'", code(4)}}},
		// A line bash cannot parse is a command that failed, like any other.
		{name: "syntax error", keys: "if then\r", want: []cmd{{"if then", code(2)}}},
		{name: "syntax error after a comment", keys: "(exit 2)\r# a note\rfi\r", want: []cmd{{"(exit 2)", code(2)}, {"fi", code(2)}}},
		{
			name: "pasted lines", keys: fmt.Sprintf(paste, "echo one\necho two\n"),
			want: []cmd{{"echo one", code(0)}, {"echo two", code(0)}}, wantO: "two",
		},
		{
			name: "pasted lines with a loop", keys: fmt.Sprintf(paste, "false\nfor i in 1 2; do echo x$i; done"),
			want: []cmd{{"false", code(1)}, {"for i in 1 2; do echo x$i; done", code(0)}}, wantO: "x2",
		},
		{
			// The subshell's status is known; the command before it lost its own.
			name: "pasted subshell", keys: fmt.Sprintf(paste, "echo one\n(exit 6)\necho three"),
			want: []cmd{{"echo one", nil}, {"(exit 6)", code(6)}, {"echo three", code(0)}}, wantO: "three",
		},
		{
			// Not in history: the simple command stands for the line.
			name: "pasted lines kept out of history", rc: "HISTCONTROL=ignorespace\n", keys: fmt.Sprintf(paste, " echo one\n echo two"),
			want: []cmd{{"echo one", code(0)}, {"echo two", code(0)}}, wantO: "two",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startShell(t, "bash", shellSetup{files: map[string]string{".bashrc": tc.rc}})
			s.started()
			got, out := s.runCommands(tc.keys, len(tc.want))
			for i, w := range tc.want {
				g := got[i]
				if g.exec.CommandLine != w.line || fmt.Sprint(fmtPtr(g.fin.ExitCode)) != fmt.Sprint(fmtPtr(w.exit)) {
					s.fail("typing %q: command %d is %q exit %v, want %q exit %v", tc.keys, i+1, g.exec.CommandLine, fmtPtr(g.fin.ExitCode), w.line, fmtPtr(w.exit))
				}
			}
			if !strings.Contains(out, tc.wantO) {
				s.fail("typing %q: the last command's output %q lacks %q", tc.keys, out, tc.wantO)
			}
			// Then the prompt is back to normal: no command on an empty Enter,
			// and the next command is one command.
			s.noCommand("\r")
			if res := s.runCommand("true\r"); res.exec.CommandLine != "true" {
				s.fail("after %q: command line %q, want true", tc.keys, res.exec.CommandLine)
			}
			s.checkClean()
		})
	}
}

// runCommands types keys, waits for n commands to start and finish (each
// finished before the next starts) and for the next prompt, and returns
// them with the last one's output.
func (s *session) runCommands(keys string, n int) ([]cmdResult, string) {
	s.t.Helper()
	from := len(s.snapshot())
	s.send(keys)
	var got []cmdResult
	var out strings.Builder
	var bad string // split runs under the session's lock: s.fail only after it
	split := func(evs []Event) bool {
		got, out, bad = nil, strings.Builder{}, ""
		for _, e := range evs[from:] {
			switch e.Kind {
			case CommandExecuted:
				if len(got) > 0 && got[len(got)-1].fin.Kind != CommandFinished {
					bad = fmt.Sprintf("%s started before %s finished", e.ID, got[len(got)-1].exec.ID)
				}
				got = append(got, cmdResult{exec: e})
				out.Reset()
			case CommandFinished:
				if len(got) == 0 || got[len(got)-1].exec.ID != e.ID {
					bad = e.ID + " finished, not the one started"
				}
				got[len(got)-1].fin = e
			case Data:
				if len(got) > 0 && got[len(got)-1].fin.Kind != CommandFinished {
					out.WriteString(e.Text)
				}
			}
		}
		return bad != "" || len(got) >= n && got[len(got)-1].fin.Kind == CommandFinished
	}
	s.waitFor(fmt.Sprintf("%d commands from %q", n, keys), func(evs []Event, _ string) bool { return split(evs) })
	s.waitReady()
	split(s.snapshot())
	if bad != "" {
		s.fail("typing %q: %s", keys, bad)
	}
	if len(got) != n {
		s.fail("typing %q gave %d commands, want %d", keys, len(got), n)
	}
	return got, out.String()
}
