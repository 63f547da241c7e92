package ext_test

import (
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// jsonDecoded is the envelope a JSON client gets from env's text frame,
// through encoding/json.
func jsonDecoded(t testing.TB, env ahp.Envelope, shape ahp.Shape) ahp.Envelope {
	t.Helper()
	frame, err := ahp.EncodeEnvelope(env, shape)
	if err != nil {
		t.Fatalf("EncodeEnvelope: %v", err)
	}
	var m struct {
		Params ahp.Envelope `json:"params"`
	}
	if err := json.Unmarshal(frame, &m); err != nil {
		t.Fatalf("decode %q: %v", frame, err)
	}
	return m.Params
}

// checkSameAsJSON asserts that a binary client and a JSON client decode env
// to the same envelope.
func checkSameAsJSON(t testing.TB, env ahp.Envelope) {
	t.Helper()
	for _, shape := range []ahp.Shape{ahp.Current, ahp.Legacy} {
		msg, err := ext.AppendBinaryData(nil, env, shape)
		if err != nil {
			t.Fatalf("AppendBinaryData: %v", err)
		}
		got, err := ext.DecodeBinaryData(msg)
		if err != nil {
			t.Fatalf("DecodeBinaryData of %q: %v", msg, err)
		}
		if want := jsonDecoded(t, env, shape); !reflect.DeepEqual(got, want) {
			t.Fatalf("binary gives %+v, JSON gives %+v", got, want)
		}
	}
}

func TestBinaryDataIsWhatJSONClientsGet(t *testing.T) {
	random := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.UintN(256))
	}
	for name, data := range map[string]string{
		"empty":               "",
		"colours":             "\x1b[1;31mred\x1b[0m plain\r\n",
		"control bytes":       "\x00\x01\x07\x08\t\n\x0c\r\x1b\x7f",
		"unicode":             "héllo → 世界 🙂 \u2028\u2029 \ufffd",
		"invalid UTF-8":       "a\xffb\xc3(c\xe2\x82d\xf0\x9f\x99",
		"split multibyte end": "tail \xe4\xb8",
		"64 KiB random bytes": string(random),
	} {
		t.Run(name, func(t *testing.T) {
			checkSameAsJSON(t, ahp.Envelope{Channel: "ahp-terminal:/t1", ServerSeq: 1796483787738211,
				Action: ahp.Action{Type: ahp.TerminalData, Data: data}})
			checkSameAsJSON(t, ahp.Envelope{Channel: "ahp-terminal:/\"quoted\"", ServerSeq: 7,
				Action: ahp.Action{Type: ahp.TerminalData, Data: data}, Origin: &ahp.Origin{ClientID: "c-1", ClientSeq: 3}})
		})
	}
}

// TestBinaryDataSize: the data travels as it is, whatever escapes JSON needs.
func TestBinaryDataSize(t *testing.T) {
	data := strings.Repeat("\x1b[32mok\x1b[0m ", 1000)
	env := ahp.Envelope{Channel: "ahp-terminal:/t1", ServerSeq: 42, Action: ahp.Action{Type: ahp.TerminalData, Data: data}}
	msg, err := ext.AppendBinaryData(nil, env, ahp.Current)
	if err != nil {
		t.Fatal(err)
	}
	header := binary.BigEndian.Uint32(msg)
	if len(msg) != 4+int(header)+len(data) || header > 160 {
		t.Fatalf("message of %d bytes (header %d) for %d bytes of data", len(msg), header, len(data))
	}
	text, _ := ahp.EncodeEnvelope(env, ahp.Current)
	if len(text) < len(data)*3/2 {
		t.Fatalf("the JSON frame is %d bytes for %d bytes of data: the test's data should need escapes", len(text), len(data))
	}
}

func TestBinaryDataOnlyForOutput(t *testing.T) {
	for name, env := range map[string]ahp.Envelope{
		"input":     {Channel: "ahp-terminal:/t1", Action: ahp.Action{Type: ahp.TerminalInput, Data: "x"}},
		"rejection": {Channel: "ahp-terminal:/t1", Action: ahp.Action{Type: ahp.TerminalData, Data: "x"}, RejectionReason: "no"},
		"title":     {Channel: "ahp-terminal:/t1", Action: ahp.Action{Type: ahp.TerminalTitleChanged, Title: "x"}},
	} {
		if ext.BinaryData(env) {
			t.Errorf("%s: BinaryData is true", name)
		}
		if _, err := ext.AppendBinaryData(nil, env, ahp.Current); err == nil {
			t.Errorf("%s: AppendBinaryData encoded it", name)
		}
	}
}

func TestDecodeBinaryDataRejects(t *testing.T) {
	good, err := ext.AppendBinaryData(nil, ahp.Envelope{Channel: "ahp-terminal:/t1", ServerSeq: 3,
		Action: ahp.Action{Type: ahp.TerminalData, Data: "hi"}}, ahp.Current)
	if err != nil {
		t.Fatal(err)
	}
	withHeader := func(header string, data string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(header)))
		return append(append(b, header...), data...)
	}
	for name, msg := range map[string][]byte{
		"empty":               nil,
		"three bytes":         good[:3],
		"header past the end": append(binary.BigEndian.AppendUint32(nil, 1<<31), good[4:]...),
		"header cut":          good[:10],
		"input action":        withHeader(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/t1","action":{"type":"terminal/input","data":""},"serverSeq":3}}`, "x"),
		"header with data":    withHeader(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/t1","action":{"type":"terminal/data","data":"a"},"serverSeq":3}}`, "x"),
		"rejection":           withHeader(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/t1","action":{"type":"terminal/data","data":""},"serverSeq":3,"rejectionReason":"no"}}`, "x"),
		"not JSON":            withHeader(`hello`, "x"),
		"invalid UTF-8 data":  append(good[:len(good)-2:len(good)-2], 0xff),
	} {
		if env, err := ext.DecodeBinaryData(msg); err == nil {
			t.Errorf("%s: decoded to %+v", name, env)
		}
	}
}

func FuzzBinaryData(f *testing.F) {
	f.Add("ahp-terminal:/t1", int64(1), "\x1b[31mred\x1b[0m", "")
	f.Add("ahp-terminal:/t2", int64(1<<53), "a\xffb\xe2\x82", "client-7")
	f.Fuzz(func(t *testing.T, channel string, seq int64, data, clientID string) {
		env := ahp.Envelope{Channel: channel, ServerSeq: seq, Action: ahp.Action{Type: ahp.TerminalData, Data: data}}
		if clientID != "" {
			env.Origin = &ahp.Origin{ClientID: clientID, ClientSeq: seq / 3}
		}
		checkSameAsJSON(t, env)
	})
}
