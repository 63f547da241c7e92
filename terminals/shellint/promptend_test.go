package shellint

import (
	"slices"
	"testing"
)

// TestPromptEnd: the end of a prompt (633;B with the nonce, or 133;B when
// lenient) is reported after the prompt's text, so the reader sends the
// prompt at once instead of waiting out its coalescing window; an untrusted
// 633;B reports nothing.
func TestPromptEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		in   string
		want []string
	}{
		{"strict 633;B", Options{Mode: Strict, Nonce: nonce1},
			"\x1b]633;A;" + nonce1 + "\a$ \x1b]633;B;" + nonce1 + "\a", []string{"DetectionAvailable", "Data $ ", "PromptEnd"}},
		{"strict 633;B without the nonce", Options{Mode: Strict, Nonce: nonce1},
			"\x1b]633;A;" + nonce1 + "\a$ \x1b]633;B\a", []string{"DetectionAvailable", "Data $ "}},
		{"lenient 133;B", Options{Mode: Lenient},
			"\x1b]133;A\a> \x1b]133;B\a", []string{"DetectionAvailable", "Data > ", "PromptEnd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, _ := run(t, tc.opts, "", []string{tc.in}, false)
			var got []string
			for _, e := range evs {
				s := e.Kind.String()
				if e.Kind == Data {
					s += " " + e.Text
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("events of %q:\n got  %q\n want %q", tc.in, got, tc.want)
			}
		})
	}
}
