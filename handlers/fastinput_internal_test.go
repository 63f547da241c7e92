package handlers

import (
	"encoding/json"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// generalInput decodes a frame as handle does without fastInput: ok when
// it is a dispatchAction notification of terminal/input that dispatch
// would hand on.
func generalInput(frame []byte) (in keystroke, a ahp.Action, ok bool) {
	msg, err := ahp.DecodeMessage(frame)
	if err != nil || !msg.IsNotification() || msg.Method != ahp.MethodDispatchAction {
		return keystroke{}, ahp.Action{}, false
	}
	var p ahp.DispatchActionParams
	if decodeParams(msg, &p) != nil || len(p.Action) == 0 { // an empty channel is dropped later, by both
		return keystroke{}, ahp.Action{}, false
	}
	if err := json.Unmarshal(p.Action, &a); err != nil || a.Type != ahp.TerminalInput {
		return keystroke{}, ahp.Action{}, false
	}
	return keystroke{channel: p.Channel, clientSeq: p.ClientSeq, data: a.Data, raw: p.Action}, a, true
}

// checkFastInput fails when fastInput takes a frame that the general
// decoding reads otherwise (or not as terminal/input at all).
func checkFastInput(t *testing.T, frame []byte) (fast bool) {
	t.Helper()
	in, ok := fastInput(frame)
	if !ok {
		return false
	}
	want, a, general := generalInput(frame)
	switch {
	case !general:
		t.Errorf("fastInput took %q, which the general decoding refuses", frame)
	case in.channel != want.channel || in.clientSeq != want.clientSeq || in.data != want.data || string(in.raw) != string(want.raw):
		t.Errorf("fastInput(%q) = %q %d %q %s, the general decoding %q %d %q %s", frame,
			in.channel, in.clientSeq, in.data, in.raw, want.channel, want.clientSeq, want.data, want.raw)
	case a.Meta != nil || a.Raw != nil:
		t.Errorf("the general decoding of %q has more than type and data: %+v", frame, a)
	}
	return true
}

// TestFastInputAgreesWithGeneralDecoding: what the one-pass reading of a
// keystroke takes, it reads as the general decoding does; it takes the
// form the clients send, whatever the data (escapes, other scripts,
// invalid UTF-8, which the general decoding replaces), and leaves every
// other frame to the general decoding, which decides and answers errors.
func TestFastInputAgreesWithGeneralDecoding(t *testing.T) {
	taken := []string{
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":0,"action":{"type":"terminal/input","data":""}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":-7,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":999999999999999999,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":2,"action":{"type":"terminal/input","data":"\r\u001b[A\t\"\\\/\u00e9\ud83d\ude00"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":3,"action":{"type":"terminal/input","data":"é 日本 😀"}}}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"dispatchAction\",\"params\":{\"channel\":\"ahp-terminal:/a\",\"clientSeq\":4,\"action\":{\"type\":\"terminal/input\",\"data\":\"\xff\xfe ok\"}}}",
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/\u0061","clientSeq":5,"action":{"type":"terminal/input","data":"\ud800"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"not a uri","clientSeq":6,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"","clientSeq":7,"action":{"type":"terminal/input","data":"x"}}}`,
	}
	left := []string{
		``,
		`{}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}} `,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x","_meta":{}}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/resized","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1.0,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1e3,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":01,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":9999999999999999999,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":-,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":"1","action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":1}}}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"dispatchAction\",\"params\":{\"channel\":\"ahp-terminal:/a\",\"clientSeq\":1,\"action\":{\"type\":\"terminal/input\",\"data\":\"a\nb\"}}}",
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"\x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"\u12"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x\"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"method":"dispatchAction","jsonrpc":"2.0","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"clientSeq":1,"channel":"ahp-terminal:/a","action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"data":"x","type":"terminal/input"}}}`,
		`{"jsonrpc": "2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}},"x":1}`,
	}
	for _, f := range taken {
		if !checkFastInput(t, []byte(f)) {
			t.Errorf("fastInput left %q to the general decoding", f)
		}
	}
	for _, f := range left {
		if checkFastInput(t, []byte(f)) {
			t.Errorf("fastInput took %q", f)
		}
	}
}

// FuzzFastInput: whatever the frame, fastInput takes it only as the general
// decoding reads it.
func FuzzFastInput(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/a","clientSeq":-12,"action":{"type":"terminal/input","data":"\u001b[A\ud83d\ude00é"}}}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		checkFastInput(t, frame)
	})
}
