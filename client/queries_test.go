package client

import (
	"strings"
	"testing"
)

var queryCases = []struct {
	name, in, want string
}{
	// Queries: removed, the text around them kept.
	{"DA1", "a\x1b[cb", "ab"},
	{"DA1 with 0", "a\x1b[0cb", "ab"},
	{"DA2", "a\x1b[>cb", "ab"},
	{"DA2 with 0", "a\x1b[>0cb", "ab"},
	{"DA3", "a\x1b[=cb", "ab"},
	{"DSR cursor position", "a\x1b[6nb", "ab"},
	{"DSR status", "a\x1b[5nb", "ab"},
	{"DEC DSR", "a\x1b[?6nb", "ab"},
	{"colour scheme query", "a\x1b[?996nb", "ab"},
	{"DECRQM ANSI", "a\x1b[4$pb", "ab"},
	{"DECRQM DEC", "a\x1b[?2026$pb", "ab"},
	{"XTVERSION", "a\x1b[>qb", "ab"},
	{"XTVERSION with 0", "a\x1b[>0qb", "ab"},
	{"DECREQTPARM", "a\x1b[xb", "ab"},
	{"window size in pixels", "a\x1b[14tb", "ab"},
	{"window size in cells", "a\x1b[18tb", "ab"},
	{"window title report", "a\x1b[21tb", "ab"},
	{"cell size", "a\x1b[16tb", "ab"},
	{"kitty keyboard flags", "a\x1b[?ub", "ab"},
	{"XTQMODKEYS", "a\x1b[?4mb", "ab"},
	{"XTSMGRAPHICS", "a\x1b[?1;1;0Sb", "ab"},
	{"DECRQPSR", "a\x1b[1$wb", "ab"},
	{"DECRQTSR", "a\x1b[1$ub", "ab"},
	{"DECRQCRA", "a\x1b[1;1;1;1;1;1*yb", "ab"},
	{"DECID", "a\x1bZb", "ab"},
	{"ENQ", "a\x05b", "ab"},
	{"OSC 10 BEL", "a\x1b]10;?\x07b", "ab"},
	{"OSC 11 ST", "a\x1b]11;?\x1b\\b", "ab"},
	{"OSC 12", "a\x1b]12;?\x07b", "ab"},
	{"OSC 10 and 11 in one", "a\x1b]10;?;?\x07b", "ab"},
	{"OSC 4 palette", "a\x1b]4;1;?;2;?\x07b", "ab"},
	{"OSC 52 clipboard read", "a\x1b]52;c;?\x07b", "ab"},
	{"OSC 52 primary read ST", "a\x1b]52;p;?\x1b\\b", "ab"},
	{"kitty OSC 21", "a\x1b]21;foreground=?;background=?\x1b\\b", "ab"},
	{"OSC query ended by a bare ESC", "a\x1b]11;?\x1b[1mb", "a\x1b[1mb"},
	{"DECRQSS", "a\x1bP$qm\x1b\\b", "ab"},
	{"DECRQSS cursor style", "a\x1bP$q q\x1b\\b", "ab"},
	{"XTGETTCAP", "a\x1bP+q544e\x1b\\b", "ab"},
	{"kitty graphics query", "a\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\b", "ab"},
	{"what vim sends", "\x1b[?1049h\x1b[>4;2m\x1b[?1h\x1b=\x1b[?2004h\x1b[?1004h\x1b[1;24r\x1b[?12h\x1b[?12l\x1b[22;2t\x1b[22;1t\x1b[27m\x1b[29m\x1b[m\x1b[H\x1b[2J\x1b[>c\x1b[?u\x1b]10;?\x07\x1b]11;?\x07\x1b[?25l\x1b[2;1H",
		"\x1b[?1049h\x1b[>4;2m\x1b[?1h\x1b=\x1b[?2004h\x1b[?1004h\x1b[1;24r\x1b[?12h\x1b[?12l\x1b[22;2t\x1b[22;1t\x1b[27m\x1b[29m\x1b[m\x1b[H\x1b[2J\x1b[?25l\x1b[2;1H"},

	// Everything else: kept byte for byte.
	{"text and UTF-8", "héllo €𝄞 日本\r\n", "héllo €𝄞 日本\r\n"},
	{"SGR", "\x1b[1;31mred\x1b[0m", "\x1b[1;31mred\x1b[0m"},
	{"SGR with more than 32 parameters", "\x1b[" + strings.Repeat("1;", 40) + "mx", "\x1b[" + strings.Repeat("1;", 40) + "mx"},
	{"cursor moves and erase", "\x1b[H\x1b[2J\x1b[10;5H\x1b[K", "\x1b[H\x1b[2J\x1b[10;5H\x1b[K"},
	{"DEC private modes", "\x1b[?25l\x1b[?1049h\x1b[?2004h", "\x1b[?25l\x1b[?1049h\x1b[?2004h"},
	{"cursor style DECSCUSR", "\x1b[2 q", "\x1b[2 q"},
	{"DECLL", "\x1b[1q", "\x1b[1q"},
	{"XTMODKEYS reset", "\x1b[>4n", "\x1b[>4n"},
	{"XTMODKEYS set", "\x1b[>4;1m", "\x1b[>4;1m"},
	{"restore cursor", "\x1b[u", "\x1b[u"},
	{"kitty keyboard push", "\x1b[>1u", "\x1b[>1u"},
	{"window title push", "\x1b[22;0t", "\x1b[22;0t"},
	{"window resize", "\x1b[8;24;80t", "\x1b[8;24;80t"},
	{"DECSACE", "\x1b[2*x", "\x1b[2*x"},
	{"soft reset", "\x1b[!p", "\x1b[!p"},
	{"title", "\x1b]0;my title\x07", "\x1b]0;my title\x07"},
	{"title with a question mark", "\x1b]2;?\x07", "\x1b]2;?\x07"},
	{"hyperlink", "\x1b]8;;https://x.example/?q=1\x1b\\link\x1b]8;;\x1b\\", "\x1b]8;;https://x.example/?q=1\x1b\\link\x1b]8;;\x1b\\"},
	{"OSC 10 set", "\x1b]10;#ffffff\x07", "\x1b]10;#ffffff\x07"},
	{"OSC 52 write", "\x1b]52;c;aGVsbG8=\x07", "\x1b]52;c;aGVsbG8=\x07"},
	{"OSC 7 cwd", "\x1b]7;file://h/tmp\x07", "\x1b]7;file://h/tmp\x07"},
	{"sixel", "\x1bPq#0;2;0;0;0#0~~\x1b\\", "\x1bPq#0;2;0;0;0#0~~\x1b\\"},
	{"sixel with parameters", "\x1bP0;1;0q#0~\x1b\\", "\x1bP0;1;0q#0~\x1b\\"},
	{"XTSETTCAP", "\x1bP+p544e\x1b\\", "\x1bP+p544e\x1b\\"},
	{"kitty graphics transmit", "\x1b_Ga=T,f=24;AAAA\x1b\\", "\x1b_Ga=T,f=24;AAAA\x1b\\"},
	{"charset", "\x1b(B\x1b)0", "\x1b(B\x1b)0"},
	{"keypad and save cursor", "\x1b=\x1b>\x1b7\x1b8", "\x1b=\x1b>\x1b7\x1b8"},
	{"CSI cut by a newline", "\x1b[1\n2m", "\x1b[1\n2m"},
	{"OSC cancelled by CAN", "\x1b]0;t\x18x", "\x1b]0;t\x18x"},
	{"double ESC", "\x1b\x1b[1m", "\x1b\x1b[1m"},
	{"invalid UTF-8", "a\xff\xfe\x9b6n", "a\xff\xfe\x9b6n"},
}

