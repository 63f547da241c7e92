package schemacheck

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/termhost/termhost/ahp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func checker(t *testing.T) *Checker {
	t.Helper()
	c, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// frames built with the ahp encoders in the legacy (0.8) shape.
var (
	id1          = json.RawMessage("1")
	clientClaim  = ahp.ClientClaim("client-1")
	sessionClaim = ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/s1", Chat: "ahp-chat:/s1/c1", TurnID: "t1", ToolCallID: "tc1"}
	exited0      = ahp.Lifecycle{Status: ahp.StatusExited, ExitCode: new(int)}
	catalogue    = []ahp.TerminalInfo{
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

func TestFrameValid(t *testing.T) {
	c := checker(t)
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
			ServerInfo: &ahp.Implementation{Name: "termhost", Version: "0.1.0"}, Snapshots: []ahp.Snapshot{rootSnapshot}}, ahp.Legacy), "initialize"},
		{"initialize without snapshots", result(t, ahp.InitializeResult{ProtocolVersion: "0.8.0"}, ahp.Legacy), "initialize"},
		{"initialize empty root", result(t, ahp.InitializeResult{ProtocolVersion: "0.8.0", Snapshots: []ahp.Snapshot{{Resource: ahp.RootURI, State: ahp.RootState{}}}}, ahp.Legacy), "initialize"},
		{"subscribe terminal", result(t, ahp.SubscribeResult{Snapshot: &terminalSnapshot}, ahp.Legacy), "subscribe"},
		{"subscribe root", result(t, ahp.SubscribeResult{Snapshot: &rootSnapshot}, ahp.Legacy), "subscribe"},
		{"subscribe stateless", result(t, ahp.SubscribeResult{}, ahp.Legacy), "subscribe"},
		{"reconnect replay", result(t, ahp.ReplayResult{Actions: []ahp.Envelope{terminalAction(legacyActions[0]),
			{Channel: ahp.RootURI, ServerSeq: 8, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue}}},
			Missing: []string{"ahp-terminal:/gone"}}, ahp.Legacy), "reconnect"},
		{"reconnect replay empty", result(t, ahp.ReplayResult{}, ahp.Legacy), "reconnect"},
		{"reconnect snapshot", result(t, ahp.SnapshotResult{Snapshots: []ahp.Snapshot{rootSnapshot, terminalSnapshot}}, ahp.Legacy), "reconnect"},
		{"ping", result(t, nil, ahp.Legacy), "ping"},
		{"createTerminal", result(t, nil, ahp.Legacy), "createTerminal"},
		{"disposeTerminal", result(t, nil, ahp.Legacy), "disposeTerminal"},
		{"listSessions", result(t, ahp.ListSessionsResult{}, ahp.Legacy), "listSessions"},
		{"authenticate", result(t, struct{}{}, ahp.Legacy), "authenticate"},
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
		{"root terminalsChanged", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue}}, ahp.Legacy), ""},
		{"root terminalsChanged empty", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged}}, ahp.Legacy), ""},
		{"root agentsChanged empty", envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootAgentsChanged}}, ahp.Legacy), ""},
		{"echo with origin", envelope(t, ahp.Envelope{Channel: "ahp-terminal:/1", ServerSeq: 9, Origin: &ahp.Origin{ClientID: "client-1", ClientSeq: 1},
			Action: ahp.Action{Type: ahp.TerminalInput, Data: "x"}}, ahp.Legacy), ""},
		{"rejection", envelope(t, ahp.Envelope{Channel: "ahp-terminal:/1", ServerSeq: 10, Origin: &ahp.Origin{ClientID: "client-2", ClientSeq: 4},
			RejectionReason: "terminal is claimed by another client", Action: ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("client-2")}}, ahp.Legacy), ""},
		// At this schema revision auth/required.resource is still a string (the digest says 0.8.0 made it an object).
		{"auth/required notification", []byte(`{"jsonrpc":"2.0","method":"auth/required","params":{"channel":"ahp-root://","resource":"https://api.example.com","reason":"expired"}}`), ""},
	}
	for _, a := range legacyActions {
		b, _ := ahp.Marshal(a, ahp.Legacy)
		tests = append(tests, tc{"action " + string(b), envelope(t, terminalAction(a), ahp.Legacy), ""})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.Frame(tt.frame, tt.method); err != nil {
				t.Errorf("Frame(%s, %q) = %v, want nil", tt.frame, tt.method, err)
			}
		})
	}
}

