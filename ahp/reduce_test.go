package ahp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// reducerFixture is one reducer case: the upstream format (ahp/upstream/README.md)
// plus our optional "shape" key. Upstream cases are in the legacy (≤ 0.8) shape
// and have no "shape"; ours say "legacy" or "current" (see
// testdata/reducers/README.md).
type reducerFixture struct {
	Description string            `json:"description"`
	Reducer     string            `json:"reducer"`
	Shape       string            `json:"shape"`
	Initial     json.RawMessage   `json:"initial"`
	Actions     []json.RawMessage `json:"actions"`
	Expected    json.RawMessage   `json:"expected"`
}

func loadReducerFixture(t *testing.T, path string) reducerFixture {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	var f reducerFixture
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("decode fixture %s: %v", path, err)
	}
	if f.Initial == nil || f.Expected == nil || f.Actions == nil {
		t.Fatalf("fixture %s lacks initial, actions or expected", path)
	}
	switch f.Shape {
	case "", "legacy", "current":
	default:
		t.Fatalf("fixture %s: unknown shape %q", path, f.Shape)
	}
	return f
}

// TestReducerFixtures replays the upstream reducer fixtures and ours: legacy
// fixtures as given with ahp.Legacy and adapted to the ≥ 0.9 shape with
// ahp.Current; current fixtures with ahp.Current only.
func TestReducerFixtures(t *testing.T) {
	upstream := jsonFiles(t, filepath.Join(upstreamDir, "fixtures", "reducers"))
	if len(upstream) < 26 { // ahp/upstream/README.md: 26 root and terminal fixtures
		t.Errorf("found %d upstream reducer fixtures, want at least 26", len(upstream))
	}
	ours := jsonFiles(t, filepath.Join("testdata", "reducers"))
	for _, group := range []struct {
		name  string
		files []string
	}{{"upstream", upstream}, {"testdata", ours}} {
		t.Run(group.name, func(t *testing.T) {
			for _, path := range group.files {
				t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
					f := loadReducerFixture(t, path)
					if f.Shape != "current" {
						t.Run("legacy", func(t *testing.T) {
							replayFixture(t, f.Reducer, ahp.Legacy, mustGeneric(t, f.Initial), genericList(t, f.Actions), mustGeneric(t, f.Expected))
						})
					}
					t.Run("current", func(t *testing.T) {
						initial, actions, expected := mustGeneric(t, f.Initial), genericList(t, f.Actions), mustGeneric(t, f.Expected)
						if f.Shape != "current" {
							initial, actions, expected = adaptFixture(f.Reducer, initial, actions, expected)
						}
						replayFixture(t, f.Reducer, ahp.Current, initial, actions, expected)
					})
				})
			}
		})
	}
}

func genericList(t *testing.T, raws []json.RawMessage) []any {
	t.Helper()
	out := make([]any, len(raws))
	for i, r := range raws {
		out[i] = mustGeneric(t, r)
	}
	return out
}

func replayFixture(t *testing.T, reducer string, shape ahp.Shape, initial any, actions []any, expected any) {
	t.Helper()
	switch reducer {
	case "root":
		replayChannel(t, shape, initial, actions, expected, ahp.ReduceRoot, normRoot)
	case "terminal":
		replayChannel(t, shape, initial, actions, expected, ahp.ReduceTerminal, func(v any) any { return v })
	default:
		t.Fatalf("unknown reducer %q", reducer)
	}
}

// replayChannel decodes initial, applies every action and compares the encoding
// of the result with expected (null members stripped on both sides, norm applied
// to both). It also checks that initial survives a decode/encode round trip and
// that no reduction changes its input state.
func replayChannel[S any](t *testing.T, shape ahp.Shape, initial any, actions []any, expected any, reduce func(S, ahp.Action) S, norm func(any) any) {
	t.Helper()
	var state S
	if err := json.Unmarshal([]byte(canon(initial)), &state); err != nil {
		t.Fatalf("decode initial %s: %v", canon(initial), err)
	}
	encode := func(s S) []byte {
		t.Helper()
		b, err := ahp.Marshal(s, shape)
		if err != nil {
			t.Fatalf("Marshal(%#v): %v", s, err)
		}
		return b
	}
	if got, want := norm(stripNulls(mustGeneric(t, encode(state)))), norm(stripNulls(initial)); !sameJSON(got, want) {
		t.Errorf("initial does not survive decode/encode:\n got  %s\n want %s", canon(got), canon(want))
	}
	for i, raw := range actions {
		var a ahp.Action
		if err := json.Unmarshal([]byte(canon(raw)), &a); err != nil {
			t.Fatalf("decode action %d %s: %v", i, canon(raw), err)
		}
		before := encode(state)
		next := reduce(state, a)
		if after := encode(state); !bytes.Equal(before, after) {
			t.Errorf("action %d %s modified its input state:\n before %s\n after  %s", i, canon(raw), before, after)
		}
		state = next
	}
	got := norm(stripNulls(mustGeneric(t, encode(state))))
	want := norm(stripNulls(expected))
	if !sameJSON(got, want) {
		t.Errorf("after %d actions:\n got  %s\n want %s", len(actions), canon(got), canon(want))
	}
}

// normRoot treats an absent RootState.terminals as []: ahp always emits the
// array (an explicit [] is clearer to clients), while upstream fixtures omit
// it when there are no terminals. Absent and empty mean the same to the reducer.
func normRoot(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if _, has := m["terminals"]; !has {
		m = cloneJSON(m).(map[string]any)
		m["terminals"] = []any{}
	}
	return m
}

// adaptFixture turns a legacy (≤ 0.8) fixture into the ≥ 0.9 shape, as
// ahp/upstream/README.md explains: terminal states and catalogue entries get a
// lifecycle (exitCode N → {"status":"exited","exitCode":N}, otherwise running)
// and session claims get a chat URI (chatFor). Inputs are not modified.
func adaptFixture(reducer string, initial any, actions []any, expected any) (any, []any, any) {
	adaptState := adaptTerminal
	if reducer == "root" {
		adaptState = adaptRoot
	}
	outActions := make([]any, len(actions))
	for i, a := range actions {
		outActions[i] = adaptAction(cloneJSON(a))
	}
	return adaptState(cloneJSON(initial)), outActions, adaptState(cloneJSON(expected))
}

// chatFor is the chat URI given to a legacy session claim when adapting it to
// the current shape. Reducers never interpret URIs; it only has to be consistent.
func chatFor(session string) string { return session + "/chat" }

func adaptClaim(v any) {
	c, ok := v.(map[string]any)
	if !ok || c["kind"] != "session" {
		return
	}
	if _, has := c["chat"]; !has {
		s, _ := c["session"].(string)
		c["chat"] = chatFor(s)
	}
}

// adaptTerminal adapts a TerminalState or a TerminalInfo in place.
func adaptTerminal(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if _, has := m["lifecycle"]; !has {
		if code, has := m["exitCode"]; has && code != nil {
			m["lifecycle"] = map[string]any{"status": "exited", "exitCode": code}
		} else {
			m["lifecycle"] = map[string]any{"status": "running"}
		}
	}
	delete(m, "exitCode")
	adaptClaim(m["claim"])
	return m
}

func adaptTerminals(v any) {
	list, _ := v.([]any)
	for _, e := range list {
		adaptTerminal(e)
	}
}

func adaptRoot(v any) any {
	if m, ok := v.(map[string]any); ok {
		adaptTerminals(m["terminals"])
	}
	return v
}

func adaptAction(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	switch m["type"] {
	case ahp.TerminalClaimed:
		adaptClaim(m["claim"])
	case ahp.RootTerminalsChanged:
		adaptTerminals(m["terminals"])
	}
	return m
}

