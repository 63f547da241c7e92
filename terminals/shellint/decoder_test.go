package shellint

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// refDecode is an independent whole-input maximal-subpart decoder built on
// the standard library: at an invalid position the maximal subpart is the
// longest prefix that utf8.FullRune still considers incomplete.
func refDecode(in []byte) []byte {
	var out []byte
	for i := 0; i < len(in); {
		r, n := utf8.DecodeRune(in[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		m := 1
		for k := 3; k >= 1; k-- {
			if i+k <= len(in) && !utf8.FullRune(in[i:i+k]) {
				m = k
				break
			}
		}
		out = append(out, "\uFFFD"...)
		i += m
	}
	return out
}

// decodeSplit decodes in as the given reads and flushes at the end.
func decodeSplit(reads [][]byte) []byte {
	var d decoder
	var out []byte
	for _, r := range reads {
		out = append(out, d.decode(r)...)
		if d.held() > 3 {
			panic("decoder holds more than 3 bytes")
		}
	}
	return append(out, d.flush()...)
}

func TestDecoder(t *testing.T) {
	tests := []struct {
		name  string
		reads []string
		want  string
	}{
		{"ascii", []string{"hello"}, "hello"},
		{"empty", []string{""}, ""},
		{"lone continuation", []string{"a\x80b"}, "a\uFFFDb"},
		{"invalid ff", []string{"a\xffb"}, "a\uFFFDb"},
		{"split 2-byte", []string{"caf\xc3", "\xa9!"}, "café!"},
		{"split 4-byte 1+3", []string{"\xf0", "\x9f\x98\x80"}, "😀"},
		{"split 4-byte 3+1", []string{"\xf0\x9f\x98", "\x80"}, "😀"},
		{"split 4-byte 1+1+1+1", []string{"\xf0", "\x9f", "\x98", "\x80"}, "😀"},
		{"truncated 4-byte then ascii", []string{"\xf0\x9f\x98A"}, "\uFFFDA"},
		{"truncated across reads", []string{"\xf0\x9f", "\x98A"}, "\uFFFDA"},
		{"surrogate", []string{"\xed\xa0\x80"}, "\uFFFD\uFFFD\uFFFD"},
		{"overlong c0", []string{"\xc0\xaf"}, "\uFFFD\uFFFD"},
		{"overlong e0", []string{"\xe0\x80\xaf"}, "\uFFFD\uFFFD\uFFFD"},
		{"e0 a0 ok", []string{"\xe0\xa0\x80"}, "\u0800"},
		{"above max f4 90", []string{"\xf4\x90\x80\x80"}, "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"f4 8f ok", []string{"\xf4\x8f\xbf\xbf"}, "\U0010FFFF"},
		{"f5", []string{"\xf5\x80"}, "\uFFFD\uFFFD"},
		{"pending tail flushed", []string{"x\xe2\x82"}, "x\uFFFD"},
		{"pending tail then invalid", []string{"\xe2", "\x82\xff"}, "\uFFFD\uFFFD"},
		{"carry broken by lead", []string{"\xe2", "\xe2\x82\xac"}, "\uFFFD€"},
		{"carry then rest of input", []string{"\xc3", "\xa9abc\xffdef"}, "éabc\uFFFDdef"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var reads [][]byte
			for _, r := range tc.reads {
				reads = append(reads, []byte(r))
			}
			if got := decodeSplit(reads); string(got) != tc.want {
				t.Errorf("decode(%q) = %q, want %q", tc.reads, got, tc.want)
			}
			joined := []byte(stringsJoin(tc.reads))
			if ref := refDecode(joined); string(ref) != tc.want {
				t.Errorf("refDecode(%q) = %q, want %q (reference disagrees with the table)", joined, ref, tc.want)
			}
		})
	}
}

func stringsJoin(s []string) string {
	var b bytes.Buffer
	for _, x := range s {
		b.WriteString(x)
	}
	return b.String()
}

// TestDecoderAliasesValidInput checks the hot path: valid input is returned
// as is, without a copy.
func TestDecoderAliasesValidInput(t *testing.T) {
	var d decoder
	in := []byte("plain ascii and é ✓")
	out := d.decode(in)
	if &out[0] != &in[0] || len(out) != len(in) {
		t.Fatalf("decode(%q) copied the input", in)
	}
	in = []byte("split \xe2\x9c")
	out = d.decode(in)
	if string(out) != "split " || &out[0] != &in[0] {
		t.Fatalf("decode(%q) = %q, want the aliased prefix %q", in, out, "split ")
	}
}

func FuzzDecoder(f *testing.F) {
	for _, s := range []string{"hello", "caf\xc3\xa9", "\xf0\x9f\x98A", "\xed\xa0\x80", "\xc0\xaf", "x\xe2\x82", "\xf4\x90\x80\x80", "a\xffb\x80"} {
		f.Add([]byte(s), uint16(1), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, a, b uint16) {
		want := refDecode(in)
		if !utf8.Valid(want) {
			t.Fatalf("refDecode(%q) is not valid UTF-8", in)
		}
		i, j := int(a)%(len(in)+1), int(b)%(len(in)+1)
		if i > j {
			i, j = j, i
		}
		splits := map[string][][]byte{
			"whole":    {in},
			"3 reads":  {in[:i], in[i:j], in[j:]},
			"one byte": nil,
		}
		for k := range in {
			splits["one byte"] = append(splits["one byte"], in[k:k+1])
		}
		for name, reads := range splits {
			if got := decodeSplit(reads); !bytes.Equal(got, want) {
				t.Fatalf("decode(%q) as %s (%d,%d) = %q, want %q", in, name, i, j, got, want)
			}
		}
		if utf8.Valid(in) && !bytes.Equal(want, in) {
			t.Fatalf("valid input %q changed to %q", in, want)
		}
	})
}
