package agent

import (
	"fmt"
	"sort"
	"strings"
)

// keys are the named keys send_input accepts, as a terminal in normal
// (not application) cursor mode sends them.
var keys = map[string]string{
	"enter": "\r", "tab": "\t", "backtab": "\x1b[Z", "escape": "\x1b", "esc": "\x1b", "backspace": "\x7f", "space": " ",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F", "pageup": "\x1b[5~", "pagedown": "\x1b[6~", "delete": "\x1b[3~", "insert": "\x1b[2~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS", "f5": "\x1b[15~", "f6": "\x1b[17~",
	"f7": "\x1b[18~", "f8": "\x1b[19~", "f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// keyBytes is what a named key sends: one of keys, or Ctrl-<letter> (also
// written C-x or ^X), Ctrl-[, Ctrl-\, Ctrl-], Ctrl-@.
func keyBytes(name string) (string, error) {
	k := strings.ToLower(strings.TrimSpace(name))
	if b, ok := keys[strings.ReplaceAll(k, " ", "")]; ok {
		return b, nil
	}
	for _, prefix := range []string{"ctrl-", "ctrl+", "control-", "c-", "^"} {
		if rest, ok := strings.CutPrefix(k, prefix); ok && len(rest) == 1 {
			c := rest[0]
			switch {
			case c >= 'a' && c <= 'z':
				return string(rune(c - 'a' + 1)), nil
			case c >= '@' && c <= '_':
				return string(rune(c - '@')), nil
			}
		}
	}
	return "", fmt.Errorf("unknown key %q: use one of %s, or Ctrl-A … Ctrl-Z", name, keyNames())
}

func keyNames() string {
	names := make([]string, 0, len(keys))
	for n := range keys {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
