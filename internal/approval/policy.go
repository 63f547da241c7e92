// Package approval decides which command lines an agent (or a driver) may
// run without asking a person: a policy of rules in the shape of VS Code's
// chat.tools.terminal.autoApprove setting, read from a JSON file that is
// re-read when it changes, plus built-in defaults (README, "Approvals").
//
// A command line is parsed as shell (mvdan.cc/sh/v3/syntax) and split into
// every command it runs — the parts of &&, ||, ;, pipes, $( ), backticks,
// subshells, and the body of `bash -c '…'` when it is literal — and each is
// matched against the rules. It runs only when every one of them is
// allowed; a rule that says false wins over any that says true; anything
// the parser cannot read asks.
package approval

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Decisions.
const (
	Run = "run"
	Ask = "ask"
)

// Result is the policy's decision on a command line.
type Result struct {
	Decision string // Run or Ask
	// Rule is the key of the rules file, or the name of the built-in rule,
	// that decided ("rm", "/^npm test$/", "write redirect").
	Rule string
	// Reason says why, for people.
	Reason string
	// Suggest is the rules file key that "always allow" would add for the
	// command that asked: its command word, with its sub-command for tools
	// that have them ("git push"). Empty when Decision is Run or when no
	// rule could allow it (an unparseable line).
	Suggest string
}

// rule is one key of the rules file.
type rule struct {
	key   string
	allow bool
	words []string       // a command word or a prefix of words
	re    *regexp.Regexp // or a /regex/
}

// Policy is a parsed set of rules. The zero value (and nil) has only the
// defaults.
type Policy struct {
	rules []rule
}

// Parse reads a rules file: a JSON object whose keys are a command word
// ("rm"), a prefix of words ("git status") or a regular expression between
// slashes with optional flags i, m, s ("/^npm (test|run lint)$/i"), and
// whose values are true (run without asking) or false (always ask). An
// empty file has no rules.
func Parse(data []byte) (*Policy, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return &Policy{}, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("rules must be a JSON object of \"command\": true|false: %w", err)
	}
	p := &Policy{}
	for key, v := range raw {
		var allow bool
		if err := json.Unmarshal(v, &allow); err != nil {
			return nil, fmt.Errorf("rule %q: the value must be true or false", key)
		}
		r := rule{key: key, allow: allow}
		if re, ok, err := parseRegex(key); err != nil {
			return nil, fmt.Errorf("rule %q: %w", key, err)
		} else if ok {
			r.re = re
		} else {
			r.words = strings.Fields(key)
			if len(r.words) == 0 {
				return nil, fmt.Errorf("rule %q: empty command", key)
			}
		}
		p.rules = append(p.rules, r)
	}
	// Map order is random: sort so that the rule named in a result does
	// not change from one run to the next.
	slices.SortFunc(p.rules, func(a, b rule) int { return strings.Compare(a.key, b.key) })
	return p, nil
}

// parseRegex reads "/pattern/flags"; ok is false for a key that is not one.
func parseRegex(key string) (re *regexp.Regexp, ok bool, err error) {
	if len(key) < 2 || key[0] != '/' {
		return nil, false, nil
	}
	end := strings.LastIndexByte(key, '/')
	if end == 0 {
		return nil, false, nil
	}
	pattern, flags := key[1:end], key[end+1:]
	prefix := ""
	for _, f := range flags {
		switch f {
		case 'i', 'm', 's':
			if !strings.ContainsRune(prefix, f) {
				prefix += string(f)
			}
		case 'g', 'u', 'y', 'v', 'd': // JavaScript flags that do not change a match test
		default:
			return nil, true, fmt.Errorf("unknown regular expression flag %q (use i, m or s)", f)
		}
	}
	if prefix != "" {
		pattern = "(?" + prefix + ")" + pattern
	}
	re, err = regexp.Compile(pattern)
	if err != nil {
		return nil, true, err
	}
	return re, true, nil
}

// command is one command a command line runs.
type command struct {
	text  string   // its source text, for regex rules
	words []string // its literal words; a word that is not literal is ""
	// ask, when set, is a built-in reason to ask whatever the words are
	// (a redirect that writes a file, a download piped into a shell).
	askRule, askReason string
}