func TestFrameInvalid(t *testing.T) {
	c := checker(t)
	currentCatalogue := envelope(t, ahp.Envelope{Channel: ahp.RootURI, ServerSeq: 2, Action: ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: catalogue[:1]}}, ahp.Current)
	tests := []struct {
		name   string
		frame  []byte
		method string
		want   string // substring of the error
	}{
		// The 0.9+ shape on a 0.8 connection (rejected only because the terminal types are closed; see TestOfficialSchemaIsOpen).
		{"current-shape TerminalInfo", currentCatalogue, "", "lifecycle"},
		{"current-shape TerminalState", result(t, ahp.SubscribeResult{Snapshot: &terminalSnapshot}, ahp.Current), "subscribe", "oneOf"},
		{"current-shape root snapshot", result(t, ahp.InitializeResult{ProtocolVersion: "0.8.0", Snapshots: []ahp.Snapshot{rootSnapshot}}, ahp.Current), "initialize", "lifecycle"},
		{"session claim with chat", envelope(t, terminalAction(ahp.Action{Type: ahp.TerminalClaimed, Claim: sessionClaim}), ahp.Current), "", "chat"},
		// Required members and types the 0.8 schemas enforce.
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
		{"reconnect per-channel result", []byte(`{"jsonrpc":"2.0","id":1,"result":{"channels":[]}}`), "reconnect", "reconnect result"},
		{"ping result object", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), "ping", "want null"},
		{"createTerminal result missing", []byte(`{"jsonrpc":"2.0","id":1}`), "createTerminal", "neither"},
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
	for _, tt := range tests {
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
}

// TestOfficialSchemaIsOpen documents what the published 0.8 schemas accept:
// every object is open (no additionalProperties: false) and exitCode is
// optional, so a 0.9+ terminal (lifecycle, claim chat) validates unless the
// terminal types are closed as New does.
func TestOfficialSchemaIsOpen(t *testing.T) {
	official, err := load(schemaDir(t), false)
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

// TestBrokenRefDefect documents the upstream defect that load works around.
func TestBrokenRefDefect(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(schemaDir(t), "actions.schema.json"))
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
		t.Errorf("actions.schema.json compiles unchanged; the upstream defect is fixed and dropBrokenRef can go")
	}
	defs := doc.(map[string]any)["$defs"].(map[string]any)
	before := len(defs["StateAction"].(map[string]any)["oneOf"].([]any))
	dropBrokenRef(defs)
	if after := len(defs["StateAction"].(map[string]any)["oneOf"].([]any)); after != before-1 {
		t.Errorf("dropBrokenRef left %d of %d StateAction entries, want %d", after, before, before-1)
	}
}

func schemaDir(t *testing.T) string {
	t.Helper()
	dir, err := findSchemaDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestResultMethods pins the method → result mapping derived from the schema
// for the methods a terminal server answers.
func TestResultMethods(t *testing.T) {
	c := checker(t)
	for _, m := range []string{"initialize", "subscribe", "listSessions", "authenticate"} {
		if len(c.results[m]) != 1 || c.nullResults[m] {
			t.Errorf("method %s: %d result schemas, null %v; want one schema", m, len(c.results[m]), c.nullResults[m])
		}
	}
	if len(c.results["reconnect"]) != 2 || c.nullResults["reconnect"] {
		t.Errorf("reconnect: %d result schemas, null %v; want replay and snapshot", len(c.results["reconnect"]), c.nullResults["reconnect"])
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
	c := checker(t)
	err := c.Frame([]byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/1","serverSeq":1,"action":{"type":"terminal/data"}}}`), "")
	if err == nil {
		t.Fatal("Frame accepted terminal/data without data")
	}
	if msg := err.Error(); strings.Count(msg, "\n") > 6 || !strings.Contains(msg, "terminal/data") {
		t.Errorf("error for a terminal/data without data is not short and to the point:\n%s", msg)
	}
}

func TestNewOnceAndConcurrent(t *testing.T) {
	a, b := checker(t), checker(t)
	if a != b {
		t.Errorf("New returned two checkers; the schemas should compile once")
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
