package ahp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

func TestTerminalID(t *testing.T) {
	long := strings.Repeat("a", 128)
	tests := []struct {
		uri     string
		want    string
		wantErr bool
	}{
		{uri: "ahp-terminal:/3f2c", want: "3f2c"},
		{uri: "ahp-terminal:/0b1e2c3d-1111-2222-3333-444455556666", want: "0b1e2c3d-1111-2222-3333-444455556666"},
		{uri: "ahp-terminal:3f2c", want: "3f2c"},
		{uri: "ahp-terminal:/" + long, want: long},
		{uri: "ahp-terminal:/é-ünïcode", want: "é-ünïcode"},
		{uri: "ahp-terminal:/a.b_c~d", want: "a.b_c~d"},
		{uri: "ahp-terminal:/" + long + "a", wantErr: true},
		{uri: "ahp-terminal:/", wantErr: true},
		{uri: "ahp-terminal:", wantErr: true},
		{uri: "ahp-terminal://host/x", wantErr: true},
		{uri: "ahp-terminal:/s1/t1", wantErr: true}, // nested paths are refused (ids are single segments)
		{uri: "ahp-terminal:/a?b", wantErr: true},
		{uri: "ahp-terminal:/a#b", wantErr: true},
		{uri: "ahp-terminal:/a b", wantErr: true},
		{uri: "ahp-terminal:/a\\b", wantErr: true},
		{uri: "ahp-terminal:/a\tb", wantErr: true},
		{uri: "ahp-terminal:/a\nb", wantErr: true},
		{uri: "ahp-terminal:/a\x00b", wantErr: true},
		{uri: "ahp-terminal:/a\x1bb", wantErr: true},
		{uri: "ahp-terminal:/a\x7fb", wantErr: true},
		{uri: "AHP-TERMINAL:/x", wantErr: true},
		{uri: "ahp-root://", wantErr: true},
		{uri: "ahp-session:/x", wantErr: true},
		{uri: "file:///tmp", wantErr: true},
		{uri: "", wantErr: true},
		{uri: " ahp-terminal:/x", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			got, err := ahp.TerminalID(tt.uri)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("TerminalID(%q) = %q, %v; want %q, error %v", tt.uri, got, err, tt.want, tt.wantErr)
			}
			if err == nil {
				if back, err := ahp.TerminalID(ahp.TerminalURI(got)); err != nil || back != got {
					t.Errorf("TerminalID(TerminalURI(%q)) = %q, %v", got, back, err)
				}
			}
		})
	}
}

