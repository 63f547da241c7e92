package ahp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// fixtureActions returns every action of the upstream and our reducer
// fixtures, and every round-trip fixture input, as seeds.
func fixtureSeeds(f *testing.F) (actions, messages [][]byte) {
	f.Helper()
	for _, dir := range []string{filepath.Join(upstreamDir, "fixtures", "reducers"), filepath.Join("testdata", "reducers")} {
		for _, path := range jsonFiles(f, dir) {
			b, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			var fx reducerFixture
			if err := json.Unmarshal(b, &fx); err != nil {
				f.Fatalf("%s: %v", path, err)
			}
			for _, a := range fx.Actions {
				actions = append(actions, a)
				messages = append(messages, []byte(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/1","clientSeq":1,"action":`+string(a)+`}}`))
			}
		}
	}
	for _, path := range jsonFiles(f, filepath.Join(upstreamDir, "fixtures", "round-trips")) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		var fx roundTripFixture
		if err := json.Unmarshal(b, &fx); err != nil {
			f.Fatalf("%s: %v", path, err)
		}
		switch fx.Type {
		case "JsonRpcMessage":
			messages = append(messages, fx.Input)
		case "StateAction":
			actions = append(actions, fx.Input)
		case "ActionEnvelope":
			var env struct{ Action json.RawMessage }
			if err := json.Unmarshal(fx.Input, &env); err == nil {
				actions = append(actions, env.Action)
			}
			messages = append(messages, []byte(`{"jsonrpc":"2.0","method":"action","params":`+string(fx.Input)+`}`))
		}
	}
	return actions, messages
}

func FuzzDecodeMessage(f *testing.F) {
	_, messages := fixtureSeeds(f)
	for _, m := range messages {
		f.Add(m)
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"channel":"ahp-root://","protocolVersions":["1.0.0"],"clientId":"c"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`[{"jsonrpc":"2.0","method":"x"}]`,
		`{"jsonrpc":"2.0","method":"x","params":[]}`,
		`{"jsonrpc":`, `"x"`, `1`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		m, err := ahp.DecodeMessage(frame)
		if err != nil {
			if !errors.Is(err, ahp.ErrParse) && !errors.Is(err, ahp.ErrInvalidRequest) {
				t.Fatalf("DecodeMessage(%q) error %v is neither ErrParse nor ErrInvalidRequest", frame, err)
			}
			if errors.Is(err, ahp.ErrParse) == json.Valid(frame) {
				t.Fatalf("DecodeMessage(%q) = %v, but json.Valid = %v", frame, err, json.Valid(frame))
			}
			return
		}
		if m.JSONRPC != "2.0" || m.Method == "" {
			t.Fatalf("DecodeMessage(%q) accepted jsonrpc %q method %q", frame, m.JSONRPC, m.Method)
		}
		if m.ID != nil && !bytes.ContainsAny(m.ID[:1], `"-0123456789`) {
			t.Fatalf("DecodeMessage(%q) accepted id %s", frame, m.ID)
		}
		if m.Params != nil && m.Params[0] != '{' && string(m.Params) != "null" {
			t.Fatalf("DecodeMessage(%q) accepted params %s", frame, m.Params)
		}
		// Re-encoding an accepted message gives an equivalent accepted message.
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal(DecodeMessage(%q)): %v", frame, err)
		}
		m2, err := ahp.DecodeMessage(b)
		if err != nil {
			t.Fatalf("DecodeMessage(Marshal(DecodeMessage(%q))) = %v; re-encoded %s", frame, err, b)
		}
		if m2.Method != m.Method || m2.IsNotification() != m.IsNotification() ||
			!sameRaw(m2.ID, m.ID) || !sameRaw(m2.Params, m.Params) {
			t.Fatalf("re-decoded message differs:\n first  %+v\n second %+v\n frame  %q", m, m2, frame)
		}
	})
}

// sameRaw compares two raw JSON values semantically (nil only equals nil).
func sameRaw(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ga, errA := generic(a)
	gb, errB := generic(b)
	return errA == nil && errB == nil && reflect.DeepEqual(ga, gb)
}

