package ahp

// TerminalIDOf is the id in the URI of a terminal already known to be valid
// (a catalogue entry, a share link's terminal): ahp-terminal:/<id> → <id>.
// Any other string comes back unchanged. Untrusted input goes through
// TerminalID, which says what is wrong with it.
func TerminalIDOf(uri string) string {
	if id, err := TerminalID(uri); err == nil {
		return id
	}
	return uri
}
