package ahptest_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/upstream"
	"github.com/termhost/termhost/internal/ahptest"
)

// TestReduceOfficialFixtures: ReduceOfficial gives the states of the
// official reducer fixtures (in the ≤ 0.8 shape, as published) and of
// termhost's own cases, with a JSON null read as an absent key.
func TestReduceOfficialFixtures(t *testing.T) {
	type fixture struct {
		Reducer  string           `json:"reducer"`
		Shape    string           `json:"shape"`
		Initial  map[string]any   `json:"initial"`
		Actions  []map[string]any `json:"actions"`
		Expected map[string]any   `json:"expected"`
	}
	run := func(t *testing.T, b []byte) {
		var f fixture
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		legacy := f.Shape != "current" // the published fixtures are in the ≤ 0.8 shape
		channel := map[string]string{"root": ahp.RootURI, "terminal": "ahp-terminal:/fixture"}[f.Reducer]
		st := stripNulls(f.Initial).(map[string]any)
		for _, a := range f.Actions {
			st = ahptest.ReduceOfficial(channel, st, stripNulls(a).(map[string]any), legacy)
		}
		want := stripNulls(f.Expected).(map[string]any)
		if f.Reducer == "root" && st["terminals"] == nil && reflect.DeepEqual(want["terminals"], []any{}) {
			delete(want, "terminals") // ahp/testdata/reducers/README.md: root cases spell out "terminals"
		}
		if !reflect.DeepEqual(st, want) {
			got, _ := json.Marshal(st)
			exp, _ := json.Marshal(want)
			t.Errorf("got  %s\nwant %s", got, exp)
		}
	}
	files, err := fs.Glob(upstream.FS, "fixtures/reducers/*.json")
	if err != nil || len(files) < 26 {
		t.Fatalf("upstream fixtures: %d, %v", len(files), err)
	}
	for _, name := range files {
		b, err := fs.ReadFile(upstream.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("upstream/"+path.Base(name), func(t *testing.T) { run(t, b) })
	}
	ours, err := filepath.Glob(filepath.Join("..", "..", "ahp", "testdata", "reducers", "*.json"))
	if err != nil || len(ours) == 0 {
		t.Fatalf("termhost's reducer cases: %d, %v", len(ours), err)
	}
	for _, name := range ours {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("testdata/"+filepath.Base(name), func(t *testing.T) { run(t, b) })
	}
}

// stripNulls drops null members of objects, recursively (the fixtures'
// harnesses treat null and absent alike).
func stripNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e != nil {
				out[k] = stripNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripNulls(e)
		}
		return out
	}
	return v
}
