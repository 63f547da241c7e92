package ahp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/termhost/termhost/ahp"
	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind (the package
// starts none; this keeps it that way).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// upstreamDir holds the pinned upstream AHP schemas and fixtures
// (ahp/upstream/README.md), at a fixed path from this package.
var upstreamDir = filepath.Join("upstream")

// jsonFiles lists the *.json files of dir, sorted; none is a failure.
func jsonFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		tb.Fatalf("glob %s: %v", dir, err)
	}
	if len(files) == 0 {
		tb.Fatalf("no *.json files in %s", dir)
	}
	return files
}

// generic decodes JSON into maps, slices and json.Number, rejecting trailing data.
func generic(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

func mustGeneric(tb testing.TB, b []byte) any {
	tb.Helper()
	v, err := generic(b)
	if err != nil {
		tb.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// stripNulls removes object members whose value is null, recursively (the
// upstream reducer harnesses treat null and absent alike).
func stripNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
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

// canon renders a generic value with sorted keys, for messages and comparisons.
func canon(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<unmarshalable %v: %v>", v, err)
	}
	return string(b)
}

// sameJSON reports whether two generic values are deeply equal.
func sameJSON(a, b any) bool { return reflect.DeepEqual(a, b) }

// clone deep-copies a generic value.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSON(e)
		}
		return out
	}
	return v
}

// findNulls returns the JSON paths of every null in v (array elements and
// object members alike).
func findNulls(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case nil:
		return []string{path}
	case map[string]any:
		for k, e := range x {
			out = append(out, findNulls(e, path+"."+k)...)
		}
	case []any:
		for i, e := range x {
			out = append(out, findNulls(e, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}

// shapeName names a shape in failure messages.
func shapeName(s ahp.Shape) string {
	switch s {
	case ahp.Legacy:
		return "legacy"
	case ahp.Current:
		return "current"
	}
	return fmt.Sprintf("Shape(%d)", int(s))
}

func intp(n int) *int     { return &n }
func i64p(n int64) *int64 { return &n }
func boolp(b bool) *bool  { return &b }
