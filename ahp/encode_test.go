package ahp_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestEncoding checks the wire rules clients depend on: success responses
// always carry "result", notifications carry no "id", server envelopes carry
// no "origin", required arrays are [] and optional fields are omitted (never
// null), in both shapes where the shape matters.
func TestEncoding(t *testing.T) {
	id := json.RawMessage("7")
	marshal := func(v any, shape ahp.Shape) func() ([]byte, error) {
		return func() ([]byte, error) { return ahp.Marshal(v, shape) }
	}
	result := func(v any, shape ahp.Shape) func() ([]byte, error) {
		return func() ([]byte, error) { return ahp.EncodeResult(id, v, shape) }
	}
	envelope := func(e ahp.Envelope, shape ahp.Shape) func() ([]byte, error) {
		return func() ([]byte, error) { return ahp.EncodeEnvelope(e, shape) }
	}
	sessionClaim := ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", Chat: "ahp-chat:/s1/c1", TurnID: "t1", ToolCallID: "tc1"}
	exited3 := ahp.Lifecycle{Status: ahp.StatusExited, ExitCode: intp(3)}
	termState := ahp.TerminalState{Title: "build", Claim: sessionClaim, Lifecycle: exited3}

	tests := []struct {
		name      string
		encode    func() ([]byte, error)
		want      string
		allowNull []string // JSON paths where null is the right value
	}{
		{
			name:      "ping result is null",
			encode:    result(nil, ahp.Current),
			want:      `{"jsonrpc":"2.0","id":7,"result":null}`,
			allowNull: []string{".result"},
		},
		{
			name:      "createTerminal result null with string id",
			encode:    func() ([]byte, error) { return ahp.EncodeResult(json.RawMessage(`"a"`), nil, ahp.Legacy) },
			want:      `{"jsonrpc":"2.0","id":"a","result":null}`,
			allowNull: []string{".result"},
		},
		{
			name:      "Message response without result still has result",
			encode:    func() ([]byte, error) { return json.Marshal(ahp.Message{JSONRPC: "2.0", ID: id}) },
			want:      `{"jsonrpc":"2.0","id":7,"result":null}`,
			allowNull: []string{".result"},
		},
		{
			name:   "subscribe result without snapshot",
			encode: result(ahp.SubscribeResult{}, ahp.Current),
			want:   `{"jsonrpc":"2.0","id":7,"result":{}}`,
		},
		{
			name:   "subscribe result terminal snapshot legacy",
			encode: result(ahp.SubscribeResult{Snapshot: &ahp.Snapshot{Resource: "ahp-terminal:/1", State: termState, FromSeq: 4}}, ahp.Legacy),
			want: `{"jsonrpc":"2.0","id":7,"result":{"snapshot":{"resource":"ahp-terminal:/1","fromSeq":4,
				"state":{"title":"build","content":[],"exitCode":3,"claim":{"kind":"session","session":"ahp-session:/s1","turnId":"t1","toolCallId":"tc1"}}}}}`,
		},
		{
			name:   "subscribe result terminal snapshot current",
			encode: result(ahp.SubscribeResult{Snapshot: &ahp.Snapshot{Resource: "ahp-terminal:/1", State: termState, FromSeq: 4}}, ahp.Current),
			want: `{"jsonrpc":"2.0","id":7,"result":{"snapshot":{"resource":"ahp-terminal:/1","fromSeq":4,
				"state":{"title":"build","content":[],"lifecycle":{"status":"exited","exitCode":3},"claim":{"kind":"session","session":"ahp-session:/s1","chat":"ahp-chat:/s1/c1","turnId":"t1","toolCallId":"tc1"}}}}}`,
		},
		{
			name:   "initialize result without snapshots or optional fields",
			encode: result(ahp.InitializeResult{ProtocolVersion: "1.0.0"}, ahp.Current),
			want:   `{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"1.0.0","serverSeq":0,"snapshots":[]}}`,
		},
		{
			name: "initialize result empty root snapshot",
			encode: result(ahp.InitializeResult{ProtocolVersion: "0.8.0", ServerSeq: 2, ServerInfo: &ahp.Implementation{Name: "termhost"},
				Snapshots: []ahp.Snapshot{{Resource: ahp.RootURI, State: ahp.RootState{}}}}, ahp.Legacy),
			want: `{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"0.8.0","serverSeq":2,"serverInfo":{"name":"termhost"},
				"snapshots":[{"resource":"ahp-root://","state":{"agents":[],"terminals":[]},"fromSeq":0}]}}`,
		},
		{
			name:   "listSessions result has items []",
			encode: result(ahp.ListSessionsResult{}, ahp.Current),
			want:   `{"jsonrpc":"2.0","id":7,"result":{"items":[]}}`,
		},
		{
			name:   "listSessions result via json.Marshal has items []",
			encode: func() ([]byte, error) { return json.Marshal(ahp.ListSessionsResult{}) },
			want:   `{"items":[]}`,
		},
		{
			name:   "reconnect replay result empty",
			encode: marshal(ahp.ReplayResult{}, ahp.Current),
			want:   `{"type":"replay","actions":[],"missing":[]}`,
		},
		{
			name: "reconnect replay result with actions legacy",
			encode: marshal(ahp.ReplayResult{Actions: []ahp.Envelope{{Channel: "ahp-terminal:/1", ServerSeq: 9,
				Action: ahp.Action{Type: ahp.TerminalClaimed, Claim: sessionClaim}}}, Missing: []string{"ahp-terminal:/dead"}}, ahp.Legacy),
			want: `{"type":"replay","actions":[{"channel":"ahp-terminal:/1","serverSeq":9,
				"action":{"type":"terminal/claimed","claim":{"kind":"session","session":"ahp-session:/s1","turnId":"t1","toolCallId":"tc1"}}}],
				"missing":["ahp-terminal:/dead"]}`,
		},
		{
			name:   "reconnect snapshot result empty",
			encode: marshal(ahp.SnapshotResult{}, ahp.Current),
			want:   `{"type":"snapshot","snapshots":[]}`,
		},
		{
			name: "per-channel reconnect result",
			encode: marshal(ahp.ChannelsResult{Channels: []ahp.ChannelRecovery{
				{Kind: ahp.RecoveryReplay, Channel: "ahp-terminal:/1"},
				{Kind: ahp.RecoverySnapshot, Channel: ahp.RootURI, Snapshot: &ahp.Snapshot{Resource: ahp.RootURI, State: ahp.RootState{}, FromSeq: 5}},
				{Kind: ahp.RecoveryMissing, Channel: "ahp-terminal:/dead"},
			}}, ahp.Current),
			want: `{"channels":[{"kind":"replay","channel":"ahp-terminal:/1","actions":[]},
				{"kind":"snapshot","channel":"ahp-root://","snapshot":{"resource":"ahp-root://","state":{"agents":[],"terminals":[]},"fromSeq":5}},
				{"kind":"missing","channel":"ahp-terminal:/dead"}]}`,
		},
		{
			name:   "per-channel reconnect result empty",
			encode: marshal(ahp.ChannelsResult{}, ahp.Current),
			want:   `{"channels":[]}`,
		},
		{
			name:   "server envelope has no origin and no id",
			encode: envelope(ahp.Envelope{Channel: "ahp-terminal:/1", ServerSeq: 3, Action: ahp.Action{Type: ahp.TerminalData, Data: "x"}}, ahp.Current),
			want:   `{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","action":{"type":"terminal/data","data":"x"},"serverSeq":3}}`,
		},
		{
			name: "echo and rejection envelope",
			encode: envelope(ahp.Envelope{Channel: "ahp-terminal:/1", ServerSeq: 4, Origin: &ahp.Origin{ClientID: "c", ClientSeq: 1},
				RejectionReason: "no", Action: ahp.Action{Type: ahp.TerminalInput, Data: ""}}, ahp.Legacy),
			want: `{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","action":{"type":"terminal/input","data":""},
				"serverSeq":4,"origin":{"clientId":"c","clientSeq":1},"rejectionReason":"no"}}`,
		},
		{
			name:   "terminalsChanged nil list legacy",
			encode: marshal(ahp.Action{Type: ahp.RootTerminalsChanged}, ahp.Legacy),
			want:   `{"type":"root/terminalsChanged","terminals":[]}`,
		},
		{
			name:   "terminalsChanged empty list current",
			encode: marshal(ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: []ahp.TerminalInfo{}}, ahp.Current),
			want:   `{"type":"root/terminalsChanged","terminals":[]}`,
		},
		{
			name: "terminalsChanged legacy",
			encode: marshal(ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: []ahp.TerminalInfo{
				{Resource: "ahp-terminal:/1", Title: "a", Claim: ahp.ClientClaim("c")},
				{Resource: "ahp-terminal:/2", Title: "b", Claim: sessionClaim, Lifecycle: exited3},
				{Resource: "ahp-terminal:/3", Title: "c", Claim: ahp.ClientClaim("c"), Lifecycle: ahp.Lifecycle{Status: ahp.StatusExited}},
			}}, ahp.Legacy),
			want: `{"type":"root/terminalsChanged","terminals":[
				{"resource":"ahp-terminal:/1","title":"a","claim":{"kind":"client","clientId":"c"}},
				{"resource":"ahp-terminal:/2","title":"b","claim":{"kind":"session","session":"ahp-session:/s1","turnId":"t1","toolCallId":"tc1"},"exitCode":3},
				{"resource":"ahp-terminal:/3","title":"c","claim":{"kind":"client","clientId":"c"}}]}`,
		},
		{
			name: "terminalsChanged current",
			encode: marshal(ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: []ahp.TerminalInfo{
				{Resource: "ahp-terminal:/1", Title: "a", Claim: ahp.ClientClaim("c")},
				{Resource: "ahp-terminal:/2", Title: "b", Claim: sessionClaim, Lifecycle: exited3},
				{Resource: "ahp-terminal:/3", Title: "c", Claim: ahp.ClientClaim("c"), Lifecycle: ahp.Lifecycle{Status: ahp.StatusExited}},
			}}, ahp.Current),
			want: `{"type":"root/terminalsChanged","terminals":[
				{"resource":"ahp-terminal:/1","title":"a","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"running"}},
				{"resource":"ahp-terminal:/2","title":"b","claim":{"kind":"session","session":"ahp-session:/s1","chat":"ahp-chat:/s1/c1","turnId":"t1","toolCallId":"tc1"},"lifecycle":{"status":"exited","exitCode":3}},
				{"resource":"ahp-terminal:/3","title":"c","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"exited"}}]}`,
		},
		{
			name:   "agentsChanged nil list",
			encode: marshal(ahp.Action{Type: ahp.RootAgentsChanged}, ahp.Current),
			want:   `{"type":"root/agentsChanged","agents":[]}`,
		},
		{
			name:   "configChanged nil config",
			encode: marshal(ahp.Action{Type: ahp.RootConfigChanged}, ahp.Current),
			want:   `{"type":"root/configChanged","config":{}}`,
		},
		{
			name:   "activeSessionsChanged zero",
			encode: marshal(ahp.Action{Type: ahp.RootActiveSessionsChanged}, ahp.Current),
			want:   `{"type":"root/activeSessionsChanged","activeSessions":0}`,
		},
		{
			name:   "exited without code",
			encode: marshal(ahp.Action{Type: ahp.TerminalExited}, ahp.Legacy),
			want:   `{"type":"terminal/exited"}`,
		},
		{
			name:   "exited with code 0",
			encode: marshal(ahp.Action{Type: ahp.TerminalExited, ExitCode: intp(0)}, ahp.Current),
			want:   `{"type":"terminal/exited","exitCode":0}`,
		},
		{
			name:   "cleared",
			encode: marshal(ahp.Action{Type: ahp.TerminalCleared}, ahp.Current),
			want:   `{"type":"terminal/cleared"}`,
		},
		{
			name:   "commandDetectionAvailable",
			encode: marshal(ahp.Action{Type: ahp.TerminalCommandDetectionAvailable}, ahp.Current),
			want:   `{"type":"terminal/commandDetectionAvailable"}`,
		},
		{
			name:   "data keeps empty string",
			encode: marshal(ahp.Action{Type: ahp.TerminalData}, ahp.Current),
			want:   `{"type":"terminal/data","data":""}`,
		},
		{
			name:   "resized keeps zeros",
			encode: marshal(ahp.Action{Type: ahp.TerminalResized}, ahp.Current),
			want:   `{"type":"terminal/resized","cols":0,"rows":0}`,
		},
		{
			name:   "titleChanged and cwdChanged keep empty strings",
			encode: marshal(ahp.Action{Type: ahp.TerminalTitleChanged}, ahp.Current),
			want:   `{"type":"terminal/titleChanged","title":""}`,
		},
		{
			name:   "commandExecuted keeps zero timestamp",
			encode: marshal(ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: "c1"}, ahp.Current),
			want:   `{"type":"terminal/commandExecuted","commandId":"c1","commandLine":"","timestamp":0}`,
		},
		{
			name:   "commandFinished without code or duration",
			encode: marshal(ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: "c1"}, ahp.Current),
			want:   `{"type":"terminal/commandFinished","commandId":"c1"}`,
		},
		{
			name:   "commandFinished with code and duration",
			encode: marshal(ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: "c1", ExitCode: intp(0), DurationMs: i64p(0)}, ahp.Current),
			want:   `{"type":"terminal/commandFinished","commandId":"c1","exitCode":0,"durationMs":0}`,
		},
		{
			name:   "claimed session claim legacy drops chat",
			encode: marshal(ahp.Action{Type: ahp.TerminalClaimed, Claim: sessionClaim}, ahp.Legacy),
			want:   `{"type":"terminal/claimed","claim":{"kind":"session","session":"ahp-session:/s1","turnId":"t1","toolCallId":"tc1"}}`,
		},
		{
			name:   "claimed client claim",
			encode: marshal(ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("c")}, ahp.Current),
			want:   `{"type":"terminal/claimed","claim":{"kind":"client","clientId":"c"}}`,
		},
		{
			name:   "terminal state zero legacy",
			encode: marshal(ahp.TerminalState{Claim: ahp.ClientClaim("c")}, ahp.Legacy),
			want:   `{"title":"","content":[],"claim":{"kind":"client","clientId":"c"}}`,
		},
		{
			name:   "terminal state zero current is running",
			encode: marshal(ahp.TerminalState{Claim: ahp.ClientClaim("c")}, ahp.Current),
			want:   `{"title":"","content":[],"lifecycle":{"status":"running"},"claim":{"kind":"client","clientId":"c"}}`,
		},
		{
			name: "terminal state full current",
			encode: marshal(ahp.TerminalState{Title: "t", Cwd: "file:///w", Cols: 80, Rows: 24, Claim: ahp.ClientClaim("c"),
				Content: []ahp.Part{
					{Type: ahp.PartUnclassified, Value: "$ "},
					{Type: ahp.PartCommand, CommandID: "c1", CommandLine: "ls"},
					{Type: ahp.PartCommand, CommandID: "c2", CommandLine: "x", Output: "o", Timestamp: 5, IsComplete: true, ExitCode: intp(0), DurationMs: i64p(2)},
				},
				SupportsCommandDetection: boolp(true), IsPty: boolp(false)}, ahp.Current),
			want: `{"title":"t","cwd":"file:///w","cols":80,"rows":24,"lifecycle":{"status":"running"},"claim":{"kind":"client","clientId":"c"},
				"supportsCommandDetection":true,"isPty":false,"content":[
				{"type":"unclassified","value":"$ "},
				{"type":"command","commandId":"c1","commandLine":"ls","output":"","timestamp":0,"isComplete":false},
				{"type":"command","commandId":"c2","commandLine":"x","output":"o","timestamp":5,"isComplete":true,"exitCode":0,"durationMs":2}]}`,
		},
		{
			name:   "terminal state exited without code legacy has no exitCode",
			encode: marshal(ahp.TerminalState{Claim: ahp.ClientClaim("c"), Lifecycle: ahp.Lifecycle{Status: ahp.StatusExited}}, ahp.Legacy),
			want:   `{"title":"","content":[],"claim":{"kind":"client","clientId":"c"}}`,
		},
		{
			name:   "root state zero",
			encode: marshal(ahp.RootState{}, ahp.Legacy),
			want:   `{"agents":[],"terminals":[]}`,
		},
		{
			name: "root state via json.Marshal is current",
			encode: func() ([]byte, error) {
				return json.Marshal(ahp.RootState{Terminals: []ahp.TerminalInfo{{Resource: "r", Title: "t", Claim: ahp.ClientClaim("c")}}})
			},
			want: `{"agents":[],"terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"running"}}]}`,
		},
		{
			name:   "unsupported version error carries supportedVersions",
			encode: func() ([]byte, error) { return ahp.EncodeError(id, ahp.UnsupportedVersionError()), nil },
			want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32005,"message":"Unsupported protocol version",
				"data":{"supportedVersions":["^1.0.0","^0.10.0","^0.9.0","^0.8.0","^0.7.0","^0.6.0","^0.5.1"]}}}`,
		},
		{
			name: "parse error answers with id null and no data",
			encode: func() ([]byte, error) {
				return ahp.EncodeError(nil, ahp.Errorf(ahp.CodeParseError, "parse error")), nil
			},
			want:      `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			allowNull: []string{".id"},
		},
		{
			name: "error echoes request id",
			encode: func() ([]byte, error) {
				return ahp.EncodeError(json.RawMessage(`"x"`), ahp.Errorf(ahp.CodeNotFound, "no %s", "t")), nil
			},
			want: `{"jsonrpc":"2.0","id":"x","error":{"code":-32008,"message":"no t"}}`,
		},
		{
			name: "notification without params key omits nothing it needs",
			encode: func() ([]byte, error) {
				return ahp.EncodeNotification("x-ping", map[string]string{"channel": ahp.RootURI}, ahp.Current)
			},
			want: `{"jsonrpc":"2.0","method":"x-ping","params":{"channel":"ahp-root://"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.encode()
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			got, want := mustGeneric(t, b), mustGeneric(t, []byte(tt.want))
			if !sameJSON(got, want) {
				t.Errorf("encoded:\n got  %s\n want %s", canon(got), canon(want))
			}
			for _, p := range findNulls(got, "") {
				if !slices.Contains(tt.allowNull, p) {
					t.Errorf("encoded %s has null at %s; optional fields must be omitted and arrays must be []", b, p)
				}
			}
			if bytes.HasSuffix(b, []byte("\n")) {
				t.Errorf("encoded %q ends in a newline", b)
			}
		})
	}
}

// TestEncodingFrameKeys checks key presence that the generic comparison above
// already implies, stated directly: the rules clients depend on.
func TestEncodingFrameKeys(t *testing.T) {
	keys := func(t *testing.T, b []byte) map[string]any {
		t.Helper()
		m, ok := mustGeneric(t, b).(map[string]any)
		if !ok {
			t.Fatalf("frame %s is not an object", b)
		}
		return m
	}
	t.Run("success response always has result", func(t *testing.T) {
		for _, shape := range []ahp.Shape{ahp.Legacy, ahp.Current} {
			b, err := ahp.EncodeResult(json.RawMessage("1"), nil, shape)
			if err != nil {
				t.Fatal(err)
			}
			if m := keys(t, b); !hasKey(m, "result") || !hasKey(m, "id") || hasKey(m, "error") || hasKey(m, "method") {
				t.Errorf("EncodeResult(1, nil, %s) = %s, want id and result only", shapeName(shape), b)
			}
		}
	})
	t.Run("notification has no id", func(t *testing.T) {
		b, err := ahp.EncodeEnvelope(ahp.Envelope{Channel: ahp.RootURI, Action: ahp.Action{Type: ahp.RootTerminalsChanged}}, ahp.Current)
		if err != nil {
			t.Fatal(err)
		}
		m := keys(t, b)
		if hasKey(m, "id") || hasKey(m, "result") || m["method"] != "action" {
			t.Errorf("EncodeEnvelope = %s, want method action without id", b)
		}
		if params := m["params"].(map[string]any); hasKey(params, "origin") || hasKey(params, "rejectionReason") {
			t.Errorf("server envelope %s has origin or rejectionReason", b)
		}
	})
	t.Run("html characters are not escaped", func(t *testing.T) {
		b, err := ahp.EncodeEnvelope(ahp.Envelope{Channel: "ahp-terminal:/1", Action: ahp.Action{Type: ahp.TerminalData, Data: "<a&b>"}}, ahp.Current)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`"<a&b>"`)) {
			t.Errorf("EncodeEnvelope(data %q) = %s, want the text unescaped", "<a&b>", b)
		}
	})
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }
