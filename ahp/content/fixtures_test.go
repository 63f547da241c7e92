package content

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// contentCase is one case of ahp/testdata/content/cases.json, which
// assets/ahp/content.test.ts replays against the browser's store too.
type contentCase struct {
	Description string            `json:"description"`
	Budget      int               `json:"budget"`
	Initial     []ahp.Part        `json:"initial"`
	Actions     []json.RawMessage `json:"actions"`
	Expected    json.RawMessage   `json:"expected"`
	Size        int               `json:"size"`
}

func TestSharedCases(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "ahp", "testdata", "content", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []contentCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cases {
		t.Run(c.Description, func(t *testing.T) {
			s := FromParts(c.Initial, c.Budget)
			for _, raw := range c.Actions {
				var a ahp.Action
				if err := json.Unmarshal(raw, &a); err != nil {
					t.Fatalf("action %s: %v", raw, err)
				}
				s.Apply(a)
			}
			got, want := jsonValue(t, mustJSON(t, nonNil(s.Snapshot()))), jsonValue(t, string(c.Expected))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parts\n %s\nwant\n %s", mustJSON(t, s.Snapshot()), c.Expected)
			}
			if s.Size() != c.Size {
				t.Errorf("Size() = %d, want %d", s.Size(), c.Size)
			}
		})
	}
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