// TestAdaptFixture pins the legacy → current adaptation used above, so that
// the browser replay can do exactly the same.
func TestAdaptFixture(t *testing.T) {
	tests := []struct {
		name, reducer             string
		initial, action, expected string
		wantInitial, wantAction   string
		wantExpected              string
	}{
		{
			name:         "terminal exitCode becomes lifecycle",
			reducer:      "terminal",
			initial:      `{"title":"t","content":[],"claim":{"kind":"client","clientId":"c"}}`,
			action:       `{"type":"terminal/exited","exitCode":3}`,
			expected:     `{"title":"t","content":[],"claim":{"kind":"client","clientId":"c"},"exitCode":3}`,
			wantInitial:  `{"title":"t","content":[],"claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"running"}}`,
			wantAction:   `{"type":"terminal/exited","exitCode":3}`,
			wantExpected: `{"title":"t","content":[],"claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"exited","exitCode":3}}`,
		},
		{
			name:         "session claims get chat",
			reducer:      "terminal",
			initial:      `{"title":"t","content":[],"claim":{"kind":"session","session":"s:/1"}}`,
			action:       `{"type":"terminal/claimed","claim":{"kind":"session","session":"s:/2","turnId":"t"}}`,
			expected:     `{"title":"t","content":[],"claim":{"kind":"session","session":"s:/2","turnId":"t"}}`,
			wantInitial:  `{"title":"t","content":[],"claim":{"kind":"session","session":"s:/1","chat":"s:/1/chat"},"lifecycle":{"status":"running"}}`,
			wantAction:   `{"type":"terminal/claimed","claim":{"kind":"session","session":"s:/2","chat":"s:/2/chat","turnId":"t"}}`,
			wantExpected: `{"title":"t","content":[],"claim":{"kind":"session","session":"s:/2","chat":"s:/2/chat","turnId":"t"},"lifecycle":{"status":"running"}}`,
		},
		{
			name:         "root catalogue entries",
			reducer:      "root",
			initial:      `{"agents":[]}`,
			action:       `{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"exitCode":0}]}`,
			expected:     `{"agents":[],"terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"exitCode":0}]}`,
			wantInitial:  `{"agents":[]}`,
			wantAction:   `{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"exited","exitCode":0}}]}`,
			wantExpected: `{"agents":[],"terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"exited","exitCode":0}}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			initial, action, expected := mustGeneric(t, []byte(tt.initial)), mustGeneric(t, []byte(tt.action)), mustGeneric(t, []byte(tt.expected))
			gi, ga, ge := adaptFixture(tt.reducer, initial, []any{action}, expected)
			for _, c := range []struct {
				what      string
				got, want any
			}{{"initial", gi, mustGeneric(t, []byte(tt.wantInitial))}, {"action", ga[0], mustGeneric(t, []byte(tt.wantAction))}, {"expected", ge, mustGeneric(t, []byte(tt.wantExpected))}} {
				if !sameJSON(c.got, c.want) {
					t.Errorf("adaptFixture %s:\n got  %s\n want %s", c.what, canon(c.got), canon(c.want))
				}
			}
			if canon(initial) != canon(mustGeneric(t, []byte(tt.initial))) {
				t.Errorf("adaptFixture modified its input: %s", canon(initial))
			}
		})
	}
}

// TestReduceTerminalGoOnly covers reducer behaviour that differs from the
// TypeScript reducers and so cannot live in the shared JSON cases.
func TestReduceTerminalGoOnly(t *testing.T) {
	// Duplicate command ids: the Go reducer (like upstream Go) completes only
	// the first match, TypeScript completes all.
	parts := []ahp.Part{
		{Type: ahp.PartCommand, CommandID: "dup", CommandLine: "a"},
		{Type: ahp.PartCommand, CommandID: "dup", CommandLine: "b"},
	}
	s := ahp.TerminalState{Title: "t", Content: parts, Claim: ahp.ClientClaim("c")}
	got := ahp.ReduceTerminal(s, ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: "dup", ExitCode: intp(1)})
	if !got.Content[0].IsComplete || got.Content[1].IsComplete {
		t.Errorf("ReduceTerminal(commandFinished dup): completion = [%v %v], want [true false]", got.Content[0].IsComplete, got.Content[1].IsComplete)
	}
	if parts[0].IsComplete || parts[0].ExitCode != nil {
		t.Errorf("ReduceTerminal(commandFinished) modified the input content: %+v", parts[0])
	}
}
