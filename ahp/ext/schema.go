package ext

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
)

//go:embed schema.json
var schema []byte

// SchemaID is the $id of schema.json.
const SchemaID = "https://termhost.invalid/ahp/ext/schema.json"

// Schema returns schema.json: the JSON schemas (draft 2020-12) of the
// extensions' payloads in its $defs, indexed by its "requests",
// "notifications" and "meta" members (see Spec). It is a copy.
func Schema() []byte { return slices.Clone(schema) }

// Spec is the index of schema.json: for each name, the $defs entry of its
// payload.
type Spec struct {
	// Requests maps each request method to its params and result defs.
	Requests map[string]RequestSpec `json:"requests"`
	// Notifications maps each notification method to its params def.
	Notifications map[string]string `json:"notifications"`
	// Meta maps each _meta key to where it appears and its value's def.
	Meta map[string]MetaSpec `json:"meta"`
}

// RequestSpec names the defs of a request's params and result; Result is
// "" for a request whose result is null.
type RequestSpec struct {
	Params string `json:"params"`
	Result string `json:"result"`
}

// MetaSpec says where a _meta key appears (e.g. "initialize result") and
// names the def of its value.
type MetaSpec struct {
	In    string `json:"in"`
	Value string `json:"value"`
}

// LoadSpec reads the index of schema.json.
func LoadSpec() (Spec, error) {
	var s Spec
	if err := json.Unmarshal(schema, &s); err != nil {
		return Spec{}, fmt.Errorf("ext: schema.json: %w", err)
	}
	return s, nil
}