func TestCreateTerminalParamsValidate(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{name: "minimal", in: `{"channel":"ahp-terminal:/1","claim":{"kind":"client","clientId":"c"}}`},
		{name: "full", in: `{"channel":"ahp-terminal:/1","claim":{"kind":"client","clientId":"c"},"name":"b","cwd":"file:///w","cols":120,"rows":30,"_meta":{}}`},
		{name: "session claim", in: `{"channel":"ahp-terminal:/1","claim":{"kind":"session","session":"s","chat":"c"}}`},
		{name: "max size", in: `{"channel":"ahp-terminal:/1","claim":{"kind":"client","clientId":"c"},"cols":1000,"rows":1000}`},
		{name: "missing claim", in: `{"channel":"ahp-terminal:/1"}`, wantErr: true},
		{name: "bad claim", in: `{"channel":"ahp-terminal:/1","claim":{"kind":"client"}}`, wantErr: true},
		{name: "bad scheme", in: `{"channel":"ahp-session:/1","claim":{"kind":"client","clientId":"c"}}`, wantErr: true},
		{name: "client's own scheme", in: `{"channel":"agenthost-terminal:/0b1e2c3d","claim":{"kind":"client","clientId":"c"}}`},
		{name: "terminal alias (older clients)", in: `{"terminal":"agenthost-terminal:/0b1e2c3d","claim":{"kind":"client","clientId":"c"}}`},
		{name: "terminal alias reserved scheme", in: `{"terminal":"ahp-chat:/1","claim":{"kind":"client","clientId":"c"}}`, wantErr: true},
		{name: "neither channel nor terminal", in: `{"claim":{"kind":"client","clientId":"c"}}`, wantErr: true},
		{name: "negative cols", in: `{"channel":"ahp-terminal:/1","claim":{"kind":"client","clientId":"c"},"cols":-1}`, wantErr: true},
		{name: "too many rows", in: `{"channel":"ahp-terminal:/1","claim":{"kind":"client","clientId":"c"},"rows":1001}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p ahp.CreateTerminalParams
			if err := json.Unmarshal([]byte(tt.in), &p); err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if p.Channel == "" && !tt.wantErr {
				t.Errorf("Unmarshal(%s): channel is empty", tt.in)
			}
			if err := p.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate(%s) = %v, want error %v", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestInitializeParamsValidate(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{name: "minimal", in: `{"channel":"ahp-root://","protocolVersions":["1.0.0"],"clientId":"c"}`},
		{name: "full", in: `{"channel":"ahp-root://","protocolVersions":["1.0.0"],"clientId":"c","clientInfo":{"name":"n"},"initialSubscriptions":["ahp-root://"],"locale":"en","capabilities":{},"_meta":{"x":1},"future":true}`},
		{name: "wrong channel", in: `{"channel":"ahp-terminal:/1","protocolVersions":["1.0.0"],"clientId":"c"}`, wantErr: true},
		{name: "no versions", in: `{"channel":"ahp-root://","protocolVersions":[],"clientId":"c"}`, wantErr: true},
		{name: "no clientId", in: `{"channel":"ahp-root://","protocolVersions":["1.0.0"]}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p ahp.InitializeParams
			if err := json.Unmarshal([]byte(tt.in), &p); err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if err := p.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate(%s) = %v, want error %v", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestClientDispatchable(t *testing.T) {
	tests := map[string]bool{
		ahp.TerminalInput: true, ahp.TerminalResized: true, ahp.TerminalClaimed: true, ahp.TerminalTitleChanged: true,
		ahp.TerminalCleared: true, ahp.RootConfigChanged: true,
		ahp.TerminalData: false, ahp.TerminalCwdChanged: false, ahp.TerminalExited: false,
		ahp.TerminalCommandDetectionAvailable: false, ahp.TerminalCommandExecuted: false, ahp.TerminalCommandFinished: false,
		ahp.RootTerminalsChanged: false, ahp.RootAgentsChanged: false, ahp.RootActiveSessionsChanged: false,
		"future/thing": false, "": false,
	}
	for typ, want := range tests {
		if got := ahp.ClientDispatchable(typ); got != want {
			t.Errorf("ClientDispatchable(%q) = %v, want %v", typ, got, want)
		}
	}
}

func TestClaimNarrows(t *testing.T) {
	held := ahp.Claim{Kind: ahp.ClaimSession, Session: "s", Chat: "c", TurnID: "t", ToolCallID: "tc"}
	tests := []struct {
		name string
		from ahp.Claim
		to   ahp.Claim
		want bool
	}{
		{name: "drop tool call", from: held, to: ahp.Claim{Kind: ahp.ClaimSession, Session: "s", Chat: "c"}, want: true},
		{name: "drop tool call legacy (no chat)", from: held, to: ahp.Claim{Kind: ahp.ClaimSession, Session: "s"}, want: true},
		{name: "keep turn", from: held, to: ahp.Claim{Kind: ahp.ClaimSession, Session: "s", TurnID: "t"}},
		{name: "other session", from: held, to: ahp.Claim{Kind: ahp.ClaimSession, Session: "s2"}},
		{name: "other chat", from: held, to: ahp.Claim{Kind: ahp.ClaimSession, Session: "s", Chat: "c2"}},
		{name: "to client", from: held, to: ahp.ClientClaim("c")},
		{name: "from client", from: ahp.ClientClaim("c"), to: ahp.Claim{Kind: ahp.ClaimSession, Session: "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.from.Narrows(tt.to); got != tt.want {
				t.Errorf("%+v.Narrows(%+v) = %v, want %v", tt.from, tt.to, got, tt.want)
			}
		})
	}
}
