package schemacheck

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/upstream"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func checker(t *testing.T, shape ahp.Shape) *Checker {
	t.Helper()
	c, err := New(shape)
	if err != nil {
		t.Fatalf("New(%v): %v", shapeName(shape), err)
	}
	return c
}

func shapeName(s ahp.Shape) string {
	if s == ahp.Legacy {
		return "legacy (0.8)"
	}
	return "current (1.x)"
}

var shapes = []ahp.Shape{ahp.Legacy, ahp.Current}

// frames built with the ahp encoders in the legacy (0.8) shape.
var (
	id1           = json.RawMessage("1")
	clientClaim   = ahp.ClientClaim("client-1")
	sessionClaim  = ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", Chat: "ahp-chat:/s1/c1", TurnID: "t1", ToolCallID: "tc1"}
	chatlessClaim = ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", TurnID: "t1"}
	exited0       = ahp.Lifecycle{Status: ahp.StatusExited, ExitCode: new(int)}
	catalogue     = []ahp.TerminalInfo{
		{Resource: "ahp-terminal:/1", Title: "bash", Claim: clientClaim, Lifecycle: ahp.Running()},
		{Resource: "ahp-terminal:/2", Title: "npm test", Claim: sessionClaim, Lifecycle: exited0},
		{Resource: "ahp-terminal:/3", Title: "killed", Claim: clientClaim, Lifecycle: ahp.Lifecycle{Status: ahp.StatusExited}},
	}
	fullTerminal = ahp.TerminalState{
		Title: "build", Cwd: "file:///workspace", Cols: 120, Rows: 30, Claim: sessionClaim, Lifecycle: exited0,
		Content: []ahp.Part{
			{Type: ahp.PartUnclassified, Value: "$ "},
			{Type: ahp.PartCommand, CommandID: "c1", CommandLine: "make", Output: "ok\r\n", Timestamp: 1700000000000, IsComplete: true, ExitCode: new(int), DurationMs: new(int64)},
			{Type: ahp.PartCommand, CommandID: "c2", CommandLine: "make test", Timestamp: 1700000000001},
		},
		SupportsCommandDetection: boolp(true), IsPty: boolp(true),
	}
	rootSnapshot     = ahp.Snapshot{Resource: ahp.RootURI, State: ahp.RootState{Terminals: catalogue}, FromSeq: 3}
	terminalSnapshot = ahp.Snapshot{Resource: "ahp-terminal:/1", State: fullTerminal, FromSeq: 3}
)

func boolp(b bool) *bool { return &b }

func result(t *testing.T, v any, shape ahp.Shape) []byte {
	t.Helper()
	b, err := ahp.EncodeResult(id1, v, shape)
	if err != nil {
		t.Fatalf("EncodeResult(%#v): %v", v, err)
	}
	return b
}

func envelope(t *testing.T, e ahp.Envelope, shape ahp.Shape) []byte {
	t.Helper()
	b, err := ahp.EncodeEnvelope(e, shape)
	if err != nil {
		t.Fatalf("EncodeEnvelope(%#v): %v", e, err)
	}
	return b
}

func terminalAction(a ahp.Action) ahp.Envelope {
	return ahp.Envelope{Channel: "ahp-terminal:/1", Action: a, ServerSeq: 7}
}

// TestFrameValid: frames built by the ahp encoders in a connection's shape
// validate against that shape's schemas.
func TestFrameValid(t *testing.T) {
	for _, shape := range shapes {
		t.Run(shapeName(shape), func(t *testing.T) { testFrameValid(t, shape) })
	}
}

func testFrameValid(t *testing.T, shape ahp.Shape) {
	c := checker(t, shape)
	legacyActions := []ahp.Action{
		{Type: ahp.TerminalData, Data: "hello\r\n"},
		{Type: ahp.TerminalData},
		{Type: ahp.TerminalInput, Data: "ls\r"},
		{Type: ahp.TerminalResized, Cols: 80, Rows: 24},
		{Type: ahp.TerminalClaimed, Claim: clientClaim},
		{Type: ahp.TerminalClaimed, Claim: sessionClaim},
		{Type: ahp.TerminalTitleChanged, Title: "vim"},
		{Type: ahp.TerminalCwdChanged, Cwd: "file:///tmp"},
		{Type: ahp.TerminalExited, ExitCode: new(int)},
		{Type: ahp.TerminalExited},
		{Type: ahp.TerminalCleared},
		{Type: ahp.TerminalCommandDetectionAvailable},
		{Type: ahp.TerminalCommandExecuted, CommandID: "c1", CommandLine: "ls", Timestamp: 1700000000000},
		{Type: ahp.TerminalCommandFinished, CommandID: "c1"},
		{Type: ahp.TerminalCommandFinished, CommandID: "c1", ExitCode: new(int), DurationMs: new(int64)},
	}
	type tc struct {
		name   string
		frame  []byte
		method string
	}
	tests := []tc{
		{"initialize", result(t, ahp.InitializeResult{ProtocolVersion: "0.8.0", ServerSeq: 3,
			ServerInfo: &ahp.Implementation{Name: "termhost", Version: "0.1.0"}, Snapshots: []ahp.Snapshot{rootSnapshot}}, shape), "initialize"},
		{"initialize without snapshots", result(t, ahp.InitializeResult{ProtocolVersion: "0.8.0"}, shape), "initialize"},
		{"initialize empty root", result(t, ahp.InitializeResult{ProtocolVersion: "0.8.0", Snapshots: []ahp.Snapshot{{Resource: ahp.RootURI, State: ahp.RootState{}}}}, shape), "initialize"},
		{"subscribe terminal", result(t, ahp.SubscribeResult{Snapshot: &terminalSnapshot}, shape), "subscribe"},
		{"subscribe root", result(t, ahp.SubscribeResult{Snapshot: &rootSnapshot}, shape), "subscribe"},
		{"subscribe stateless", result(t, ahp.SubscribeResult{}, shape), "subscribe"},
		{"reconnect replay", result(t, ahp.ReplayResult{Actions: []ahp.Envelope{terminalAction(legacyActions[0]),
			{Channel: ahp.RootURI, ServerSeq: 8, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue}}},
			Missing: []string{"ahp-terminal:/gone"}}, shape), "reconnect"},
		{"reconnect replay empty", result(t, ahp.ReplayResult{}, shape), "reconnect"},
		{"reconnect snapshot", result(t, ahp.SnapshotResult{Snapshots: []ahp.Snapshot{rootSnapshot, terminalSnapshot}}, shape), "reconnect"},
		{"reconnect per channel", result(t, ahp.ChannelsResult{Channels: []ahp.ChannelRecovery{
			{Kind: ahp.RecoveryReplay, Channel: "ahp-terminal:/1", Actions: []ahp.Envelope{terminalAction(legacyActions[0])}},
			{Kind: ahp.RecoveryReplay, Channel: "ahp-terminal:/2", Actions: []ahp.Envelope{}},
			{Kind: ahp.RecoverySnapshot, Channel: ahp.RootURI, Snapshot: &rootSnapshot},
			{Kind: ahp.RecoveryMissing, Channel: "ahp-terminal:/gone"}}}, shape), "reconnect"},
		{"ping", result(t, nil, shape), "ping"},
		{"createTerminal", result(t, nil, shape), "createTerminal"},
		{"disposeTerminal", result(t, nil, shape), "disposeTerminal"},
		{"listSessions", result(t, ahp.ListSessionsResult{}, shape), "listSessions"},
		{"authenticate", result(t, struct{}{}, shape), "authenticate"},
		{"string id", []byte(`{"jsonrpc":"2.0","id":"abc","result":null}`), "ping"},
		{"unsupported version", ahp.EncodeError(id1, ahp.UnsupportedVersionError()), "initialize"},
		{"method not found", ahp.EncodeError(id1, ahp.Errorf(ahp.CodeMethodNotFound, "no")), "createSession"},
		{"invalid params", ahp.EncodeError(id1, ahp.Errorf(ahp.CodeInvalidParams, "bad")), "createTerminal"},
		{"not found", ahp.EncodeError(id1, ahp.Errorf(ahp.CodeNotFound, "no such terminal")), "subscribe"},
		{"already exists", ahp.EncodeError(id1, ahp.Errorf(ahp.CodeAlreadyExists, "in use")), "createTerminal"},
		{"internal error", ahp.EncodeError(id1, ahp.Errorf(ahp.CodeInternalError, "spawn")), "createTerminal"},
		{"invalid request", ahp.EncodeError(id1, ahp.Errorf(ahp.CodeInvalidRequest, "initialize may only be sent once")), "initialize"},
		{"parse error with id null", ahp.EncodeError(nil, ahp.Errorf(ahp.CodeParseError, "parse error")), ""},
		{"permission denied without data", ahp.EncodeError(id1, ahp.Errorf(ahp.CodePermissionDenied, "no")), "subscribe"},
		{"auth required", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32007,"message":"auth","data":{"resources":[{"resource":"https://api.example.com"}]}}}`), "authenticate"},
		{"root terminalsChanged", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue}}, shape), ""},
		{"root terminalsChanged empty", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged}}, shape), ""},
		{"root agentsChanged empty", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootAgentsChanged}}, shape), ""},
		{"echo with origin", envelope(t, ahp.Envelope{Channel: "ahp-terminal:/1", ServerSeq: 9, Origin: &ahp.Origin{ClientID: "client-1", ClientSeq: 1},
			Action: ahp.Action{Type: ahp.TerminalInput, Data: "x"}}, shape), ""},
		{"rejection", envelope(t, ahp.Envelope{Channel: "ahp-terminal:/1", ServerSeq: 10, Origin: &ahp.Origin{ClientID: "client-2", ClientSeq: 4},
			RejectionReason: "terminal is claimed by another client", Action: ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("client-2")}}, shape), ""},
		// A chat-less session claim (set by a 0.8 client) in every frame that carries a claim.
		{"chat-less claim action", envelope(t, terminalAction(ahp.Action{Type: ahp.TerminalClaimed, Claim: chatlessClaim}), shape), ""},
		{"chat-less claim catalogue", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged,
			Terminals: []ahp.TerminalInfo{{Resource: "ahp-terminal:/1", Claim: chatlessClaim, Lifecycle: ahp.Running()}}}}, shape), ""},
		{"chat-less claim snapshot", result(t, ahp.SubscribeResult{Snapshot: &ahp.Snapshot{Resource: "ahp-terminal:/1", FromSeq: 1,
			State: ahp.TerminalState{Title: "t", Claim: chatlessClaim, Lifecycle: ahp.Running()}}}, shape), "subscribe"},
		// Rejections of actions that are not valid StateActions.
		{"rejection of an unknown action", envelope(t, ahp.Envelope{Channel: "ahp-terminal:/1", ServerSeq: 11, Origin: &ahp.Origin{ClientID: "c", ClientSeq: 5},
			RejectionReason: "future/x cannot be dispatched by clients", Action: ahp.Action{Type: "future/x", Raw: json.RawMessage(`{"type":"future/x","junk":[1]}`)}}, shape), ""},
		{"rejection of a malformed action on the root", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 12, Origin: &ahp.Origin{ClientID: "c", ClientSeq: 6},
			RejectionReason: "invalid action", Action: ahp.Action{Raw: json.RawMessage(`{"type":""}`)}}, shape), ""},
		// (A server-only action the receiver's schema refuses reaches the
		// encoder as an unknown one: handlers/rejection.go.)
		{"rejection of a forged catalogue", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 13, Origin: &ahp.Origin{ClientID: "c", ClientSeq: 7},
			RejectionReason: "root/terminalsChanged cannot be dispatched by clients", Action: ahp.Action{Type: ahp.RootTerminalsChanged,
				Raw: json.RawMessage(`{"type":"root/terminalsChanged","terminals":[{"resource":"r","claim":{"kind":"robot"}}]}`)}}, shape), ""},
		// termhost's extension commands.
		{"x-share/create", []byte(`{"jsonrpc":"2.0","id":4,"result":{"id":"s1","terminal":"ahp-terminal:/1","role":"viewer","createdAt":1,"expiresAt":2,"url":"http://h/t/1#share=x"}}`), "x-share/create"},
		{"x-share/list", []byte(`{"jsonrpc":"2.0","id":4,"result":{"shares":[{"id":"s1","terminal":"ahp-terminal:/1","role":"driver","createdAt":1}]}}`), "x-share/list"},
		{"x-share/list empty", []byte(`{"jsonrpc":"2.0","id":4,"result":{"shares":[]}}`), "x-share/list"},
		{"x-share/revoke", []byte(`{"jsonrpc":"2.0","id":4,"result":null}`), "x-share/revoke"},
		{"x-termhost/requestControl held", []byte(`{"jsonrpc":"2.0","id":4,"result":{"status":"held"}}`), "x-termhost/requestControl"},
		// At this schema revision auth/required.resource is still a string (later revisions made it an object).
		{"auth/required notification", []byte(`{"jsonrpc":"2.0","method":"auth/required","params":{"channel":"ahp-root://","resource":"https://api.example.com","reason":"expired"}}`), ""},
	}
	for _, a := range legacyActions {
		b, _ := ahp.Marshal(a, shape)
		tests = append(tests, tc{"action " + string(b), envelope(t, terminalAction(a), shape), ""})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.Frame(tt.frame, tt.method); err != nil {
				t.Errorf("Frame(%s, %q) = %v, want nil", tt.frame, tt.method, err)
			}
		})
	}
}

type invalidFrame struct {
	name   string
	frame  []byte
	method string
	want   string // substring of the error
}

// TestFrameInvalid: each frame is refused with an error naming the problem,
// by the checker of every shape it is listed for.
func TestFrameInvalid(t *testing.T) {
	generic := genericInvalidFrames(t)
	byShape := map[ahp.Shape][]invalidFrame{ahp.Legacy: legacyInvalidFrames(t), ahp.Current: currentInvalidFrames(t)}
	for _, shape := range shapes {
		c := checker(t, shape)
		t.Run(shapeName(shape), func(t *testing.T) {
			for _, tt := range append(byShape[shape], generic...) {
				t.Run(tt.name, func(t *testing.T) {
					err := c.Frame(tt.frame, tt.method)
					if err == nil {
						t.Fatalf("Frame(%s, %q) = nil, want an error mentioning %q", tt.frame, tt.method, tt.want)
					}
					if !strings.Contains(err.Error(), tt.want) {
						t.Errorf("Frame(%s, %q) = %v\nwant an error mentioning %q", tt.frame, tt.method, err, tt.want)
					}
				})
			}
		})
	}
}

// legacyInvalidFrames are 0.9+ shapes on a 0.8 connection (refused only
// because the terminal types are closed; see TestOfficialSchemaIsOpen).
func legacyInvalidFrames(t *testing.T) []invalidFrame {
	currentCatalogue := envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue[:1]}}, ahp.Current)
	return append(unreducibleFrames(""), []invalidFrame{
		{"current-shape TerminalInfo", currentCatalogue, "", "lifecycle"},
		{"current-shape TerminalState", result(t, ahp.SubscribeResult{Snapshot: &terminalSnapshot}, ahp.Current), "subscribe", "oneOf"},
		{"current-shape root snapshot", result(t, ahp.InitializeResult{ProtocolVersion: "0.8.0", Snapshots: []ahp.Snapshot{rootSnapshot}}, ahp.Current), "initialize", "lifecycle"},
		{"session claim with chat", envelope(t, terminalAction(ahp.Action{Type: ahp.TerminalClaimed, Claim: sessionClaim}), ahp.Current), "", "chat"},
	}...)
}

// currentInvalidFrames are ≤ 0.8 shapes on a 1.x connection.
func currentInvalidFrames(t *testing.T) []invalidFrame {
	legacyCatalogue := envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue[:1]}}, ahp.Legacy)
	return append(unreducibleFrames(`,"lifecycle":{"status":"running"}`), []invalidFrame{
		{"legacy-shape TerminalInfo", legacyCatalogue, "", "lifecycle"},
		{"legacy-shape TerminalState", result(t, ahp.SubscribeResult{Snapshot: &terminalSnapshot}, ahp.Legacy), "subscribe", "oneOf"},
		{"legacy-shape root snapshot", result(t, ahp.InitializeResult{ProtocolVersion: "1.0.0", Snapshots: []ahp.Snapshot{rootSnapshot}}, ahp.Legacy), "initialize", "lifecycle"},
		{"session claim without chat", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","serverSeq":1,"action":{"type":"terminal/claimed","claim":{"kind":"session","session":"ahp-session:/s1"}}}}`), "", "chat"},
		{"catalogue session claim without chat", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","serverSeq":1,"action":{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"session","session":"ahp-session:/s1"},"lifecycle":{"status":"running"}}]}}}`), "", "chat"},
		{"exitCode beside lifecycle", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","serverSeq":1,"action":{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"exited","exitCode":1},"exitCode":1}]}}}`), "", "exitCode"},
		{"running lifecycle with exitCode", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","serverSeq":1,"action":{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"running","exitCode":1}}]}}}`), "", "lifecycle"},
		{"lifecycle status unknown", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","serverSeq":1,"action":{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"zombie"}}]}}}`), "", "lifecycle"},
	}...)
}

// unreducibleFrames are snapshots whose terminal state has a key no AHP
// reducer puts there (a state is what the reducers make of the actions),
// in the shape of the connection: lifecycle is the 1.x state's, nothing
// for 0.8.
func unreducibleFrames(lifecycle string) []invalidFrame {
	state := func(content, meta string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"snapshot":{"resource":"ahp-terminal:/1","fromSeq":0,"state":{"title":"t","content":[` + content +
			`],"claim":{"kind":"client","clientId":"c"}` + lifecycle + meta + `}}}}`)
	}
	return []invalidFrame{
		{"command part with _meta", state(`{"type":"command","commandId":"c1","commandLine":"make","output":"","timestamp":1,"isComplete":false,"_meta":{"termhost/runBy":{"kind":"agent","name":"Agent"}}}`, ""), "subscribe", "oneOf"},
		{"unclassified part with _meta", state(`{"type":"unclassified","value":"x","_meta":{}}`, ""), "subscribe", "oneOf"},
		{"terminal state with _meta", state("", `,"_meta":{"x":1}`), "subscribe", "oneOf"},
	}
}

// genericInvalidFrames are refused by the schemas of every version.
func genericInvalidFrames(t *testing.T) []invalidFrame {
	return []invalidFrame{
		// Required members and types the schemas enforce.
		{"exitCode null", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","serverSeq":1,"action":{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"exitCode":null}]}}}`), "", "exitCode"},
		{"origin null", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","serverSeq":1,"origin":null,"action":{"type":"terminal/cleared"}}}`), "", "origin"},
		{"serverSeq missing", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","action":{"type":"terminal/cleared"}}}`), "", "serverSeq"},
		{"serverSeq string", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","serverSeq":"1","action":{"type":"terminal/cleared"}}}`), "", "serverSeq"},
		{"action data missing", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","serverSeq":1,"action":{"type":"terminal/data"}}}`), "", "data"},
		{"action cols string", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","serverSeq":1,"action":{"type":"terminal/resized","cols":"80","rows":24}}}`), "", "cols"},
		{"unknown action type", envelope(t, terminalAction(ahp.Action{Type: "future/x", Raw: json.RawMessage(`{"type":"future/x"}`)}), ahp.Legacy), "", "future/x"},
		{"terminalsChanged null", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","serverSeq":1,"action":{"type":"root/terminalsChanged","terminals":null}}}`), "", "terminals"},
		{"claim kind unknown", []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","serverSeq":1,"action":{"type":"terminal/claimed","claim":{"kind":"robot"}}}}`), "", "claim"},
		{"snapshots null", []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"0.8.0","serverSeq":0,"snapshots":null}}`), "initialize", "snapshots"},
		{"snapshots missing", []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"0.8.0","serverSeq":0}}`), "initialize", "snapshots"},
		{"root state without agents", []byte(`{"jsonrpc":"2.0","id":1,"result":{"snapshot":{"resource":"ahp-root://","fromSeq":0,"state":{"terminals":[]}}}}`), "subscribe", "oneOf"},
		{"terminal content null", []byte(`{"jsonrpc":"2.0","id":1,"result":{"snapshot":{"resource":"ahp-terminal:/1","fromSeq":0,"state":{"title":"t","content":null,"claim":{"kind":"client","clientId":"c"}}}}}`), "subscribe", "oneOf"},
		{"items null", []byte(`{"jsonrpc":"2.0","id":1,"result":{"items":null}}`), "listSessions", "items"},
		{"replay without missing", []byte(`{"jsonrpc":"2.0","id":1,"result":{"type":"replay","actions":[]}}`), "reconnect", "missing"},
		{"reconnect per-channel unknown kind", []byte(`{"jsonrpc":"2.0","id":1,"result":{"channels":[{"kind":"live","channel":"ahp-root://"}]}}`), "reconnect", "reconnect result"},
		{"reconnect per-channel bad envelope", []byte(`{"jsonrpc":"2.0","id":1,"result":{"channels":[{"kind":"replay","channel":"ahp-terminal:/1","actions":[{"channel":"ahp-terminal:/1","action":{"type":"terminal/data"},"serverSeq":1}]}]}}`), "reconnect", "reconnect result"},
		{"reconnect per-channel snapshot missing", []byte(`{"jsonrpc":"2.0","id":1,"result":{"channels":[{"kind":"snapshot","channel":"ahp-root://"}]}}`), "reconnect", "reconnect result"},
		{"ping result object", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), "ping", "want null"},
		{"createTerminal result missing", []byte(`{"jsonrpc":"2.0","id":1}`), "createTerminal", "neither"},
		// termhost's extension commands.
		{"x-share/create without url", []byte(`{"jsonrpc":"2.0","id":4,"result":{"id":"s1","terminal":"ahp-terminal:/1","role":"viewer","createdAt":1}}`), "x-share/create", "url"},
		{"x-share/list leaks a url", []byte(`{"jsonrpc":"2.0","id":4,"result":{"shares":[{"id":"s1","terminal":"ahp-terminal:/1","role":"viewer","createdAt":1,"url":"u"}]}}`), "x-share/list", "x-share/list result"},
		{"x-share/create unknown role", []byte(`{"jsonrpc":"2.0","id":4,"result":{"id":"s1","terminal":"ahp-terminal:/1","role":"admin","createdAt":1,"url":"u"}}`), "x-share/create", "role"},
		{"unknown extension", []byte(`{"jsonrpc":"2.0","id":4,"result":null}`), "x-nothing", "no result type"},
		// JSON-RPC envelope.
		{"not json", []byte(`{"jsonrpc":`), "", "not one JSON value"},
		{"two values", []byte(`{} {}`), "", "not one JSON value"},
		{"array", []byte(`[]`), "", "not a JSON object"},
		{"invalid utf-8", []byte("{\"jsonrpc\":\"2.0\",\"method\":\"action\",\"params\":{\"x\":\"\xff\"}}"), "", "UTF-8"},
		{"jsonrpc missing", []byte(`{"id":1,"result":null}`), "ping", "jsonrpc"},
		{"jsonrpc 1.0", []byte(`{"jsonrpc":"1.0","id":1,"result":null}`), "ping", "jsonrpc"},
		{"extra member", []byte(`{"jsonrpc":"2.0","id":1,"result":null,"extra":1}`), "ping", "extra"},
		{"notification with id", []byte(`{"jsonrpc":"2.0","id":1,"method":"action","params":{}}`), "", "id"},
		{"notification without params", []byte(`{"jsonrpc":"2.0","method":"action"}`), "", "params"},
		{"notification unknown method", []byte(`{"jsonrpc":"2.0","method":"x-termhost/hello","params":{}}`), "", "not defined"},
		{"notification where a response was expected", envelope(t, terminalAction(ahp.Action{Type: ahp.TerminalCleared}), ahp.Legacy), "ping", "expected the response"},
		{"response without id", []byte(`{"jsonrpc":"2.0","result":null}`), "ping", "no id"},
		{"response object id", []byte(`{"jsonrpc":"2.0","id":{},"result":null}`), "ping", "id"},
		{"response fractional id", []byte(`{"jsonrpc":"2.0","id":1.5,"result":null}`), "ping", "id"},
		{"success with id null", []byte(`{"jsonrpc":"2.0","id":null,"result":null}`), "ping", "id null"},
		{"result and error", []byte(`{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-32603,"message":"x"}}`), "ping", "both"},
		{"success without method", result(t, nil, ahp.Legacy), "", "without its request method"},
		{"success for unknown method", result(t, nil, ahp.Legacy), "frobnicate", "no result type"},
		// Error objects.
		{"unsupported version without data", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"Unsupported protocol version"}}`), "initialize", "needs data"},
		{"unsupported version bad data", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"x","data":{"supportedVersions":"^1.0.0"}}}`), "initialize", "supportedVersions"},
		{"unsupported version data without list", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"x","data":{}}}`), "initialize", "supportedVersions"},
		{"auth required without data", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32007,"message":"x"}}`), "authenticate", "needs data"},
		{"error code string", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":"-32601","message":"x"}}`), "x", "integer"},
		{"error code fractional", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601.5,"message":"x"}}`), "x", "integer"},
		{"error code unknown", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32011,"message":"conflict"}}`), "x", "-32011"},
		{"error message missing", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}`), "x", "message"},
		{"error message number", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":1}}`), "x", "message"},
		{"error extra member", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x","detail":"y"}}`), "x", "detail"},
		{"error not object", []byte(`{"jsonrpc":"2.0","id":1,"error":"x"}`), "x", "object"},
	}
}

// TestOfficialSchemaIsOpen documents what the published 0.8 schemas accept:
// every object is open (no additionalProperties: false) and exitCode is
// optional, so a 0.9+ terminal (lifecycle, claim chat) validates unless the
// terminal types are closed as New does.
func TestOfficialSchemaIsOpen(t *testing.T) {
	official, err := load(upstream.FS, "schema", "0.8", false)
	if err != nil {
		t.Fatal(err)
	}
	frames := []struct {
		name   string
		frame  []byte
		method string
	}{
		{"TerminalInfo with lifecycle", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue}}, ahp.Current), ""},
		{"TerminalState with lifecycle", result(t, ahp.SubscribeResult{Snapshot: &terminalSnapshot}, ahp.Current), "subscribe"},
		{"session claim with chat", envelope(t, terminalAction(ahp.Action{Type: ahp.TerminalClaimed, Claim: sessionClaim}), ahp.Current), ""},
	}
	for _, f := range frames {
		t.Run(f.name, func(t *testing.T) {
			if err := official.Frame(f.frame, f.method); err != nil {
				t.Errorf("official schema rejects %s: %v (if upstream closed the type, the extra closing in New is redundant)", f.frame, err)
			}
		})
	}
}

// TestBrokenRefDefect documents the upstream defect that load works around,
// in both pinned schema sets.
func TestBrokenRefDefect(t *testing.T) {
	for _, dir := range []string{"schema", "schema-1.x"} {
		t.Run(dir, func(t *testing.T) {
			b, err := fs.ReadFile(upstream.FS, dir+"/actions.schema.json")
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			id := doc.(map[string]any)["$id"].(string)
			c := jsonschema.NewCompiler()
			if err := c.AddResource(id, doc); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compile(id + "#/$defs/ActionEnvelope"); err == nil {
				t.Errorf("%s/actions.schema.json compiles unchanged; the upstream defect is fixed and dropBrokenRef can go", dir)
			}
			defs := doc.(map[string]any)["$defs"].(map[string]any)
			before := len(defs["StateAction"].(map[string]any)["oneOf"].([]any))
			dropBrokenRef(defs)
			if after := len(defs["StateAction"].(map[string]any)["oneOf"].([]any)); after != before-1 {
				t.Errorf("dropBrokenRef left %d of %d StateAction entries, want %d", after, before, before-1)
			}
		})
	}
}

// TestResultMethods pins the method → result mapping derived from the schema
// for the methods a terminal server answers.
func TestResultMethods(t *testing.T) {
	for _, shape := range shapes {
		t.Run(shapeName(shape), func(t *testing.T) { testResultMethods(t, checker(t, shape)) })
	}
}

func testResultMethods(t *testing.T, c *Checker) {
	for _, m := range []string{"initialize", "subscribe", "listSessions", "authenticate"} {
		if len(c.results[m]) != 1 || c.nullResults[m] {
			t.Errorf("method %s: %d result schemas, null %v; want one schema", m, len(c.results[m]), c.nullResults[m])
		}
	}
	if len(c.results["reconnect"]) != 3 || c.nullResults["reconnect"] {
		t.Errorf("reconnect: %d result schemas, null %v; want replay, snapshot and per-channel", len(c.results["reconnect"]), c.nullResults["reconnect"])
	}
	for _, m := range []string{"ping", "createTerminal", "disposeTerminal"} {
		if !c.nullResults[m] || c.results[m] != nil {
			t.Errorf("method %s: null %v, schemas %d; want a null result", m, c.nullResults[m], len(c.results[m]))
		}
	}
	for _, m := range []string{"dispatchAction", "unsubscribe", "base", "paginated"} {
		if _, ok := c.results[m]; ok || c.nullResults[m] {
			t.Errorf("%s is not a request with a result", m)
		}
	}
	if len(c.actions) < 15 {
		t.Errorf("found %d action types, want at least the 15 root and terminal ones", len(c.actions))
	}
}

