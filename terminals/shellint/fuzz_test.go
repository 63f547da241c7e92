package shellint

import (
	"slices"
	"strings"
	"testing"
)

// FuzzScanner drives the whole Processor (decoder, scanner, interpreter) and
// checks what must hold for any input: no panic, the same events for any
// split (whole, three reads, one byte per read), no shell-integration
// sequence left in the data, valid UTF-8, bounded memory, and byte fidelity
// for input without stripped sequences.
func FuzzScanner(f *testing.F) {
	for _, c := range conformanceCases() {
		in := strings.Join(c.reads, "")
		if len(in) > 8192 {
			continue
		}
		f.Add([]byte(in), uint16(len(c.reads[0])), uint16(len(in)/2), c.mode == Lenient)
	}
	f.Add([]byte("\x1b]0000000000000633;A;N1\aX"), uint16(3), uint16(9), false)
	f.Add([]byte("\x1b[3\x1b]633;A;N1\x1b\\1m\x1bP\x1b]7;file:///x\x1b\\"), uint16(5), uint16(20), true)
	f.Fuzz(func(t *testing.T, in []byte, a, b uint16, lenient bool) {
		opts := Options{Mode: Strict, Nonce: "N1"}
		if lenient {
			opts = Options{Mode: Lenient}
		}
		i, j := int(a)%(len(in)+1), int(b)%(len(in)+1)
		if i > j {
			i, j = j, i
		}
		s := string(in)
		whole, _ := run(t, opts, "", []string{s}, true)
		want := normalize(whole, false)
		for name, reads := range map[string][]string{
			"three reads": {s[:i], s[i:j], s[j:]},
			"one byte":    oneByteReads(s),
		} {
			got, _ := run(t, opts, "", reads, true)
			if g := normalize(got, false); !slices.Equal(g, want) {
				t.Fatalf("input %q as %s (%d,%d):\n got  %v\n want %v", in, name, i, j, g, want)
			}
		}
		data := joinData(whole)
		if v := markerViolation(data); v != "" {
			t.Fatalf("input %q: data %q contains %s", in, data, v)
		}
		if fidelityApplies(in) && data != s {
			t.Fatalf("input %q qualifies for fidelity but data is %q", in, data)
		}
	})
}
