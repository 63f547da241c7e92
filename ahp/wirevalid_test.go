package ahp_test

import (
	"encoding/json"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// What termhost sends must be valid for the
// receiver's version, whatever older or broken clients gave it. The frames
// are checked against the pinned schemas in ahp/schemacheck
// (TestFrameValid) and end to end in handlers (TestChatlessSessionClaim,
// TestRejections).

var (
	chatless        = ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", TurnID: "t1", ToolCallID: "tc1"}
	sessionWithChat = ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", Chat: "ahp-chat:/c1"}
)

// TestChatlessSessionClaimWire: a session claim set by a ≤ 0.8 client has no
// chat; ≥ 0.9 peers see the session URI as its chat, ≤ 0.8 peers no chat.
func TestChatlessSessionClaimWire(t *testing.T) {
	tests := []struct {
		name  string
		claim ahp.Claim
		shape ahp.Shape
		want  string
	}{
		{"chat-less, current", chatless, ahp.Current, `{"kind":"session","session":"ahp-session:/s1","chat":"ahp-session:/s1","turnId":"t1","toolCallId":"tc1"}`},
		{"chat-less, legacy", chatless, ahp.Legacy, `{"kind":"session","session":"ahp-session:/s1","turnId":"t1","toolCallId":"tc1"}`},
		{"with chat, current", sessionWithChat, ahp.Current, `{"kind":"session","session":"ahp-session:/s1","chat":"ahp-chat:/c1"}`},
		{"with chat, legacy", sessionWithChat, ahp.Legacy, `{"kind":"session","session":"ahp-session:/s1"}`},
		{"client, current", ahp.ClientClaim("c"), ahp.Current, `{"kind":"client","clientId":"c"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forms := map[string]any{
				"claim":     tt.claim,
				"action":    ahp.Action{Type: ahp.TerminalClaimed, Claim: tt.claim},
				"catalogue": ahp.TerminalInfo{Resource: "ahp-terminal:/1", Claim: tt.claim, Lifecycle: ahp.Running()},
				"state":     ahp.TerminalState{Claim: tt.claim, Lifecycle: ahp.Running()},
			}
			for form, v := range forms {
				b := marshal(t, v, tt.shape)
				var got struct {
					Claim json.RawMessage `json:"claim"`
				}
				raw := b
				if form != "claim" {
					if err := json.Unmarshal(b, &got); err != nil {
						t.Fatalf("%s: %v", form, err)
					}
					raw = got.Claim
				}
				if string(raw) != tt.want {
					t.Errorf("%s of %+v in the %s shape: claim %s, want %s", form, tt.claim, shapeName(tt.shape), raw, tt.want)
				}
			}
		})
	}
}

// TestClaimValidateFor: ≥ 0.9 clients must send chat in session claims.
func TestClaimValidateFor(t *testing.T) {
	tests := []struct {
		name    string
		claim   ahp.Claim
		shape   ahp.Shape
		wantErr bool
	}{
		{"chat-less session from 0.8", chatless, ahp.Legacy, false},
		{"chat-less session from 1.x", chatless, ahp.Current, true},
		{"session with chat from 1.x", sessionWithChat, ahp.Current, false},
		{"client from 1.x", ahp.ClientClaim("c"), ahp.Current, false},
		{"client without id from 0.8", ahp.Claim{Kind: ahp.ClaimClient}, ahp.Legacy, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.claim.ValidateFor(tt.shape)
			if (err != nil) != tt.wantErr {
				t.Errorf("%+v.ValidateFor(%s) = %v, want error %v", tt.claim, shapeName(tt.shape), err, tt.wantErr)
			}
			p := ahp.CreateTerminalParams{Channel: "ahp-terminal:/x", Claim: &tt.claim}
			if perr := p.CheckShape(tt.shape); (perr != nil) != (err != nil) {
				t.Errorf("CreateTerminalParams.CheckShape(%s) = %v, want %v", shapeName(tt.shape), perr, err)
			}
		})
	}
	if err := (ahp.CreateTerminalParams{Channel: "ahp-terminal:/x"}).CheckShape(ahp.Current); err != nil {
		t.Errorf("CheckShape without a claim = %v, want nil (Validate reports it)", err)
	}
}

// TestNarrowsTranslatedChat: a 1.x client narrows a chat-less claim by
// echoing the chat it was shown (the session URI).
func TestNarrowsTranslatedChat(t *testing.T) {
	tests := []struct {
		name   string
		holder ahp.Claim
		next   ahp.Claim
		want   bool
	}{
		{"0.8 narrows chat-less", chatless, ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1"}, true},
		{"1.x narrows chat-less with the shown chat", chatless, ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", Chat: "ahp-session:/s1"}, true},
		{"1.x names another chat", chatless, ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", Chat: "ahp-chat:/other"}, false},
		{"1.x narrows with the real chat", sessionWithChat, ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", Chat: "ahp-chat:/c1"}, true},
		{"keeps the tool call", chatless, chatless, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.holder.Narrows(tt.next); got != tt.want {
				t.Errorf("%+v.Narrows(%+v) = %v, want %v", tt.holder, tt.next, got, tt.want)
			}
		})
	}
}

// TestRejectionAction: a rejection echoes a known client-dispatchable action
// and otherwise carries a no-op of its channel; envelopes that are not
// rejections keep even unknown actions verbatim.
func TestRejectionAction(t *testing.T) {
	const term = "ahp-terminal:/1"
	decode := func(raw string) ahp.Action {
		var a ahp.Action
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
		return a
	}
	unknown := ahp.Action{Type: "future/x", Raw: json.RawMessage(`{"type":"future/x","x":1}`)}
	garbage := ahp.Action{Type: "", Raw: json.RawMessage(`{"type":""}`)}
	tests := []struct {
		name    string
		channel string
		action  ahp.Action
		reason  string
		want    string
	}{
		{"input echoed", term, decode(`{"type":"terminal/input","data":"ls\r"}`), "full", `{"type":"terminal/input","data":"ls\r"}`},
		{"resize echoed", term, decode(`{"type":"terminal/resized","cols":0,"rows":5}`), "bad size", `{"type":"terminal/resized","cols":0,"rows":5}`},
		{"claim echoed", term, decode(`{"type":"terminal/claimed","claim":{"kind":"client","clientId":"b"}}`), "held", `{"type":"terminal/claimed","claim":{"kind":"client","clientId":"b"}}`},
		{"config echoed on a terminal", term, decode(`{"type":"root/configChanged","config":{"a":1}}`), "root only", `{"type":"root/configChanged","config":{"a":1}}`},
		{"unknown type on a terminal", term, unknown, "unknown", `{"type":"terminal/input","data":""}`},
		{"malformed on a terminal", term, garbage, "invalid", `{"type":"terminal/input","data":""}`},
		{"server-only data on a terminal (the server checked it)", term, decode(`{"type":"terminal/data","data":"forged"}`), "server only", `{"type":"terminal/data","data":"forged"}`},
		{"unknown type on the root", ahp.RootURI, unknown, "unknown", `{"type":"root/configChanged","config":{}}`},
		{"unknown type, not a rejection", term, unknown, "", `{"type":"future/x","x":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ahp.Envelope{Channel: tt.channel, Action: tt.action, ServerSeq: 9, Origin: &ahp.Origin{ClientID: "c", ClientSeq: 3}, RejectionReason: tt.reason}
			for _, shape := range []ahp.Shape{ahp.Current, ahp.Legacy} {
				frame, err := ahp.EncodeEnvelope(e, shape)
				if err != nil {
					t.Fatal(err)
				}
				var got struct {
					Params struct {
						Action json.RawMessage `json:"action"`
						Reason string          `json:"rejectionReason"`
					} `json:"params"`
				}
				if err := json.Unmarshal(frame, &got); err != nil {
					t.Fatalf("%s: %v", frame, err)
				}
				if string(got.Params.Action) != tt.want || got.Params.Reason != tt.reason {
					t.Errorf("%s shape, %s: action %s reason %q, want %s %q", shapeName(shape), tt.name, got.Params.Action, got.Params.Reason, tt.want, tt.reason)
				}
				if m := marshal(t, e, shape); string(m) != string(mustParams(t, frame)) {
					t.Errorf("Marshal and EncodeEnvelope disagree:\n %s\n %s", m, mustParams(t, frame))
				}
			}
		})
	}
}

func marshal(t *testing.T, v any, shape ahp.Shape) []byte {
	t.Helper()
	b, err := ahp.Marshal(v, shape)
	if err != nil {
		t.Fatalf("Marshal(%+v): %v", v, err)
	}
	return b
}

func mustParams(t *testing.T, frame []byte) json.RawMessage {
	t.Helper()
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(frame, &m); err != nil {
		t.Fatal(err)
	}
	return m.Params
}
