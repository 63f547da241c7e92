// Names and titles made safe to show: a person's name, a share link's
// label, a terminal's title (which a program sets). The same cleaning as
// the server's (internal/label, Clean; both pass
// internal/label/testdata/clean.json): no C0 or C1 control characters and
// no bidirectional controls, which would reorder what follows them
// ("evil\u202Egnp.exe" shows as "evilexe.png").

// eslint-disable-next-line no-control-regex
const hidden = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** s without control and direction characters, trimmed. */
export function cleanLabel(s: string): string {
  return s.replace(hidden, '').trim();
}
