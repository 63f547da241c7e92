// Package label makes names and titles safe to show: a person's display
// name from a single sign-on header, a share link's label, a client's
// name, a terminal's title (which a program sets). Clean is the one
// cleaning every surface uses (presence, the pages, termhost ls and
// termhost audit); the browser's copy is assets/workbench/label.ts, and
// both pass testdata/clean.json. Distinct keeps a chosen name from passing
// for one termhost gives ("Owner").
package label

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Clean is s without the characters that make a name show as something
// else: C0 and C1 controls (escape sequences, newlines, tabs) and the
// bidirectional controls (U+202A–U+202E embeddings and overrides,
// U+2066–U+2069 isolates, U+200E/U+200F marks, U+061C), which reorder what
// follows them ("evil\u202Egnp.exe" shows as "evilexe.png"); trimmed.
func Clean(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if hidden(r) {
			return -1
		}
		return r
	}, s))
}

func hidden(r rune) bool {
	switch {
	case unicode.IsControl(r), r == 0x061C, r == 0x200E, r == 0x200F,
		r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// reserved are the names termhost gives participants itself (presence,
// "Controlled by"), folded.
var reserved = []string{"owner", "you", "termhost cli", "termhost", "agent", "unnamed viewer link", "unnamed driver link"}

// Reserved reports whether name could pass for a name termhost gives
// itself: equal to one ignoring case, spacing, invisible characters,
// accents and lookalike letters (a letter of a script with Latin
// lookalikes, Cyrillic, Greek, Armenian, Cherokee or Latin beyond ASCII,
// stands for any letter, so "Оwner" with a Cyrillic О counts, as does
// "0wner").
func Reserved(name string) bool {
	f := fold(name)
	if strings.HasPrefix(f, "agent ") {
		return true
	}
	for _, w := range reserved {
		if lookalike(f, w) {
			return true
		}
	}
	return false
}

// Distinct is name as shown to others: when it could pass for a name
// termhost gives (Reserved), who it really is is added: "Owner
// (alice@corp.test)", "Owner (viewer link)".
func Distinct(name, who string) string {
	if !Reserved(name) || who == "" {
		return name
	}
	return name + " (" + Clean(who) + ")"
}

// fold is s compared loosely: compatibility-decomposed, without marks,
// invisible and format characters, lower case, runs of spaces and
// punctuation between words one space, a few ASCII lookalikes (0 1 3 5 |
// rn vv) taken for the letters they imitate.
func fold(s string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r), unicode.Is(unicode.Cf, r), hidden(r),
			unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
			continue
		case unicode.IsSpace(r), r == '_', r == '-', r == '.', r == '·':
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		r = unicode.ToLower(r)
		switch r {
		case '0':
			r = 'o'
		case '1', '|', 'i':
			r = 'l'
		case '3':
			r = 'e'
		case '5':
			r = 's'
		}
		b.WriteRune(r)
	}
	out := strings.NewReplacer("rn", "m", "vv", "w").Replace(b.String())
	return out
}

// lookalike: f (folded) could be w: the same length, and equal where f is
// ASCII (a letter of a script with Latin lookalikes may imitate any).
func lookalike(f, w string) bool {
	w = fold(w)
	fr, wr := []rune(f), []rune(w)
	if len(fr) != len(wr) {
		return false
	}
	for i, r := range fr {
		if r != wr[i] && (r < 0x80 || !unicode.In(r, unicode.Latin, unicode.Cyrillic, unicode.Greek, unicode.Armenian, unicode.Cherokee)) {
			return false
		}
	}
	return true
}
