package shellint

import "testing"

// A line zsh cannot parse is a command that failed, like any other; a
// comment line is no command.
func TestZshParseErrorIsACommand(t *testing.T) {
	s := startShell(t, "zsh", shellSetup{files: map[string]string{".zshrc": "setopt interactive_comments\n"}})
	s.started()
	got, _ := s.runCommands("echo )\r", 1)
	if got[0].exec.CommandLine != "echo )" || got[0].fin.ExitCode == nil || *got[0].fin.ExitCode == 0 {
		s.fail("typing echo ): command %q exit %v, want echo ) with a failure", got[0].exec.CommandLine, fmtPtr(got[0].fin.ExitCode))
	}
	s.noCommand("# a note\r")
	s.noCommand("\r")
	if res := s.runCommand("true\r"); res.exec.CommandLine != "true" {
		s.fail("after the parse error: command line %q, want true", res.exec.CommandLine)
	}
	s.checkClean()
}
