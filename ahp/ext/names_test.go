package ext_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp/ext"
)

// constants are the string constants of package ext whose names start with
// prefix, read from its source: name → value.
func constants(t *testing.T, prefix string) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	aliases := map[string]string{} // NotifyPresence = MethodPresence
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					switch v := vs.Values[i].(type) {
					case *ast.BasicLit:
						if s, err := strconv.Unquote(v.Value); err == nil {
							values[id.Name] = s
						}
					case *ast.Ident:
						aliases[id.Name] = v.Name
					}
				}
			}
		}
	}
	out := map[string]string{}
	for name, v := range values {
		if strings.HasPrefix(name, prefix) {
			out[name] = v
		}
	}
	for name, target := range aliases {
		if strings.HasPrefix(name, prefix) {
			if v, ok := values[target]; ok {
				out[name] = v
			}
		}
	}
	return out
}

// TestNamesMatchSchema: every request, notification and _meta key of
// schema.json has its constant in ext (Method…, Notify…, Meta…), and every
// such constant is in schema.json.
func TestNamesMatchSchema(t *testing.T) {
	spec, err := ext.LoadSpec()
	if err != nil {
		t.Fatalf("LoadSpec: %v", err)
	}
	for _, tc := range []struct {
		prefix, member string
		schema         []string
	}{
		{"Method", "requests", slices.Sorted(maps.Keys(spec.Requests))},
		{"Notify", "notifications", slices.Sorted(maps.Keys(spec.Notifications))},
		{"Meta", "meta", slices.Sorted(maps.Keys(spec.Meta))},
	} {
		t.Run(tc.member, func(t *testing.T) {
			consts := constants(t, tc.prefix)
			byValue := map[string]string{}
			for name, v := range consts {
				if other, dup := byValue[v]; dup {
					t.Errorf("%s and %s are both %q", other, name, v)
				}
				byValue[v] = name
			}
			for _, name := range tc.schema {
				if _, ok := byValue[name]; !ok {
					t.Errorf("schema.json %s has %q, which no ext.%s… constant names", tc.member, name, tc.prefix)
				}
			}
			for name, v := range consts {
				if !slices.Contains(tc.schema, v) {
					t.Errorf("ext.%s = %q is not in schema.json %s", name, v, tc.member)
				}
			}
			if len(tc.schema) == 0 {
				t.Errorf("schema.json %s is empty", tc.member)
			}
		})
	}
}

// TestSpecDefsExist: every def the index of schema.json names is in its
// $defs, and every def is used.
func TestSpecDefsExist(t *testing.T) {
	var doc struct {
		ID   string                     `json:"$id"`
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(ext.Schema(), &doc); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	if doc.ID != ext.SchemaID {
		t.Errorf("schema.json $id = %q, want ext.SchemaID %q", doc.ID, ext.SchemaID)
	}
	spec, err := ext.LoadSpec()
	if err != nil {
		t.Fatalf("LoadSpec: %v", err)
	}
	used := map[string]bool{}
	need := func(where, def string) {
		if _, ok := doc.Defs[def]; !ok {
			t.Errorf("%s names $defs/%s, which schema.json lacks", where, def)
		}
		used[def] = true
	}
	for m, r := range spec.Requests {
		need("requests "+m+" params", r.Params)
		if r.Result != "" {
			need("requests "+m+" result", r.Result)
		}
	}
	for m, def := range spec.Notifications {
		need("notifications "+m, def)
	}
	for k, meta := range spec.Meta {
		need("meta "+k, meta.Value)
		if meta.In == "" {
			t.Errorf("meta %s does not say where it appears", k)
		}
	}
	// Defs only referenced from other defs.
	for _, def := range []string{"ShareInfo", "Member", "Approval", "Who"} {
		used[def] = true
	}
	for def := range doc.Defs {
		if !used[def] {
			t.Errorf("$defs/%s is named by no request, notification or _meta key", def)
		}
	}
}
