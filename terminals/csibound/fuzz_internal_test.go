package csibound

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// FuzzRewriter: no panic; the same output for any split of the input
// (whole, three writes, one byte per write); text without ESC or C2 is
// unchanged; the output is never longer than the input; and a reference
// parser written after xterm.js's reads, from the output, the same
// controls and sequences as from the input, with the bounded counts
// bounded (and every count within the bound).
func FuzzRewriter(f *testing.F) {
	for _, s := range []string{
		"x\x1b[2147483647b", "\x1b[99999;7L\x1b[1;31m", "\xc2\x9b99999L", "\x1b\n[99\n9\x7f9L",
		"\x1b[" + strings.Repeat("0", 130) + "99999:3 @", "\x1b[9" + strings.Repeat(";", 140) + "'}",
		"\x1b[" + strings.Repeat("0", 130) + "5:" + strings.Repeat(":1", 40) + "L",
		"\x1b]0;t\x1b[99999Z°\x1b[?99999b\x1b[99999\x18L", "\x1b[99999 A\x1b[99999'~\x1b[99999  @",
	} {
		f.Add([]byte(s), uint16(3), uint16(len(s)/2), uint8(80), uint8(24))
	}
	f.Fuzz(func(t *testing.T, in []byte, a, b uint16, cols, rows uint8) {
		s := Size{Cols: int(cols%200) + 1, Rows: int(rows%100) + 1}
		i, j := int(a)%(len(in)+1), int(b)%(len(in)+1)
		if i > j {
			i, j = j, i
		}
		var w Rewriter
		whole := w.Flush(w.Append(nil, in, s, s))
		var w3 Rewriter
		three := w3.Append(nil, in[:i], s, s)
		three = w3.Append(three, in[i:j], s, s)
		three = w3.Flush(w3.Append(three, in[j:], s, s))
		if !bytes.Equal(three, whole) {
			t.Fatalf("%q split at %d, %d: %q, whole: %q", in, i, j, three, whole)
		}
		if one := rewriteSplit(string(in), s); one != string(whole) {
			t.Fatalf("%q byte by byte: %q, whole: %q", in, one, whole)
		}
		if bytes.IndexByte(in, esc) < 0 && bytes.IndexByte(in, c1Lead) < 0 && !bytes.Equal(whole, in) {
			t.Fatalf("plain %q changed: %q", in, whole)
		}
		if len(whole) > len(in) {
			t.Fatalf("%q grew to %q", in, whole)
		}
		want, got := events(in, s, true), events(whole, s, false)
		if !slices.Equal(got, want) {
			t.Fatalf("%q → %q:\n got %q\nwant %q", in, whole, got, want)
		}
	})
}

// events parses b as xterm.js does, as far as CSI sequences go: every
// byte outside a CSI is an event of its own (an OSC's, a DCS's… too: ESC
// [ and C1 CSI start a CSI in every state), a C0 control inside a CSI is
// one, DEL there is ignored, and a dispatched CSI is one with its prefix,
// intermediates, final and parameters as xterm.js's Params holds them.
// With bounded, the count of a bounded sequence is bounded as the
// Rewriter must; else every bounded count must be within the bound.
func events(b []byte, s Size, bounded bool) []string {
	var out []string
	const (
		ground = iota
		escape
		entry
		param
		inter
		ignore
	)
	st := ground
	var collect []byte
	var params [][]int64 // each: value, then its sub-parameters
	var nsub int
	var rejectDig, rejectSub, digitIsSub bool
	begin := func() {
		st, collect, params, nsub = entry, nil, [][]int64{{0}}, 0
		rejectDig, rejectSub, digitIsSub = false, false, false
	}
	sat := func(v int64) int64 { return min(v, 1<<31-1) }
	for k := 0; k < len(b); k++ {
		c := b[k]
		if st >= entry {
			switch {
			case c == 0x18 || c == 0x1a || c >= 0x80:
				st = ground // abort; read again as text
			case c == esc:
				st = ground
			case c < 0x20:
				out = append(out, fmt.Sprintf("exec %#x", c))
				continue
			case c == 0x7f:
				continue
			case st == ignore:
				if c >= 0x40 {
					st = ground
				}
				continue
			case c >= 0x40:
				n := params[0][0]
				if bounded {
					n = int64(bound(c, onlyCollect(collect), int(n), s, s))
				} else if len(collect) <= 1 && (collect == nil || collect[0] < '<') {
					if bb := bound(c, onlyCollect(collect), int(n), s, s); int64(bb) != n {
						out = append(out, fmt.Sprintf("unbounded %d", n))
					}
				}
				params[0][0] = n
				out = append(out, fmt.Sprintf("csi %q %c %v", collect, c, params))
				st = ground
				continue
			case c >= 0x20 && c <= 0x2f:
				collect = append(collect, c)
				st = inter
				continue
			case c >= '<' && c <= '?':
				if st == entry {
					collect = append(collect, c)
					st = param
				} else {
					st = ignore
				}
				continue
			default: // 0x30–0x3b
				if st == inter {
					st = ignore
					continue
				}
				st = param
				switch c {
				case ';':
					digitIsSub = false
					if len(params) >= maxParams {
						rejectDig = true
					} else {
						params = append(params, []int64{0})
					}
				case ':':
					digitIsSub = true
					if rejectDig || nsub >= maxSubs {
						rejectSub = true
					} else {
						params[len(params)-1] = append(params[len(params)-1], -1)
						nsub++
					}
				default:
					d := int64(c - '0')
					if rejectDig || (digitIsSub && rejectSub) || (digitIsSub && nsub == 0) {
						continue
					}
					if digitIsSub {
						for i := len(params) - 1; i >= 0; i-- { // the last sub-parameter
							if p := params[i]; len(p) > 1 {
								if v := p[len(p)-1]; v == -1 {
									p[len(p)-1] = d
								} else {
									p[len(p)-1] = sat(v*10 + d)
								}
								break
							}
						}
					} else {
						p := params[len(params)-1]
						p[0] = sat(p[0]*10 + d)
					}
				}
				continue
			}
		}
		switch {
		case st == escape && c == '[':
			begin()
			continue
		case st == escape && (c == esc || c == 0x7f || (c < 0x20 && c != 0x18 && c != 0x1a)):
			out = append(out, fmt.Sprintf("esc %#x", c))
			continue
		}
		st = ground
		switch {
		case c == esc:
			st = escape
		case c == 0xc2 && k+1 < len(b) && b[k+1] == 0x9b:
			k++
			begin()
			continue
		}
		out = append(out, fmt.Sprintf("%#x", c))
	}
	return out
}

// onlyCollect is the one intermediate of a sequence, or a byte that
// bounds nothing when it has a prefix or more than one.
func onlyCollect(c []byte) byte {
	switch {
	case len(c) == 0:
		return 0
	case len(c) == 1 && c[0] < '<':
		return c[0]
	}
	return '!'
}