// Evaluate decides whether commandLine may run without asking.
func (p *Policy) Evaluate(commandLine string) Result {
	if strings.TrimSpace(commandLine) == "" {
		return Result{Decision: Ask, Rule: "empty", Reason: "the command line is empty"}
	}
	for _, r := range commandLine {
		if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f {
			return Result{Decision: Ask, Rule: "keys", Reason: fmt.Sprintf("the line holds the key %q: what it types cannot be read as a command line", r)}
		}
	}
	cmds, err := split(commandLine, 0)
	if err != nil {
		return Result{Decision: Ask, Rule: "unparseable", Reason: "the command line could not be read as shell: " + err.Error()}
	}
	if len(cmds) == 0 {
		return Result{Decision: Ask, Rule: "no command", Reason: "the command line runs no command the policy can check"}
	}
	var rules []rule
	if p != nil {
		rules = p.rules
	}
	// First the rules that say false, over every command: they win.
	for _, c := range cmds {
		for _, r := range rules {
			if !r.allow && r.matches(c) {
				return Result{Decision: Ask, Rule: r.key, Reason: fmt.Sprintf("the rule %q asks before `%s`", r.key, clip(c.text)), Suggest: suggest(c.words)}
			}
		}
	}
	allowedBy := ""
	for _, c := range cmds {
		if c.askRule != "" {
			return Result{Decision: Ask, Rule: c.askRule, Reason: c.askReason}
		}
		if i := slices.IndexFunc(rules, func(r rule) bool { return r.allow && r.matches(c) }); i >= 0 {
			if allowedBy == "" {
				allowedBy = rules[i].key
			}
			continue
		}
		if res, ok := builtin(c); !ok {
			res.Suggest = suggest(c.words)
			return res
		} else if allowedBy == "" {
			allowedBy = res.Rule
		}
	}
	return Result{Decision: Run, Rule: allowedBy, Reason: "every command it runs is allowed"}
}

// matches reports whether the rule applies to the command.
func (r rule) matches(c command) bool {
	if r.re != nil {
		return r.re.MatchString(c.text)
	}
	if len(c.words) < len(r.words) {
		return false
	}
	for i, w := range r.words {
		got := c.words[i]
		if got != w && (i > 0 || path.Base(got) != w) { // "rm" matches /bin/rm
			return false
		}
	}
	return true
}

// clip shortens a command for a reason.
func clip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return s
}

// maxDepth bounds the nesting of `bash -c '…'` bodies the policy reads.
const maxDepth = 4

// split parses commandLine and returns every command it runs.
func split(commandLine string, depth int) ([]command, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(commandLine), "")
	if err != nil {
		return nil, err
	}
	var cmds []command
	var inner error
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				if writes(r) {
					cmds = append(cmds, command{text: source(commandLine, n), askRule: "write redirect",
						askReason: fmt.Sprintf("`%s` writes to a file (%s)", clip(source(commandLine, n)), clip(source(commandLine, r)))})
				}
			}
		case *syntax.BinaryCmd:
			if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && downloads(n.X) && runsShell(n.Y) {
				cmds = append(cmds, command{text: source(commandLine, n), askRule: "download | shell",
					askReason: fmt.Sprintf("`%s` runs a downloaded script", clip(source(commandLine, n)))})
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true // assignments only: their values are walked
			}
			c := command{text: source(commandLine, n)}
			for _, w := range n.Args {
				lit, _ := literal(w)
				c.words = append(c.words, lit)
			}
			cmds = append(cmds, c)
			if body, ok := shellBody(n); ok {
				if depth >= maxDepth {
					inner = fmt.Errorf("shells nested more than %d deep", maxDepth)
					return false
				}
				sub, err := split(body, depth+1)
				if err != nil {
					inner = err
					return false
				}
				cmds = append(cmds, sub...)
			}
		case *syntax.DeclClause:
			c := command{text: source(commandLine, n), words: []string{n.Variant.Value}}
			cmds = append(cmds, c)
		case *syntax.CoprocClause:
			cmds = append(cmds, command{text: source(commandLine, n), askRule: "coproc", askReason: "coprocesses are not checked"})
		}
		return true
	})
	if inner != nil {
		return nil, inner
	}
	return cmds, nil
}

// source is the text of a node.
func source(s string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(s) || start > end {
		return s
	}
	return s[start:end]
}

// literal is the value of a word made only of literal parts (plain text,
// single quotes, double quotes without expansions).
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape drops the backslashes of an unquoted word (r\m is rm).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// shells run the command line their -c names.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

// shellBody is the literal body of `bash -c '…'`.
func shellBody(c *syntax.CallExpr) (string, bool) {
	name, ok := literal(c.Args[0])
	if !ok || !shells[path.Base(name)] {
		return "", false
	}
	for i := 1; i < len(c.Args)-1; i++ {
		w, ok := literal(c.Args[i])
		if !ok {
			return "", false
		}
		if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "c") {
			body, ok := literal(c.Args[i+1])
			return body, ok
		}
	}
	return "", false
}

// writes reports whether a redirect writes a file (not /dev/null and the
// like, not a duplicated descriptor).
func writes(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll,
		syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
	default:
		return false
	}
	target, ok := literal(r.Word)
	if !ok {
		return true
	}
	switch target {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return false
	}
	return true
}

// firstWord is the command word of the statement's command, if literal.
func firstWord(s *syntax.Stmt) string {
	if s == nil {
		return ""
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) > 0 {
			w, _ := literal(c.Args[0])
			return path.Base(w)
		}
	case *syntax.BinaryCmd:
		// a | b | c: the pipe's right-hand side is its last command.
		return firstWord(c.Y)
	}
	return ""
}

