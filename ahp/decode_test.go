package ahp_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/termhost/termhost/ahp"
)

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		name    string
		frame   string
		wantErr error
		// for accepted frames
		method       string
		id           string // "" = no id key
		params       string // "" = no params key
		notification bool
	}{
		{name: "garbage", frame: `{"jsonrpc":`, wantErr: ahp.ErrParse},
		{name: "not json", frame: `hello`, wantErr: ahp.ErrParse},
		{name: "empty", frame: ``, wantErr: ahp.ErrParse},
		{name: "whitespace only", frame: " \n", wantErr: ahp.ErrParse},
		{name: "two values", frame: `{} {}`, wantErr: ahp.ErrParse},
		{name: "empty batch", frame: `[]`, wantErr: ahp.ErrInvalidRequest},
		{name: "batch", frame: `[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"ahp-root://"}}]`, wantErr: ahp.ErrInvalidRequest},
		{name: "string", frame: `"x"`, wantErr: ahp.ErrInvalidRequest},
		{name: "number", frame: `1`, wantErr: ahp.ErrInvalidRequest},
		{name: "null", frame: `null`, wantErr: ahp.ErrInvalidRequest},
		{name: "true", frame: `true`, wantErr: ahp.ErrInvalidRequest},
		{name: "missing jsonrpc", frame: `{"id":1,"method":"ping"}`, wantErr: ahp.ErrInvalidRequest},
		{name: "wrong version", frame: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, wantErr: ahp.ErrInvalidRequest},
		{name: "numeric version", frame: `{"jsonrpc":2.0,"id":1,"method":"ping"}`, wantErr: ahp.ErrInvalidRequest},
		{name: "missing method", frame: `{"jsonrpc":"2.0","id":1,"params":{}}`, wantErr: ahp.ErrInvalidRequest},
		{name: "empty method", frame: `{"jsonrpc":"2.0","id":1,"method":""}`, wantErr: ahp.ErrInvalidRequest},
		{name: "numeric method", frame: `{"jsonrpc":"2.0","id":1,"method":5}`, wantErr: ahp.ErrInvalidRequest},
		{name: "response", frame: `{"jsonrpc":"2.0","id":1,"result":null}`, wantErr: ahp.ErrInvalidRequest},
		{name: "array params", frame: `{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`, wantErr: ahp.ErrInvalidRequest},
		{name: "string params", frame: `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, wantErr: ahp.ErrInvalidRequest},
		{name: "number params", frame: `{"jsonrpc":"2.0","method":"x","params":3}`, wantErr: ahp.ErrInvalidRequest},
		{name: "object id", frame: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, wantErr: ahp.ErrInvalidRequest},
		{name: "array id", frame: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, wantErr: ahp.ErrInvalidRequest},
		{name: "boolean id", frame: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, wantErr: ahp.ErrInvalidRequest},
		{name: "null id", frame: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, wantErr: ahp.ErrInvalidRequest},
		{
			name:   "request",
			frame:  `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"ahp-root://"}}`,
			method: "ping", id: "1", params: `{"channel":"ahp-root://"}`,
		},
		{
			name:   "request with whitespace and string id",
			frame:  " \t{ \"jsonrpc\" : \"2.0\", \"id\" : \"a-1\", \"method\" : \"subscribe\", \"params\" : { \"channel\" : \"ahp-terminal:/1\" } }\n",
			method: "subscribe", id: `"a-1"`, params: `{ "channel" : "ahp-terminal:/1" }`,
		},
		{name: "request id zero", frame: `{"jsonrpc":"2.0","id":0,"method":"ping"}`, method: "ping", id: "0"},
		{name: "request large id", frame: `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`, method: "ping", id: "9007199254740991"},
		{name: "request null params", frame: `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`, method: "ping", id: "2", params: "null"},
		{
			name:   "notification",
			frame:  `{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/1","clientSeq":1,"action":{"type":"terminal/input","data":"ls\r"}}}`,
			method: "dispatchAction", params: `{"channel":"ahp-terminal:/1","clientSeq":1,"action":{"type":"terminal/input","data":"ls\r"}}`,
			notification: true,
		},
		{
			name:   "notification with unknown members",
			frame:  `{"jsonrpc":"2.0","method":"unsubscribe","params":{"channel":"ahp-terminal:/1","x":1},"x-extra":true}`,
			method: "unsubscribe", params: `{"channel":"ahp-terminal:/1","x":1}`, notification: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ahp.DecodeMessage([]byte(tt.frame))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("DecodeMessage(%s) error = %v, want %v", tt.frame, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeMessage(%s) error = %v, want a message", tt.frame, err)
			}
			if m.Method != tt.method || string(m.ID) != tt.id || string(m.Params) != tt.params || m.IsNotification() != tt.notification {
				t.Errorf("DecodeMessage(%s) = method %q id %q params %q notification %v; want %q %q %q %v",
					tt.frame, m.Method, m.ID, m.Params, m.IsNotification(), tt.method, tt.id, tt.params, tt.notification)
			}
			if got := string(ahp.ResponseID(m)); tt.id != "" && got != tt.id {
				t.Errorf("ResponseID = %s, want %s", got, tt.id)
			}
		})
	}
	t.Run("ResponseID of nothing is null", func(t *testing.T) {
		if got := string(ahp.ResponseID(nil)); got != "null" {
			t.Errorf("ResponseID(nil) = %s, want null", got)
		}
		if got := string(ahp.ResponseID(&ahp.Message{Method: "x"})); got != "null" {
			t.Errorf("ResponseID(notification) = %s, want null", got)
		}
	})
}

func TestActionUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    ahp.Action // compared when wantErr is false
		wantErr bool
	}{
		// terminal/data and terminal/input
		{name: "data", in: `{"type":"terminal/data","data":"hi"}`, want: ahp.Action{Type: ahp.TerminalData, Data: "hi"}},
		{name: "data empty string", in: `{"type":"terminal/data","data":""}`, want: ahp.Action{Type: ahp.TerminalData}},
		{name: "data missing", in: `{"type":"terminal/data"}`, wantErr: true},
		{name: "data null", in: `{"type":"terminal/data","data":null}`, wantErr: true},
		{name: "data number", in: `{"type":"terminal/data","data":1}`, wantErr: true},
		{name: "input", in: `{"type":"terminal/input","data":"ls\r"}`, want: ahp.Action{Type: ahp.TerminalInput, Data: "ls\r"}},
		{name: "input missing data", in: `{"type":"terminal/input"}`, wantErr: true},
		// terminal/resized
		{name: "resized", in: `{"type":"terminal/resized","cols":120,"rows":40}`, want: ahp.Action{Type: ahp.TerminalResized, Cols: 120, Rows: 40}},
		{name: "resized missing cols", in: `{"type":"terminal/resized","rows":40}`, wantErr: true},
		{name: "resized missing rows", in: `{"type":"terminal/resized","cols":40}`, wantErr: true},
		{name: "resized fractional", in: `{"type":"terminal/resized","cols":1.5,"rows":40}`, wantErr: true},
		{name: "resized string", in: `{"type":"terminal/resized","cols":"80","rows":40}`, wantErr: true},
		// terminal/claimed
		{name: "claimed client", in: `{"type":"terminal/claimed","claim":{"kind":"client","clientId":"c"}}`, want: ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("c")}},
		{
			name: "claimed session with chat", in: `{"type":"terminal/claimed","claim":{"kind":"session","session":"s","chat":"c","turnId":"t","toolCallId":"tc"}}`,
			want: ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.Claim{Kind: ahp.ClaimSession, Session: "s", Chat: "c", TurnID: "t", ToolCallID: "tc"}},
		},
		{
			name: "claimed legacy session without chat", in: `{"type":"terminal/claimed","claim":{"kind":"session","session":"s"}}`,
			want: ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.Claim{Kind: ahp.ClaimSession, Session: "s"}},
		},
		{
			name: "claimed client claim drops session fields", in: `{"type":"terminal/claimed","claim":{"kind":"client","clientId":"c","session":"s","chat":"x","turnId":"t"}}`,
			want: ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("c")},
		},
		{
			name: "claimed session claim drops clientId", in: `{"type":"terminal/claimed","claim":{"kind":"session","session":"s","clientId":"c"}}`,
			want: ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.Claim{Kind: ahp.ClaimSession, Session: "s"}},
		},
		{name: "claimed missing claim", in: `{"type":"terminal/claimed"}`, wantErr: true},
		{name: "claimed null claim", in: `{"type":"terminal/claimed","claim":null}`, wantErr: true},
		{name: "claimed client without clientId", in: `{"type":"terminal/claimed","claim":{"kind":"client"}}`, wantErr: true},
		{name: "claimed session without session", in: `{"type":"terminal/claimed","claim":{"kind":"session","chat":"c"}}`, wantErr: true},
		{name: "claimed unknown kind", in: `{"type":"terminal/claimed","claim":{"kind":"robot","clientId":"c"}}`, wantErr: true},
		{name: "claimed claim not object", in: `{"type":"terminal/claimed","claim":"c"}`, wantErr: true},
		// terminal/titleChanged, terminal/cwdChanged
		{name: "title", in: `{"type":"terminal/titleChanged","title":"vim"}`, want: ahp.Action{Type: ahp.TerminalTitleChanged, Title: "vim"}},
		{name: "title missing", in: `{"type":"terminal/titleChanged"}`, wantErr: true},
		{name: "title number", in: `{"type":"terminal/titleChanged","title":3}`, wantErr: true},
		{name: "cwd", in: `{"type":"terminal/cwdChanged","cwd":"file:///w"}`, want: ahp.Action{Type: ahp.TerminalCwdChanged, Cwd: "file:///w"}},
		{name: "cwd missing", in: `{"type":"terminal/cwdChanged"}`, wantErr: true},
		// terminal/exited
		{name: "exited with code", in: `{"type":"terminal/exited","exitCode":2}`, want: ahp.Action{Type: ahp.TerminalExited, ExitCode: intp(2)}},
		{name: "exited without code", in: `{"type":"terminal/exited"}`, want: ahp.Action{Type: ahp.TerminalExited}},
		{name: "exited code string", in: `{"type":"terminal/exited","exitCode":"2"}`, wantErr: true},
		// payload-less
		{name: "cleared", in: `{"type":"terminal/cleared"}`, want: ahp.Action{Type: ahp.TerminalCleared}},
		{name: "commandDetectionAvailable", in: `{"type":"terminal/commandDetectionAvailable"}`, want: ahp.Action{Type: ahp.TerminalCommandDetectionAvailable}},
		// commands
		{
			name: "commandExecuted", in: `{"type":"terminal/commandExecuted","commandId":"c1","commandLine":"ls","timestamp":1700000000000}`,
			want: ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: "c1", CommandLine: "ls", Timestamp: 1700000000000},
		},
		{name: "commandExecuted missing timestamp", in: `{"type":"terminal/commandExecuted","commandId":"c1","commandLine":"ls"}`, wantErr: true},
		{name: "commandExecuted missing commandLine", in: `{"type":"terminal/commandExecuted","commandId":"c1","timestamp":1}`, wantErr: true},
		{name: "commandExecuted missing commandId", in: `{"type":"terminal/commandExecuted","commandLine":"ls","timestamp":1}`, wantErr: true},
		{
			name: "commandFinished", in: `{"type":"terminal/commandFinished","commandId":"c1","exitCode":0,"durationMs":12}`,
			want: ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: "c1", ExitCode: intp(0), DurationMs: i64p(12)},
		},
		{name: "commandFinished bare", in: `{"type":"terminal/commandFinished","commandId":"c1"}`, want: ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: "c1"}},
		{name: "commandFinished missing commandId", in: `{"type":"terminal/commandFinished","exitCode":0}`, wantErr: true},
		{name: "commandFinished bad duration", in: `{"type":"terminal/commandFinished","commandId":"c1","durationMs":"1"}`, wantErr: true},
		// root
		{
			name: "terminalsChanged", in: `{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"exitCode":1}]}`,
			want: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: []ahp.TerminalInfo{{Resource: "r", Title: "t", Claim: ahp.ClientClaim("c"), Lifecycle: ahp.Lifecycle{Status: ahp.StatusExited, ExitCode: intp(1)}}}},
		},
		{
			name: "terminalsChanged lifecycle without status is running", in: `{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"lifecycle":{}}]}`,
			want: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: []ahp.TerminalInfo{{Resource: "r", Title: "t", Claim: ahp.ClientClaim("c"), Lifecycle: ahp.Running()}}},
		},
		{
			name: "terminalsChanged current shape", in: `{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"session","session":"s","chat":"c"},"lifecycle":{"status":"exited"}}]}`,
			want: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: []ahp.TerminalInfo{{Resource: "r", Title: "t", Claim: ahp.Claim{Kind: ahp.ClaimSession, Session: "s", Chat: "c"}, Lifecycle: ahp.Lifecycle{Status: ahp.StatusExited}}}},
		},
		{name: "terminalsChanged empty", in: `{"type":"root/terminalsChanged","terminals":[]}`, want: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: []ahp.TerminalInfo{}}},
		{name: "terminalsChanged missing", in: `{"type":"root/terminalsChanged"}`, wantErr: true},
		{name: "terminalsChanged not array", in: `{"type":"root/terminalsChanged","terminals":{}}`, wantErr: true},
		{name: "agentsChanged", in: `{"type":"root/agentsChanged","agents":[{"provider":"p"}]}`, want: ahp.Action{Type: ahp.RootAgentsChanged, Agents: []json.RawMessage{json.RawMessage(`{"provider":"p"}`)}}},
		{name: "agentsChanged missing", in: `{"type":"root/agentsChanged"}`, wantErr: true},
		{name: "activeSessionsChanged", in: `{"type":"root/activeSessionsChanged","activeSessions":0}`, want: ahp.Action{Type: ahp.RootActiveSessionsChanged}},
		{name: "activeSessionsChanged missing", in: `{"type":"root/activeSessionsChanged"}`, wantErr: true},
		{
			name: "configChanged", in: `{"type":"root/configChanged","config":{"a":1},"replace":true}`,
			want: ahp.Action{Type: ahp.RootConfigChanged, Config: map[string]json.RawMessage{"a": json.RawMessage("1")}, Replace: boolp(true)},
		},
		{name: "configChanged missing", in: `{"type":"root/configChanged"}`, wantErr: true},
		{name: "configChanged not object", in: `{"type":"root/configChanged","config":[]}`, wantErr: true},
		// not actions at all
		{name: "no type", in: `{"data":"x"}`, wantErr: true},
		{name: "null type", in: `{"type":null}`, wantErr: true},
		{name: "numeric type", in: `{"type":1}`, wantErr: true},
		{name: "array", in: `[]`, wantErr: true},
		{name: "string", in: `"terminal/data"`, wantErr: true},
		{name: "null", in: `null`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got ahp.Action
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr {
				if !errors.Is(err, ahp.ErrInvalidAction) {
					t.Errorf("Unmarshal(%s) error = %v, want one wrapping ErrInvalidAction", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s) error = %v", tt.in, err)
			}
			if !got.Known() {
				t.Errorf("Unmarshal(%s).Known() = false", tt.in)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unmarshal(%s):\n got  %+v\n want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestActionUnknownTypeKeptVerbatim(t *testing.T) {
	tests := []string{
		`{"type":"future/newAction","foo":42}`,
		`{"type":"session/titleChanged","title":"Hello"}`,
		`{"foo":{"nested":[1,2,{"a":null}]},"type":"terminal/somethingNew","z":"<&>"}`,
		`{"type":""}`,
		`{"type":"x-termhost/ping","n":1.50}`,
	}
	for _, in := range tests {
		t.Run(in, func(t *testing.T) {
			var a ahp.Action
			if err := json.Unmarshal([]byte(in), &a); err != nil {
				t.Fatalf("Unmarshal(%s) error = %v, want unknown types kept", in, err)
			}
			if a.Known() {
				t.Errorf("Unmarshal(%s).Known() = true", in)
			}
			for _, shape := range []ahp.Shape{ahp.Legacy, ahp.Current} {
				out, err := ahp.Marshal(a, shape)
				if err != nil {
					t.Fatal(err)
				}
				if string(out) != in {
					t.Errorf("Marshal(%s shape) = %s, want the input verbatim %s", shapeName(shape), out, in)
				}
			}
			// In an envelope, too.
			env, err := ahp.Marshal(ahp.Envelope{Channel: "ahp-root://", Action: a, ServerSeq: 1}, ahp.Legacy)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"channel":"ahp-root://","action":` + in + `,"serverSeq":1}`; string(env) != want {
				t.Errorf("envelope = %s, want %s", env, want)
			}
			// ReduceRoot and ReduceTerminal leave the state alone.
			ts := ahp.TerminalState{Title: "t", Claim: ahp.ClientClaim("c")}
			if got := ahp.ReduceTerminal(ts, a); !reflect.DeepEqual(got, ts) {
				t.Errorf("ReduceTerminal(unknown) = %+v, want %+v", got, ts)
			}
			rs := ahp.RootState{Agents: []json.RawMessage{}}
			if got := ahp.ReduceRoot(rs, a); !reflect.DeepEqual(got, rs) {
				t.Errorf("ReduceRoot(unknown) = %+v, want %+v", got, rs)
			}
		})
	}
}

func TestEnvelopeUnmarshal(t *testing.T) {
	in := `{"channel":"ahp-terminal:/1","action":{"type":"terminal/input","data":"x"},"serverSeq":2148131814,"origin":{"clientId":"c","clientSeq":3},"rejectionReason":"r"}`
	var e ahp.Envelope
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	want := ahp.Envelope{Channel: "ahp-terminal:/1", Action: ahp.Action{Type: ahp.TerminalInput, Data: "x"}, ServerSeq: 2148131814,
		Origin: &ahp.Origin{ClientID: "c", ClientSeq: 3}, RejectionReason: "r"}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("Unmarshal(%s):\n got  %+v\n want %+v", in, e, want)
	}
	var bad ahp.Envelope
	if err := json.Unmarshal([]byte(`{"channel":"c","action":{"type":"terminal/data"},"serverSeq":1}`), &bad); !errors.Is(err, ahp.ErrInvalidAction) {
		t.Errorf("Unmarshal(envelope with invalid action) error = %v, want ErrInvalidAction", err)
	}
}

func TestReconnectParams(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		want        ahp.ReconnectParams
		wantErr     bool // UnmarshalJSON fails
		wantInvalid bool // Validate fails
	}{
		{
			name: "legacy",
			in:   `{"channel":"ahp-root://","clientId":"c","lastSeenServerSeq":42,"subscriptions":["ahp-root://","ahp-terminal:/1"]}`,
			want: ahp.ReconnectParams{Channel: ahp.RootURI, ClientID: "c", LastSeenServerSeq: i64p(42), Subscriptions: []string{"ahp-root://", "ahp-terminal:/1"}},
		},
		{
			name: "legacy without subscriptions",
			in:   `{"channel":"ahp-root://","clientId":"c","lastSeenServerSeq":0}`,
			want: ahp.ReconnectParams{Channel: ahp.RootURI, ClientID: "c", LastSeenServerSeq: i64p(0)},
		},
		{
			name: "per-channel",
			in:   `{"channel":"ahp-root://","clientId":"c","subscriptions":[{"channel":"ahp-root://","lastSeenServerSeq":42},{"channel":"ahp-terminal:/1","lastSeenServerSeq":40}]}`,
			want: ahp.ReconnectParams{Channel: ahp.RootURI, ClientID: "c", PerChannel: true, Cursors: []ahp.ChannelCursor{{Channel: ahp.RootURI, LastSeenServerSeq: 42}, {Channel: "ahp-terminal:/1", LastSeenServerSeq: 40}}},
		},
		{
			name: "per-channel with _meta and unknown keys",
			in:   `{"channel":"ahp-root://","clientId":"c","_meta":{"k":1},"subscriptions":[{"channel":"ahp-terminal:/1","lastSeenServerSeq":0,"x":true}]}`,
			want: ahp.ReconnectParams{Channel: ahp.RootURI, ClientID: "c", PerChannel: true, Cursors: []ahp.ChannelCursor{{Channel: "ahp-terminal:/1"}}},
		},
		{name: "mixed strings and cursors", in: `{"channel":"ahp-root://","clientId":"c","subscriptions":["ahp-root://",{"channel":"ahp-terminal:/1","lastSeenServerSeq":1}]}`, wantErr: true},
		{name: "cursor objects with top-level lastSeenServerSeq", in: `{"channel":"ahp-root://","clientId":"c","lastSeenServerSeq":3,"subscriptions":[{"channel":"ahp-root://","lastSeenServerSeq":1}]}`, wantErr: true},
		{name: "subscription number", in: `{"channel":"ahp-root://","clientId":"c","lastSeenServerSeq":3,"subscriptions":[1]}`, wantErr: true},
		{name: "bad cursor", in: `{"channel":"ahp-root://","clientId":"c","subscriptions":[{"channel":1}]}`, wantErr: true},
		{
			name: "legacy missing lastSeenServerSeq", in: `{"channel":"ahp-root://","clientId":"c","subscriptions":["ahp-root://"]}`,
			want:        ahp.ReconnectParams{Channel: ahp.RootURI, ClientID: "c", Subscriptions: []string{"ahp-root://"}},
			wantInvalid: true,
		},
		{
			name: "missing clientId", in: `{"channel":"ahp-root://","lastSeenServerSeq":1}`,
			want:        ahp.ReconnectParams{Channel: ahp.RootURI, LastSeenServerSeq: i64p(1)},
			wantInvalid: true,
		},
		{
			// VS Code's client sends no channel: it means the root.
			name: "legacy without channel",
			in:   `{"clientId":"c","lastSeenServerSeq":7,"subscriptions":["ahp-root://","agenthost-terminal:/0b1e"]}`,
			want: ahp.ReconnectParams{Channel: ahp.RootURI, ClientID: "c", LastSeenServerSeq: i64p(7), Subscriptions: []string{"ahp-root://", "agenthost-terminal:/0b1e"}},
		},
		{
			name: "per-channel without channel",
			in:   `{"clientId":"c","subscriptions":[{"channel":"ahp-root://","lastSeenServerSeq":3}]}`,
			want: ahp.ReconnectParams{Channel: ahp.RootURI, ClientID: "c", PerChannel: true, Cursors: []ahp.ChannelCursor{{Channel: ahp.RootURI, LastSeenServerSeq: 3}}},
		},
		{
			name: "empty channel", in: `{"channel":"","clientId":"c","lastSeenServerSeq":1}`,
			want:        ahp.ReconnectParams{ClientID: "c", LastSeenServerSeq: i64p(1)},
			wantInvalid: true,
		},
		{
			name: "wrong channel", in: `{"channel":"ahp-terminal:/1","clientId":"c","lastSeenServerSeq":1}`,
			want:        ahp.ReconnectParams{Channel: "ahp-terminal:/1", ClientID: "c", LastSeenServerSeq: i64p(1)},
			wantInvalid: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got ahp.ReconnectParams
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr {
				if err == nil {
					t.Errorf("Unmarshal(%s) = %+v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s) error = %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unmarshal(%s):\n got  %+v\n want %+v", tt.in, got, tt.want)
			}
			if err := got.Validate(); (err != nil) != tt.wantInvalid {
				t.Errorf("Validate(%s) = %v, want error %v", tt.in, err, tt.wantInvalid)
			}
		})
	}
}
