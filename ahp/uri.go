package ahp

import (
	"fmt"
	"net/url"
	"strings"
)

// CheckTerminalURI says whether a client may name a terminal uri. The
// terminal URI is the client's choice (createTerminal creates "at the chosen
// URI"): any absolute URI is accepted, kept verbatim, except
//   - schemes AHP gives other channel kinds: ahp-root, ahp-session, ahp-chat
//     and every other ahp-* but ahp-terminal;
//   - file:, which names a directory (a cwd), not a channel;
//   - ahp-terminal: URIs that are not ahp-terminal:/<id> with a short id
//     (see TerminalID), the form termhost gives its own terminals.
//
// Schemes compare case-insensitively. A URI over MaxURI, with a space or a
// control character, or with nothing after the scheme is malformed.
func CheckTerminalURI(uri string) error {
	if err := checkLen("terminal URI", uri, MaxURI); err != nil {
		return err
	}
	if strings.ContainsFunc(uri, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("terminal URI %q has spaces or control characters", uri)
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("terminal URI %q is not an absolute URI", uri)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme+":" == TerminalScheme:
		_, err := TerminalID(uri)
		return err
	case scheme == "file":
		return fmt.Errorf("terminal URI %q: file: names a directory, not a terminal", uri)
	case strings.HasPrefix(scheme, "ahp-"):
		return fmt.Errorf("terminal URI %q: the %s: scheme is reserved by AHP for other channels", uri, scheme)
	case len(uri) == len(u.Scheme)+1:
		return fmt.Errorf("terminal URI %q has nothing after its scheme", uri)
	}
	return nil
}

// TerminalIDOf is how a terminal appears in page paths (/t/<id>), links and
// the CLI: the id of ahp-terminal:/<id> when the id has no ':', else the whole
// URI verbatim (a client's own scheme, e.g. agenthost-terminal:/<uuid>).
// TerminalURIOf turns it back into the URI. Escape it as one path segment in
// URLs (url.PathEscape, encodeURIComponent).
func TerminalIDOf(uri string) string {
	if id, err := TerminalID(uri); err == nil && uri == TerminalURI(id) && !strings.Contains(id, ":") {
		return id
	}
	return uri
}

// TerminalURIOf is the terminal URI of what TerminalIDOf returned (a page id,
// a CLI argument): a string with ':' is a URI already, anything else the id
// of ahp-terminal:/<id>.
func TerminalURIOf(id string) string {
	if strings.Contains(id, ":") {
		return id
	}
	return TerminalURI(id)
}

// FileURI is the file: URI of an absolute path, as AHP gives a terminal's
// cwd: every byte but A–Z a–z 0–9 - . _ ~ / : @ $ & + , ; = is
// percent-encoded (upper-case hex), which is what net/url writes for a
// file URL's path.
func FileURI(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }
