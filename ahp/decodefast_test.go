package ahp_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// refDecode is the general path a client takes for an action frame: the
// message, then its params as an Envelope.
func refDecode(frame []byte) (ahp.Envelope, error) {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(frame, &m); err != nil {
		return ahp.Envelope{}, err
	}
	if m.Method != ahp.MethodAction {
		return ahp.Envelope{}, fmt.Errorf("method %q", m.Method)
	}
	var e ahp.Envelope
	err := json.Unmarshal(m.Params, &e)
	return e, err
}

// TestDecodeDataFrameRoundTrip: every data frame AppendEnvelope writes
// decodes on the fast path to what the general path decodes.
func TestDecodeDataFrameRoundTrip(t *testing.T) {
	origins := []*ahp.Origin{nil, {ClientID: "tab-1", ClientSeq: 42}, {ClientID: "\"odd\\id\u2028", ClientSeq: -1}}
	for i, s := range append(stringCases(), "\xff\xfe bad utf-8", "\U0001F600 emoji", strings.Repeat("\x1b[32mok\x1b[0m ", 5000)) {
		for j, o := range origins {
			for _, typ := range []string{ahp.TerminalData, ahp.TerminalInput} {
				e := ahp.Envelope{Channel: "ahp-terminal:/t" + s[:min(3, len(s))], ServerSeq: int64(i*7 + j),
					Action: ahp.Action{Type: typ, Data: s}, Origin: o}
				if j == 2 {
					e.RejectionReason = "no: " + s[:min(10, len(s))]
				}
				frame, err := ahp.EncodeEnvelope(e, ahp.Current)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := ahp.DecodeDataFrame(frame)
				want, werr := refDecode(frame)
				if !ok || werr != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("case %d/%d %s: fast path %+v (ok %v), general %+v (err %v)", i, j, typ, got, ok, want, werr)
				}
			}
		}
	}
}

// TestDecodeDataFrameDeclines: frames not laid out as AppendEnvelope writes
// them, or not data actions, go to the general path.
func TestDecodeDataFrameDeclines(t *testing.T) {
	for _, frame := range []string{
		`{"jsonrpc":"2.0","method":"action","params":{"action":{"type":"terminal/data","data":"x"},"channel":"c","serverSeq":1}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"terminal/resized","data":"x"},"serverSeq":1}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"terminal/data","data":"x"},"serverSeq":1.5}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"terminal/data","data":"x"},"serverSeq":1} }`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"terminal/data","data":"a` + "\x01" + `"},"serverSeq":1}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"terminal/data","data":"\x"},"serverSeq":1}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"terminal/data","data":"x"},"serverSeq":01}}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
	} {
		if e, ok := ahp.DecodeDataFrame([]byte(frame)); ok {
			t.Errorf("DecodeDataFrame(%s) = %+v, want declined", frame, e)
		}
	}
}

// FuzzDecodeDataFrame: whenever the fast path accepts a frame, the general
// path decodes it to the same envelope; frames AppendEnvelope writes are
// always accepted.
func FuzzDecodeDataFrame(f *testing.F) {
	for _, s := range stringCases() {
		frame, _ := ahp.EncodeEnvelope(ahp.Envelope{Channel: "c", ServerSeq: 3, Action: ahp.Action{Type: ahp.TerminalData, Data: s},
			Origin: &ahp.Origin{ClientID: "x", ClientSeq: 1}}, ahp.Current)
		f.Add(frame, s)
	}
	f.Add([]byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"terminal/data","data":"\ud83d\ude00\ud83d\u0041"},"serverSeq":1}}`), "")
	f.Fuzz(func(t *testing.T, frame []byte, data string) {
		if got, ok := ahp.DecodeDataFrame(frame); ok {
			want, err := refDecode(frame)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: fast path %+v, general %+v (err %v)", frame, got, want, err)
			}
		}
		e := ahp.Envelope{Channel: "ahp-terminal:/f", ServerSeq: int64(len(data)), Action: ahp.Action{Type: ahp.TerminalData, Data: data}}
		enc, err := ahp.EncodeEnvelope(e, ahp.Current)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ahp.DecodeDataFrame(enc)
		want, werr := refDecode(enc)
		if !ok || werr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("data %q: fast path %+v (ok %v), general %+v (err %v)", data, got, ok, want, werr)
		}
	})
}

// BenchmarkDecodeDataFrame: a 64 KiB output frame decoded on the fast path
// and, as the baseline in the same run, on the general path.
func BenchmarkDecodeDataFrame(b *testing.B) {
	chunk := strings.Repeat("0123456 \x1b[1;32mcolour\x1b[0m text ü 漢字 ok\r\n", 64<<10/48)
	frame, _ := ahp.EncodeEnvelope(ahp.Envelope{Channel: "ahp-terminal:/b", ServerSeq: 9, Action: ahp.Action{Type: ahp.TerminalData, Data: chunk}}, ahp.Current)
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			if _, ok := ahp.DecodeDataFrame(frame); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			if _, err := refDecode(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
}