func TestActionErrorIsShort(t *testing.T) {
	c := checker(t, ahp.Current)
	err := c.Frame([]byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","serverSeq":1,"action":{"type":"terminal/data"}}}`), "")
	if err == nil {
		t.Fatal("Frame accepted terminal/data without data")
	}
	if msg := err.Error(); strings.Count(msg, "\n") > 6 || !strings.Contains(msg, "terminal/data") {
		t.Errorf("error for a terminal/data without data is not short and to the point:\n%s", msg)
	}
}

func TestNewOnceAndConcurrent(t *testing.T) {
	a, b := checker(t, ahp.Legacy), checker(t, ahp.Legacy)
	if a != b {
		t.Errorf("New returned two checkers; the schemas should compile once")
	}
	if cur := checker(t, ahp.Current); cur == a {
		t.Errorf("New(Current) returned the 0.8 checker")
	}
	for version, want := range map[string]ahp.Shape{"0.8.0": ahp.Legacy, "0.5.1": ahp.Legacy, "0.9.0": ahp.Current, "1.0.0": ahp.Current, "1.1.0": ahp.Current} {
		if c, err := ForVersion(version); err != nil || c != checker(t, want) {
			t.Errorf("ForVersion(%q) = %p, %v; want the %s checker", version, c, err, shapeName(want))
		}
	}
	frames := [][]byte{
		result(t, ahp.SubscribeResult{Snapshot: &terminalSnapshot}, ahp.Legacy),
		envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue}}, ahp.Legacy),
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Go(func() {
			f := frames[i%2]
			method := ""
			if i%2 == 0 {
				method = "subscribe"
			}
			for range 20 {
				if err := a.Frame(f, method); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