func TestQueryFilterWhole(t *testing.T) {
	for _, tc := range queryCases {
		t.Run(tc.name, func(t *testing.T) {
			var f QueryFilter
			got := f.Replay(tc.in) + f.Live("")
			if got != tc.want {
				t.Errorf("Replay(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// Every split of the input in two chunks, and one byte per chunk, give the
// same output as the whole.
func TestQueryFilterSplit(t *testing.T) {
	for _, tc := range queryCases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i <= len(tc.in); i++ {
				var f QueryFilter
				got := f.Replay(tc.in[:i]) + f.Replay(tc.in[i:]) + f.Live("")
				if got != tc.want {
					t.Fatalf("Replay(%q) + Replay(%q) = %q, want %q", tc.in[:i], tc.in[i:], got, tc.want)
				}
			}
			var f QueryFilter
			var b strings.Builder
			for i := range len(tc.in) {
				b.WriteString(f.Replay(tc.in[i : i+1]))
			}
			b.WriteString(f.Live(""))
			if b.String() != tc.want {
				t.Fatalf("Replay byte by byte of %q = %q, want %q", tc.in, b.String(), tc.want)
			}
		})
	}
}

func TestQueryFilterLive(t *testing.T) {
	all := ""
	for _, tc := range queryCases {
		all += tc.in
	}
	var f QueryFilter
	if got := f.Live(all); got != all {
		t.Fatalf("Live changed its input: %q, want %q", got, all)
	}
	tests := []struct {
		name         string
		replay, live string
		want         string
	}{
		// A query begun in the replay and finished live was sent now: the
		// program waits for its answer.
		{"query completed live", "a\x1b[6", "nb", "a\x1b[6nb"},
		{"OSC completed live", "a\x1b]11;?", "\x07", "a\x1b]11;?\x07"},
		{"ESC at the end of the replay", "a\x1b", "[cb", "a\x1b[cb"},
		{"queries after the replay", "a\x1b[c", "\x1b[c\x1b]11;?\x07", "a\x1b[c\x1b]11;?\x07"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f QueryFilter
			if got := f.Replay(tc.replay) + f.Live(tc.live); got != tc.want {
				t.Errorf("Replay(%q) + Live(%q) = %q, want %q", tc.replay, tc.live, got, tc.want)
			}
		})
	}
}

func TestQueryFilterBoundsHeld(t *testing.T) {
	var f QueryFilter
	long := "\x1b]52;c;" + strings.Repeat("A", maxHeld+10)
	if got := f.Replay(long); got != long {
		t.Fatalf("an unterminated %d-byte OSC was held back: got %d bytes", len(long), len(got))
	}
	if len(f.held) != 0 {
		t.Fatalf("held %d bytes, want none", len(f.held))
	}
}