// downloads reports whether the left side of a pipe ends in curl or wget.
func downloads(s *syntax.Stmt) bool {
	switch firstWord(s) {
	case "curl", "wget", "fetch":
		return true
	}
	return false
}

// runsShell reports whether the right side of a pipe starts with a shell
// or an interpreter that runs what it reads.
func runsShell(s *syntax.Stmt) bool {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok {
		return runsShell(b.X)
	}
	w := firstWord(s)
	switch w {
	case "sudo", "python", "python3", "perl", "ruby", "node", "source", ".":
		return true
	}
	return shells[w]
}

// readOnly are the commands that run without a rule: they read and print
// (with the options listed in unsafeOptions refused).
var readOnly = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"find": true, "wc": true, "pwd": true, "echo": true, "printf": true, "which": true, "whoami": true, "id": true,
	"date": true, "uname": true, "hostname": true, "true": true, "false": true, "test": true, "[": true, "cd": true,
	"stat": true, "file": true, "du": true, "df": true, "sort": true, "uniq": true, "cut": true, "tr": true,
	"basename": true, "dirname": true, "realpath": true, "readlink": true, "diff": true, "cmp": true, "nl": true,
	"type": true, "jq": true, "column": true, "seq": true, "sleep": true, "tree": true, "exit": true, "return": true, ":": true, "read": true,
}

// readOnlyGit are git's sub-commands that run without a rule.
var readOnlyGit = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true, "blame": true,
}

// unsafeOptions are the options that make a read-only command write a file
// or run another command.
var unsafeOptions = map[string][]string{
	"find": {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"},
	"sort": {"-o", "--output"},
	"date": {"-s", "--set"},
	"tree": {"-o"},
	"rg":   {"--pre"},
	"git":  {"--output", "--ext-diff"},
}

// dangerous are the commands that ask whatever follows, with why.
var dangerous = map[string]string{
	"rm": "deletes files", "rmdir": "deletes directories", "shred": "destroys files", "dd": "writes devices and files",
	"sudo": "runs a command as another user", "doas": "runs a command as another user", "su": "runs a command as another user",
	"eval": "runs a command line it builds", "exec": "replaces the shell", "source": "runs a script in the shell",
	".": "runs a script in the shell", "xargs": "runs commands it builds", "chmod": "changes permissions",
	"chown": "changes owners", "kill": "ends processes", "pkill": "ends processes", "killall": "ends processes",
	"mkfs": "formats a file system", "shutdown": "stops the machine", "reboot": "restarts the machine",
}

// builtin applies the defaults to a command no rule matched: ok when it
// may run.
func builtin(c command) (Result, bool) {
	if len(c.words) == 0 || c.words[0] == "" {
		return Result{Decision: Ask, Rule: "dynamic command", Reason: fmt.Sprintf("the command name of `%s` is not literal", clip(c.text))}, false
	}
	name := path.Base(c.words[0])
	if why, ok := dangerous[name]; ok {
		return Result{Decision: Ask, Rule: name, Reason: fmt.Sprintf("`%s` %s", name, why)}, false
	}
	for _, w := range c.words[1:] {
		for _, opt := range unsafeOptions[name] {
			if w == opt || strings.HasPrefix(w, opt+"=") {
				return Result{Decision: Ask, Rule: name + " " + opt, Reason: fmt.Sprintf("`%s %s` can write files or run commands", name, opt)}, false
			}
		}
	}
	if name == "git" {
		if len(c.words) > 1 && readOnlyGit[c.words[1]] {
			return Result{Decision: Run, Rule: "git " + c.words[1]}, true
		}
	} else if readOnly[name] {
		return Result{Decision: Run, Rule: name}, true
	}
	return Result{Decision: Ask, Rule: "no rule", Reason: fmt.Sprintf("no rule allows `%s`", clip(c.text))}, false
}

// tools are commands whose second word names what they do ("git push").
var tools = map[string]bool{
	"git": true, "npm": true, "pnpm": true, "yarn": true, "go": true, "cargo": true, "docker": true, "podman": true,
	"kubectl": true, "pip": true, "pip3": true, "apt": true, "apt-get": true, "systemctl": true, "gh": true, "brew": true,
	"make": true, "dotnet": true, "terraform": true, "helm": true, "npx": true, "uv": true,
}

// suggest is the rule that would allow a command with these words.
func suggest(words []string) string {
	if len(words) == 0 || words[0] == "" {
		return ""
	}
	name := path.Base(words[0])
	if tools[name] && len(words) > 1 && words[1] != "" && !strings.HasPrefix(words[1], "-") && !strings.ContainsAny(words[1], " \t/") {
		return name + " " + words[1]
	}
	return name
}
