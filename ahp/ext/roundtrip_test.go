package ext_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// compileDef compiles one $defs entry of schema.json.
func compileDef(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ext.Schema()))
	if err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(ext.SchemaID, doc); err != nil {
		t.Fatalf("add schema.json: %v", err)
	}
	s, err := c.Compile(ext.SchemaID + "#/$defs/" + def)
	if err != nil {
		t.Fatalf("compile $defs/%s: %v", def, err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// TestWireRoundTrip: each payload type encodes to the bytes termhost sends
// (the server with ahp.Marshal, the clients with encoding/json: the same
// for these values), which its def in schema.json accepts, and decodes back
// to the same value.
func TestWireRoundTrip(t *testing.T) {
	member := ext.Member{ID: "p0123456789ab", Name: "alice", Kind: ext.KindDriver, Device: "Firefox on Linux", Control: true}
	tests := []struct {
		name, def string
		value     any
		wire      string
	}{
		{"screen params", "ChannelParams", ahp.ChannelParams{Channel: "ahp-terminal:/1"}, `{"channel":"ahp-terminal:/1"}`},
		{"screen result", "ScreenResult", ext.ScreenResult{Cols: 80, Rows: 2, AltScreen: true, Lines: []string{"$ ls", ""}},
			`{"cols":80,"rows":2,"altScreen":true,"lines":["$ ls",""]}`},
		{"presence params", "PresenceParams", struct{}{}, `{}`},
		{"presence result", "PresenceResult", ext.PresenceResult{Terminals: []ext.PresenceList{{Channel: "ahp-terminal:/1", Members: []ext.Member{member}}}},
			`{"terminals":[{"channel":"ahp-terminal:/1","members":[{"id":"p0123456789ab","name":"alice","kind":"driver","device":"Firefox on Linux","control":true}]}]}`},
		{"presence result empty", "PresenceResult", ext.PresenceResult{Terminals: []ext.PresenceList{}}, `{"terminals":[]}`},
		{"presence list", "PresenceList", ext.PresenceList{Channel: "ahp-terminal:/1", Members: []ext.Member{{ID: "p0123456789ab", Name: "Owner", Kind: ext.KindOwner}}},
			`{"channel":"ahp-terminal:/1","members":[{"id":"p0123456789ab","name":"Owner","kind":"owner"}]}`},
		{"record params", "RecordParams", ext.RecordParams{Channel: "ahp-terminal:/1", On: false}, `{"channel":"ahp-terminal:/1","on":false}`},
		{"request control", "RequestControlParams", ext.RequestControlParams{Ask: ptr(false), Channel: ahp.RootURI, Terminal: "ahp-terminal:/1"},
			`{"ask":false,"channel":"ahp-root://","terminal":"ahp-terminal:/1"}`},
		{"request control without ask", "RequestControlParams", ext.RequestControlParams{Channel: ahp.RootURI, Terminal: "ahp-terminal:/1"},
			`{"channel":"ahp-root://","terminal":"ahp-terminal:/1"}`},
		{"answer control", "AnswerControlParams", ext.AnswerControlParams{Channel: ahp.RootURI, Grant: true, RequestID: "r1", Terminal: "ahp-terminal:/1"},
			`{"channel":"ahp-root://","grant":true,"requestId":"r1","terminal":"ahp-terminal:/1"}`},
		{"control granted", "ControlResult", ext.ControlResult{Status: ext.ControlGranted}, `{"status":"granted"}`},
		{"control held", "ControlResult", ext.ControlResult{Status: ext.ControlHeld}, `{"status":"held"}`},
		{"control pending", "ControlResult", ext.ControlResult{Status: ext.ControlPending, RequestID: "r1", AutoGrantMs: 20000},
			`{"status":"pending","requestId":"r1","autoGrantMs":20000}`},
		{"control notice", "ControlNotice", ext.ControlNotice{Terminal: "ahp-terminal:/1", RequestID: "r1", Status: ext.ControlGranted, From: member, Auto: true},
			`{"terminal":"ahp-terminal:/1","requestId":"r1","status":"granted","from":{"id":"p0123456789ab","name":"alice","kind":"driver","device":"Firefox on Linux","control":true},"auto":true}`},
		{"skip notice", "SkipNotice", ext.SkipNotice{Channel: "ahp-terminal:/1", Bytes: 8 << 20, RedrawSeq: 42},
			`{"channel":"ahp-terminal:/1","bytes":8388608,"redrawSeq":42}`},
		{"share create params", "ShareCreateParams", ext.ShareCreateParams{Channel: ahp.RootURI, Terminal: "ahp-terminal:/1", Role: ext.RoleViewer, TTLSeconds: 3600, Label: "bob"},
			`{"channel":"ahp-root://","terminal":"ahp-terminal:/1","role":"viewer","ttlSeconds":3600,"label":"bob"}`},
		{"share create params no expiry", "ShareCreateParams", ext.ShareCreateParams{Channel: ahp.RootURI, Terminal: "ahp-terminal:/1", Role: ext.RoleDriver},
			`{"channel":"ahp-root://","terminal":"ahp-terminal:/1","role":"driver"}`},
		{"share create result", "ShareCreateResult", ext.ShareInfo{ID: "s1", Terminal: "ahp-terminal:/1", Role: ext.RoleViewer, CreatedAt: 1, ExpiresAt: ptr(int64(2)), URL: "http://h/t/1#share=x"},
			`{"id":"s1","terminal":"ahp-terminal:/1","role":"viewer","createdAt":1,"expiresAt":2,"url":"http://h/t/1#share=x"}`},
		{"share list params", "ShareListParams", ext.ShareListParams{Channel: ahp.RootURI, Terminal: "ahp-terminal:/1"}, `{"channel":"ahp-root://","terminal":"ahp-terminal:/1"}`},
		{"share list params all", "ShareListParams", ext.ShareListParams{Channel: ahp.RootURI}, `{"channel":"ahp-root://"}`},
		{"share list result", "ShareListResult", ext.ShareListResult{Shares: []ext.ShareInfo{{ID: "s1", Terminal: "ahp-terminal:/1", Role: ext.RoleDriver, Label: "bob", CreatedAt: 1}}},
			`{"shares":[{"id":"s1","terminal":"ahp-terminal:/1","role":"driver","label":"bob","createdAt":1}]}`},
		{"share revoke params", "ShareRevokeParams", ext.ShareRevokeParams{Channel: ahp.RootURI, ID: "s1"}, `{"channel":"ahp-root://","id":"s1"}`},
		{"meta presence id", "PresenceID", "p0123456789ab", `"p0123456789ab"`},
		{"meta size policy", "SizePolicy", ext.SizeSmallest, `"smallest"`},
		{"meta command", "Command", []string{"make", "build"}, `["make","build"]`},
		{"meta record", "Record", true, `true`},
		{"meta runs command", "RunsCommand", true, `true`},
		{"meta holder away", "HolderAway", true, `true`},
		{"meta recording", "Recording", ext.RecordingPaused, `"paused"`},
		{"meta agent", "AgentInfo", ext.AgentInfo{Session: "ahp-session:/termhost-mcp/x", Chat: "ahp-chat:/termhost-mcp/x", Name: "Agent · Claude Code"},
			`{"session":"ahp-session:/termhost-mcp/x","chat":"ahp-chat:/termhost-mcp/x","name":"Agent · Claude Code"}`},
		{"meta run by", "RunBy", ext.RunBy{Kind: ext.RunByAgent, Name: "Agent · Claude Code"}, `{"kind":"agent","name":"Agent · Claude Code"}`},
		{"approval request", "ApprovalRequestParams", ext.ApprovalRequestParams{Terminal: "ahp-terminal:/1", CommandLine: "rm -rf x", Rule: "rm", Reason: "rm deletes files", TimeoutMs: 1000},
			`{"terminal":"ahp-terminal:/1","commandLine":"rm -rf x","rule":"rm","reason":"rm deletes files","timeoutMs":1000}`},
		{"approval result", "ApprovalResult", ext.ApprovalResult{ID: "a1", State: ext.ApprovalDenied, AnsweredBy: &ext.Who{Name: "Ann"}, DenyReason: "no"},
			`{"id":"a1","state":"denied","answeredBy":{"name":"Ann"},"denyReason":"no"}`},
		{"approval answer", "ApprovalAnswerParams", ext.ApprovalAnswerParams{ID: "a1", Decision: ext.DecisionApprove, AlwaysAllow: true},
			`{"id":"a1","decision":"approve","alwaysAllow":true}`},
		{"approval list", "ApprovalList", ext.ApprovalList{Approvals: []ext.Approval{{ID: "a1", Terminal: "ahp-terminal:/1", TerminalTitle: "build",
			CommandLine: "rm x", RequestedBy: ext.Requester{Kind: ext.RequesterAgent, Name: "Agent · Claude Code"}, Rule: "rm", Reason: "r",
			CreatedAt: 1, ExpiresAt: 2, State: ext.ApprovalApproved, AnsweredBy: &ext.Who{Name: "Ann"}, AnsweredAt: 2}}},
			`{"approvals":[{"id":"a1","terminal":"ahp-terminal:/1","terminalTitle":"build","commandLine":"rm x","requestedBy":{"kind":"agent","name":"Agent · Claude Code"},"rule":"rm","reason":"r","createdAt":1,"expiresAt":2,"state":"approved","answeredBy":{"name":"Ann"},"answeredAt":2}]}`},
		{"meta secret prompt", "SecretPrompt", true, `true`},
		{"meta host name", "HostName", "box-1.dev", `"box-1.dev"`},
		{"host list", "HostList", ext.HostList{Home: ext.HomeHost{Name: "box1"}, Hosts: []ext.Host{{Name: "box2", URL: "https://dev.corp/box2/"}}},
			`{"home":{"name":"box1"},"hosts":[{"name":"box2","url":"https://dev.corp/box2/"}]}`},
		{"host list empty", "HostList", ext.HostList{Home: ext.HomeHost{Name: "box1"}, Hosts: []ext.Host{}}, `{"home":{"name":"box1"},"hosts":[]}`},
		{"meta command meta", "CommandMeta", ext.CommandMeta{"c3": {ext.MetaRunBy: json.RawMessage(`{"kind":"agent","name":"Agent"}`)}},
			`{"c3":{"termhost/runBy":{"kind":"agent","name":"Agent"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ahp.Marshal(tc.value, ahp.Current)
			if err != nil {
				t.Fatalf("ahp.Marshal(%#v): %v", tc.value, err)
			}
			if string(got) != tc.wire {
				t.Errorf("ahp.Marshal(%#v) = %s, want %s", tc.value, got, tc.wire)
			}
			if plain, err := json.Marshal(tc.value); err != nil || string(plain) != tc.wire {
				t.Errorf("json.Marshal(%#v) = %s, %v; want %s", tc.value, plain, err, tc.wire)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("reading %s: %v", got, err)
			}
			if err := compileDef(t, tc.def).Validate(inst); err != nil {
				t.Errorf("$defs/%s rejects %s: %v", tc.def, got, err)
			}
			back := reflect.New(reflect.TypeOf(tc.value))
			if err := json.Unmarshal(got, back.Interface()); err != nil {
				t.Fatalf("json.Unmarshal(%s) into %T: %v", got, tc.value, err)
			}
			if !reflect.DeepEqual(back.Elem().Interface(), tc.value) {
				t.Errorf("round trip of %s = %#v, want %#v", got, back.Elem().Interface(), tc.value)
			}
		})
	}
}

// TestSchemaRejects: the defs the server's frames are checked against
// still refuse what they must (ahp/schemacheck's tests check whole frames).
func TestSchemaRejects(t *testing.T) {
	for _, tc := range []struct{ name, def, wire string }{
		{"share list entry with its url", "ShareListResult", `{"shares":[{"id":"s1","terminal":"t","role":"viewer","createdAt":1,"url":"u"}]}`},
		{"share create without url", "ShareCreateResult", `{"id":"s1","terminal":"t","role":"viewer","createdAt":1}`},
		{"member with a clientId for id", "PresenceList", `{"channel":"t","members":[{"id":"client-1","name":"x","kind":"owner"}]}`},
		{"member of an unknown kind", "PresenceList", `{"channel":"t","members":[{"id":"p0123456789ab","name":"x","kind":"admin"}]}`},
		{"skip notice of nothing", "SkipNotice", `{"channel":"ahp-terminal:/1","bytes":0,"redrawSeq":42}`},
		// Only the redraw's envelope carries a serverSeq: the notice is not an action.
		{"skip notice with a serverSeq", "SkipNotice", `{"channel":"ahp-terminal:/1","bytes":1,"serverSeq":42}`},
		{"skip notice with both", "SkipNotice", `{"channel":"ahp-terminal:/1","bytes":1,"redrawSeq":42,"serverSeq":42}`},
		{"notice of an unknown status", "ControlNotice", `{"terminal":"t","requestId":"r","status":"maybe","from":{"id":"p0123456789ab","name":"x","kind":"owner"}}`},
		{"run by an unknown kind", "RunBy", `{"kind":"robot","name":"x"}`}, // "person" is an SSO person (--auth proxy)
		{"empty command", "Command", `[]`},
		{"command without a program", "Command", `[""]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.wire)))
			if err != nil {
				t.Fatal(err)
			}
			if compileDef(t, tc.def).Validate(inst) == nil {
				t.Errorf("$defs/%s accepts %s", tc.def, tc.wire)
			}
		})
	}
}
