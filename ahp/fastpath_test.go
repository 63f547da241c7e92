package ahp_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
)

// refString is encoding/json's string encoding without HTML escaping.
func refString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// refEnvelope is the generic encoding of an action notification: the
// envelope through Marshal, wrapped in a Message through Marshal (what
// EncodeEnvelope did before its fast path).
func refEnvelope(t testing.TB, e ahp.Envelope, shape ahp.Shape) []byte {
	raw, err := ahp.Marshal(e, shape)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ahp.Marshal(ahp.Message{JSONRPC: ahp.JSONRPCVersion, Method: ahp.MethodAction, Params: raw}, ahp.Current)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func stringCases() []string {
	cases := []string{"", "plain", `"quoted" and \back\slash`, "\x1b[1;31mred\x1b[0m\r\n", "\b\f\n\r\t\x00\x01\x1f\x7f",
		"ü € 漢字 👍", "\u2028\u2029", "a\u2028b\u2029c", "\xe2", "\xe2\x80", "\xe2\x80\xa8", "\xe2\x80\xaa", "x\xe2\x80",
		"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok\xffok\u2028\x1b", "<&>", "\xef\xbf\xbd"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"\u2029")
	}
	// Every special byte at every position of the eight-byte words.
	for k := 0; k < 18; k++ {
		pad := strings.Repeat("p", k)
		for _, x := range []string{"\u2028", "\u2029", "é", "è", "\xa8", "\x80\xa9", "\x1b", `"`, `\`, "\x00", "\x7f", "\x1f", " ", "€"} {
			cases = append(cases, pad+x+pad, pad+x, x+pad+x)
		}
	}
	return cases
}

// TestAppendStringMatchesEncodingJSON: the hand-written escaper writes what
// encoding/json writes, for every byte and the awkward sequences.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range stringCases() {
		if got, want := string(ahp.AppendString(nil, s)), refString(s); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\x1b", "[", "m", "\n", "\r", `"`, `\`, "ü", "漢", "\u2028", "\xe2", "\x80", "\xa8", "\xff", "\x00", "👍"}
	for i := 0; i < 2000; i++ {
		var sb strings.Builder
		for j := r.IntN(40); j > 0; j-- {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		if got, want := string(ahp.AppendString([]byte("prefix"), s)), "prefix"+refString(s); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func envelopeCases() []ahp.Envelope {
	var out []ahp.Envelope
	for _, data := range []string{"", "hello\r\n", "\x1b[32mok\x1b[0m ü \u2028 \"q\" \\", "bad \xff utf-8"} {
		for _, typ := range []string{ahp.TerminalData, ahp.TerminalInput} {
			a := ahp.Action{Type: typ, Data: data}
			out = append(out,
				ahp.Envelope{Channel: "ahp-terminal:/1", Action: a, ServerSeq: 1},
				ahp.Envelope{Channel: "ahp-terminal:/x\"y", Action: a, ServerSeq: 1 << 40, Origin: &ahp.Origin{ClientID: "c-ü", ClientSeq: 7}},
				ahp.Envelope{Channel: "ahp-terminal:/1", Action: a, ServerSeq: 3, Origin: &ahp.Origin{ClientID: "c"}, RejectionReason: "no \"way\""},
				ahp.Envelope{Channel: "ahp-terminal:/1", Action: a, ServerSeq: 0, RejectionReason: "r"},
			)
		}
	}
	// Not on the fast path: they must encode as before too.
	exit := 3
	out = append(out,
		ahp.Envelope{Channel: "ahp-terminal:/1", Action: ahp.Action{Type: ahp.TerminalExited, ExitCode: &exit}, ServerSeq: 9},
		ahp.Envelope{Channel: "ahp-terminal:/1", Action: ahp.Action{Type: "terminal/data", Raw: json.RawMessage(`{"type":"terminal/data","data":1}`)}, ServerSeq: 9},
		ahp.Envelope{Channel: ahp.RootURI, Action: ahp.Action{Type: ahp.RootTerminalsChanged}, ServerSeq: 10},
	)
	return out
}

// TestEnvelopeFastPath: EncodeEnvelope writes what the generic encoding
// (Marshal wrapped in a Message) writes, in both shapes.
func TestEnvelopeFastPath(t *testing.T) {
	for _, e := range envelopeCases() {
		for _, shape := range []ahp.Shape{ahp.Current, ahp.Legacy} {
			got, err := ahp.EncodeEnvelope(e, shape)
			if err != nil {
				t.Fatalf("EncodeEnvelope(%+v): %v", e, err)
			}
			if want := refEnvelope(t, e, shape); !bytes.Equal(got, want) {
				t.Errorf("EncodeEnvelope(%+v, %d)\n got %s\nwant %s", e, shape, got, want)
			}
			app, _ := ahp.AppendEnvelope([]byte("x"), e, shape)
			if !bytes.Equal(app[1:], got) || app[0] != 'x' {
				t.Errorf("AppendEnvelope does not append: %s", app)
			}
		}
	}
}

// TestNotificationAndResult: the direct wrappers write what encoding a
// Message writes.
func TestNotificationAndResult(t *testing.T) {
	params := map[string]any{"a": "\u2028<&>", "b": []int{1, 2}}
	got, err := ahp.EncodeNotification("some/method", params, ahp.Current)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := ahp.Marshal(params, ahp.Current)
	want, _ := ahp.Marshal(ahp.Message{JSONRPC: "2.0", Method: "some/method", Params: raw}, ahp.Current)
	if !bytes.Equal(got, want) {
		t.Errorf("EncodeNotification = %s, want %s", got, want)
	}
	for _, id := range []string{`7`, `"a"`, `"\u2028"`, `-1.5e3`, `null`} {
		got, err := ahp.EncodeResult(json.RawMessage(id), params, ahp.Current)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ahp.Marshal(ahp.Message{JSONRPC: "2.0", ID: json.RawMessage(id), Result: raw}, ahp.Current)
		if !bytes.Equal(got, want) {
			t.Errorf("EncodeResult(%s) = %s, want %s", id, got, want)
		}
	}
	if _, err := ahp.EncodeResult(json.RawMessage(`{bad`), nil, ahp.Current); err == nil {
		t.Errorf("EncodeResult with an invalid id: no error")
	}
}

// FuzzEnvelopeFastPath compares the fast path with encoding/json on any
// strings, valid UTF-8 or not.
func FuzzEnvelopeFastPath(f *testing.F) {
	for _, s := range stringCases() {
		f.Add(s, "c", int64(1), "")
	}
	f.Add("\x1b]633;A\x07$ ", "client", int64(-5), "reason \u2029")
	f.Fuzz(func(t *testing.T, data, clientID string, seq int64, reason string) {
		if got, want := string(ahp.AppendString(nil, data)), refString(data); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", data, got, want)
		}
		typ := ahp.TerminalData
		if reason != "" {
			typ = ahp.TerminalInput // a rejection echoes client-dispatchable actions only
		}
		e := ahp.Envelope{Channel: "ahp-terminal:/" + clientID, Action: ahp.Action{Type: typ, Data: data},
			ServerSeq: seq, RejectionReason: reason}
		if clientID != "" {
			e.Origin = &ahp.Origin{ClientID: clientID, ClientSeq: seq}
		}
		got, err := ahp.EncodeEnvelope(e, ahp.Current)
		if err != nil {
			t.Fatal(err)
		}
		if want := refEnvelope(t, e, ahp.Current); !bytes.Equal(got, want) {
			t.Fatalf("EncodeEnvelope(%+v)\n got %s\nwant %s", e, got, want)
		}
		if utf8.ValidString(data) {
			var back struct {
				Params ahp.Envelope `json:"params"`
			}
			if err := json.Unmarshal(got, &back); err != nil || back.Params.Action.Data != data {
				t.Fatalf("round trip of %q: %v, %q", data, err, back.Params.Action.Data)
			}
		}
	})
}

// benchText is coalesced terminal output: SGR colours, UTF-8, CR LF.
var benchText = strings.Repeat("0012345 \x1b[1;32mcolour\x1b[0m text ü € 漢字 ok abcdefghij\r\n"+
	"0012346 plain ascii log line: the quick brown fox jumps over the lazy dog 4242\r\n", 64<<10/128)

// BenchmarkEnvelope encodes a 64 KiB terminal/data envelope with the fast
// path and, as the baseline in the same run, the generic encoding (Marshal
// and a Message through encoding/json); "x-baseline" is how many times
// faster the fast path is.
func BenchmarkEnvelope(b *testing.B) {
	e := ahp.Envelope{Channel: "ahp-terminal:/bench", Action: ahp.Action{Type: ahp.TerminalData, Data: benchText}, ServerSeq: 123456}
	var buf []byte
	b.SetBytes(int64(len(benchText)))
	b.ReportAllocs()
	var fast time.Duration
	start := time.Now()
	for b.Loop() {
		buf, _ = ahp.AppendEnvelope(buf[:0], e, ahp.Current)
	}
	fast = time.Since(start)
	b.StopTimer()
	n := 0
	start = time.Now()
	for ; n < b.N && (n < 10 || time.Since(start) < 200*time.Millisecond); n++ {
		_ = refEnvelope(b, e, ahp.Current)
	}
	base := time.Since(start) / time.Duration(n) * time.Duration(b.N)
	b.ReportMetric(float64(base)/float64(fast), "x-baseline")
}

// BenchmarkAppendString is the escaper alone against encoding/json's.
func BenchmarkAppendString(b *testing.B) {
	b.Run("fast", func(b *testing.B) {
		var buf []byte
		b.SetBytes(int64(len(benchText)))
		for b.Loop() {
			buf = ahp.AppendString(buf[:0], benchText)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		b.SetBytes(int64(len(benchText)))
		for b.Loop() {
			buf.Reset()
			_ = enc.Encode(benchText)
		}
	})
}