func FuzzActionRoundTrip(f *testing.F) {
	actions, _ := fixtureSeeds(f)
	for _, a := range actions {
		f.Add(a)
	}
	for _, s := range []string{
		`{"type":"terminal/claimed","claim":{"kind":"client","clientId":"c"}}`,
		`{"type":"terminal/claimed","claim":{"kind":"session","session":"s","chat":"c","turnId":"t","toolCallId":"x"}}`,
		`{"type":"root/terminalsChanged","terminals":[{"resource":"r","title":"t","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"exited"}}]}`,
		`{"type":"root/configChanged","config":{"a":[1, 2]},"replace":false}`,
		`{"type":"terminal/resized","cols":1,"rows":2}`,
		`{"type":"future/x","a":[ 1 ]}`,
		`{"type":"terminal/data"}`,
		`[]`, `null`, `{"type":null}`,
	} {
		f.Add([]byte(s))
	}
	cmdState := ahp.TerminalState{Title: "t", Claim: ahp.ClientClaim("c"), Content: []ahp.Part{
		{Type: ahp.PartUnclassified, Value: "$ "}, {Type: ahp.PartCommand, CommandID: "cmd-1", CommandLine: "ls"},
	}}
	rootState := ahp.RootState{Config: &ahp.RootConfig{Values: map[string]json.RawMessage{"a": json.RawMessage("1")}}}
	f.Fuzz(func(t *testing.T, in []byte) {
		var a ahp.Action
		if err := json.Unmarshal(in, &a); err != nil {
			if json.Valid(in) && !errors.Is(err, ahp.ErrInvalidAction) {
				t.Fatalf("Unmarshal(%q) error %v does not wrap ErrInvalidAction", in, err)
			}
			return
		}
		for _, shape := range []ahp.Shape{ahp.Current, ahp.Legacy} {
			b, err := ahp.Marshal(a, shape)
			if err != nil {
				t.Fatalf("Marshal(%+v, %s) from %q: %v", a, shapeName(shape), in, err)
			}
			var a2 ahp.Action
			if err := json.Unmarshal(b, &a2); err != nil {
				t.Fatalf("Unmarshal(Marshal(%q, %s) = %s): %v", in, shapeName(shape), b, err)
			}
			if shape == ahp.Current {
				// The current shape carries every field of the model; a
				// chat-less session claim gains its session as chat.
				if !reflect.DeepEqual(normAction(a2), withChat(normAction(a))) {
					t.Fatalf("current round trip of %q changed the action:\n first  %+v\n second %+v\n via    %s", in, a, a2, b)
				}
			} else if b2, err := ahp.Marshal(a2, shape); err != nil || !bytes.Equal(b2, b) {
				// The legacy shape drops chat and lifecycle details; it must be stable.
				t.Fatalf("legacy re-encoding of %q is not stable:\n first  %s\n second %s (%v)", in, b, b2, err)
			}
		}
		// Reducers take any decoded action without panicking or touching their input.
		before, _ := ahp.Marshal(cmdState, ahp.Current)
		ahp.ReduceTerminal(cmdState, a)
		if after, _ := ahp.Marshal(cmdState, ahp.Current); !bytes.Equal(before, after) {
			t.Fatalf("ReduceTerminal(%q) modified its input state", in)
		}
		beforeRoot, _ := ahp.Marshal(rootState, ahp.Current)
		ahp.ReduceRoot(rootState, a)
		if after, _ := ahp.Marshal(rootState, ahp.Current); !bytes.Equal(beforeRoot, after) {
			t.Fatalf("ReduceRoot(%q) modified its input state", in)
		}
	})
}

// withChat gives the session claims of a the chat the current shape presents
// for a chat-less one: the session URI.
func withChat(a ahp.Action) ahp.Action {
	fill := func(c ahp.Claim) ahp.Claim {
		if c.Kind == ahp.ClaimSession && c.Chat == "" {
			c.Chat = c.Session
		}
		return c
	}
	a.Claim = fill(a.Claim)
	if a.Terminals != nil {
		infos := make([]ahp.TerminalInfo, len(a.Terminals))
		for i, t := range a.Terminals {
			t.Claim = fill(t.Claim)
			infos[i] = t
		}
		a.Terminals = infos
	}
	return a
}

// normAction compacts the raw JSON an Action holds (re-encoding compacts it).
func normAction(a ahp.Action) ahp.Action {
	compact := func(r json.RawMessage) json.RawMessage {
		if r == nil {
			return nil
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, r); err != nil {
			return r
		}
		return buf.Bytes()
	}
	a.Raw = compact(a.Raw)
	if a.Agents != nil {
		agents := make([]json.RawMessage, len(a.Agents))
		for i, r := range a.Agents {
			agents[i] = compact(r)
		}
		a.Agents = agents
	}
	if a.Config != nil {
		cfg := make(map[string]json.RawMessage, len(a.Config))
		for k, r := range a.Config {
			cfg[k] = compact(r)
		}
		a.Config = cfg
	}
	return a
}
