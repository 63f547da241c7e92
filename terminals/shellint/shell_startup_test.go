package shellint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The user's own startup files, hooks and options with the integration.

// TestUserStartupFiles: the user's files still run, never see the nonce,
// and a fake marker they print creates no command.
func TestUserStartupFiles(t *testing.T) {
	tests := []struct {
		shell string
		args  []string
		files map[string]string
		want  []string // rc-<tag> files that must exist
		not   []string // rc-<tag> files that must not exist
		probe string   // command printing "login-yes" for login shells
	}{
		{shell: "bash", files: map[string]string{".bashrc": rcProbe("bashrc"), ".bash_profile": rcProbe("profile")}, want: []string{"bashrc"}, not: []string{"profile"}},
		{shell: "bash", args: []string{"-l"}, files: map[string]string{".bashrc": rcProbe("bashrc"), ".bash_profile": rcProbe("profile")}, want: []string{"profile"}, not: []string{"bashrc"}},
		{shell: "zsh", files: map[string]string{".zshenv": rcProbe("zshenv"), ".zshrc": rcProbe("zshrc"), ".zprofile": rcProbe("zprofile"), ".zlogin": rcProbe("zlogin")}, want: []string{"zshenv", "zshrc"}, not: []string{"zprofile", "zlogin"}},
		{shell: "zsh", args: []string{"-l"}, files: map[string]string{".zshenv": rcProbe("zshenv"), ".zshrc": rcProbe("zshrc"), ".zprofile": rcProbe("zprofile"), ".zlogin": rcProbe("zlogin")}, want: []string{"zshenv", "zprofile", "zshrc", "zlogin"}, probe: `[[ -o login ]] && echo login-yes`},
		{shell: "fish", files: map[string]string{".config/fish/config.fish": fishProbe}, want: []string{"config"}},
		{shell: "fish", args: []string{"-l"}, files: map[string]string{".config/fish/config.fish": fishProbe}, want: []string{"config"}, probe: `status is-login; and echo login-yes`},
	}
	for _, tc := range tests {
		t.Run(tc.shell+strings.Join(tc.args, ""), func(t *testing.T) {
			t.Parallel()
			s := startShell(t, tc.shell, shellSetup{args: tc.args, files: tc.files})
			s.started()
			for _, tag := range tc.want {
				if _, err := os.Stat(filepath.Join(s.home, "rc-"+tag)); err != nil {
					s.fail("user file %s was not sourced: %v", tag, err)
				}
			}
			for _, tag := range tc.not {
				if _, err := os.Stat(filepath.Join(s.home, "rc-"+tag)); !errors.Is(err, os.ErrNotExist) {
					s.fail("user file %s was sourced, want not: %v", tag, err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(s.home, "rc-env")); err != nil || len(b) != 0 {
				s.fail("user files saw AHPSH_ variables: %q (err %v)", b, err)
			}
			if cmds := countKind(s.snapshot(), CommandExecuted); cmds != 0 {
				s.fail("fake markers from user files created %d commands", cmds)
			}
			keys := "true\r"
			if tc.probe != "" {
				keys = tc.probe + "\r"
			}
			res := s.runCommand(keys)
			if res.exec.ID != "cmd-1" {
				s.fail("first command has id %s, want cmd-1", res.exec.ID)
			}
			if tc.probe != "" && !strings.Contains(res.output, "login-yes") {
				s.fail("not a login shell: %q", res.output)
			}
			s.checkClean()
		})
	}
}

const fishProbe = `echo sourced >> "$HOME/rc-config"
env | grep AHPSH_ >> "$HOME/rc-env"
printf '\e]633;C\a\e]633;E;fake\a'
`

func countKind(evs []Event, k Kind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// TestShellOptions covers the user's own hooks and options surviving the
// injection: bash's DEBUG trap and PROMPT_COMMAND, history suppression,
// bash-preexec, and zsh with the user's ZDOTDIR.
func TestShellOptions(t *testing.T) {
	type probe struct {
		keys, line, wantOut string
		notOut              string
		noWait              bool // only wait for the next prompt
		anyID               bool // the id may have skipped
	}
	tests := []struct {
		name   string
		shell  string
		setup  shellSetup
		probes []probe
	}{
		{
			name:  "bash user hooks and no history",
			shell: "bash",
			setup: shellSetup{
				env: []string{"AHPSH_NO_HISTORY=1"},
				files: map[string]string{".bashrc": "trap 'userdbg=1' DEBUG\n" +
					"PROMPT_COMMAND='pc_ran=$((pc_ran+1))'\n"},
			},
			probes: []probe{
				{keys: `echo "ud=$userdbg pc=$((pc_ran>0)) hc=$HISTCONTROL"`, wantOut: "ud=1 pc=1 hc=ignorespace"},
				{keys: " echo secret", line: "echo secret", wantOut: "secret"},
				{keys: "true", line: "true"},
				// An entry put in front of our first prompt hook is moved
				// behind it, so it is not reported as a command.
				{keys: `PROMPT_COMMAND=("front=1" "${PROMPT_COMMAND[@]}")`, line: `PROMPT_COMMAND=("front=1" "${PROMPT_COMMAND[@]}")`},
				{keys: "true", line: "true"},
				{keys: `echo "front=$front first=${PROMPT_COMMAND[0]}"`, wantOut: "front=1 first=__ahpsh_precmd"},
				// Replacing PROMPT_COMMAND loses that prompt's finish; the
				// hooks come back for the next one.
				{keys: `PROMPT_COMMAND="front=2"`, noWait: true},
				{keys: `true`, noWait: true},
				{keys: "echo healed", line: "echo healed", wantOut: "healed", anyID: true},
			},
		},
		{
			name:  "bash with bash-preexec",
			shell: "bash",
			setup: shellSetup{files: map[string]string{".bashrc": bashPreexecShim}},
			probes: []probe{
				{keys: "true", line: "true"},
				{keys: "echo one two", line: "echo one two", wantOut: "one two"},
				// Registered in its arrays; its DEBUG trap left alone.
				{keys: `[[ ${precmd_functions[0]} == __ahpsh_precmd ]] && trap -p DEBUG`, wantOut: "trap -- '__bp_preexec_invoke_exec' DEBUG"},
				{keys: "", line: ""},
				{keys: "false", line: "false"},
			},
		},
		{
			name:  "zsh with the user's ZDOTDIR and no history",
			shell: "zsh",
			setup: shellSetup{
				env: []string{"ZDOTDIR={HOME}/zd", "AHPSH_NO_HISTORY=1"},
				files: map[string]string{
					"zd/.zshrc":  "PS1='RDY> '\nzdrc=yes\n",
					"zd/.zshenv": "zdenv=yes\n",
				},
			},
			probes: []probe{
				{keys: `[[ -o histignorespace ]] && echo "his=yes rc=$zdrc env=$zdenv zd=$ZDOTDIR"`, wantOut: "his=yes rc=yes env=yes zd=/"},
				// A hook put in front of ours is moved behind it: its
				// output is not the next command's.
				{keys: `front() { echo FRONT-HOOK }; precmd_functions=(front $precmd_functions)`, anyID: true},
				{keys: `echo "first=$precmd_functions[1] zd=$ZDOTDIR"`, wantOut: "first=__ahpsh_precmd", notOut: "FRONT-HOOK"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startShell(t, tc.shell, tc.setup)
			s.started()
			id := 1
			for _, p := range tc.probes {
				if p.keys == "" {
					s.noCommand("\r")
					continue
				}
				if p.noWait {
					s.send(p.keys + "\r")
					s.waitReady()
					continue
				}
				res := s.runCommand(p.keys + "\r")
				if want := fmt.Sprintf("cmd-%d", id); res.exec.ID != want && !p.anyID {
					s.fail("%q: id %s, want %s", p.keys, res.exec.ID, want)
				}
				id++
				if p.line != "" && res.exec.CommandLine != p.line {
					s.fail("%q: command line %q, want %q", p.keys, res.exec.CommandLine, p.line)
				}
				if !strings.Contains(res.output, p.wantOut) {
					s.fail("%q: output %q, want it to contain %q", p.keys, res.output, p.wantOut)
				}
				if p.notOut != "" && strings.Contains(res.output, p.notOut) {
					s.fail("%q: output %q contains %q", p.keys, res.output, p.notOut)
				}
				if tc.shell == "zsh" && !strings.Contains(res.output, "zd="+s.home+"/zd") && p.wantOut != "" {
					s.fail("%q: ZDOTDIR is not the user's: %q", p.keys, res.output)
				}
			}
			s.checkClean()
		})
	}
}

// bashPreexecShim mimics the contract of bash-preexec (rcaloras): it owns
// PROMPT_COMMAND and the DEBUG trap, calls precmd_functions with $? set and
// preexec_functions with the command line.
const bashPreexecShim = `PS1='RDY> '
bash_preexec_imported=defined
precmd_functions=()
preexec_functions=()
__bp_ret() { return "$1"; }
__bp_precmd_invoke_cmd() {
	local s=$? f
	for f in "${precmd_functions[@]}"; do __bp_ret "$s"; "$f"; done
}
__bp_interactive_mode() { __bp_mode=on; }
__bp_preexec_invoke_exec() {
	[[ -n ${__bp_mode-} ]] || return 0
	__bp_mode=
	case $BASH_COMMAND in __bp_*) return 0 ;; esac
	local c f
	c=$(HISTTIMEFORMAT= builtin history 1)
	c=${c#*[0-9]  }
	for f in "${preexec_functions[@]}"; do "$f" "$c"; done
}
PROMPT_COMMAND=$'__bp_precmd_invoke_cmd\n__bp_interactive_mode'
trap '__bp_preexec_invoke_exec' DEBUG
`
