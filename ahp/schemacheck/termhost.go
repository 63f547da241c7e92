package schemacheck

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/termhost/termhost/ahp/ext"
)

// Schemas of our own for results the pinned AHP schemas do not cover: the
// per-channel reconnect result (a proposal newer than the pins) and
// termhost's extensions (their schemas are ahp/ext's).

// perChannelID names the schema of the per-channel reconnect result.
const perChannelID = "https://termhost.invalid/schemacheck/per-channel-reconnect.json"

// compilePerChannel compiles the per-channel reconnect result (an upstream
// 1.1.0 development proposal the pinned schemas predate, see
// docs/protocol.md#reconnect): exactly the members termhost sends, with its
// envelopes and snapshots checked against the set's ActionEnvelope and
// Snapshot.
func compilePerChannel(compiler *jsonschema.Compiler, actionsID, commandsID string) (*jsonschema.Schema, error) {
	entry := func(kind string, extra map[string]any) map[string]any {
		props := map[string]any{"kind": map[string]any{"const": kind}, "channel": map[string]any{"type": "string"}}
		required := []any{"kind", "channel"}
		for k, v := range extra {
			props[k] = v
			required = append(required, k)
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	doc := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
		"required": []any{"channels"}, "additionalProperties": false,
		"properties": map[string]any{"channels": map[string]any{"type": "array", "items": map[string]any{"oneOf": []any{
			entry("replay", map[string]any{"actions": map[string]any{"type": "array", "items": map[string]any{"$ref": actionsID + "#/$defs/ActionEnvelope"}}}),
			entry("snapshot", map[string]any{"snapshot": map[string]any{"$ref": commandsID + "#/$defs/Snapshot"}}),
			entry("missing", nil),
		}}}},
	}
	if err := compiler.AddResource(perChannelID, doc); err != nil {
		return nil, fmt.Errorf("schemacheck: add per-channel reconnect schema: %w", err)
	}
	s, err := compiler.Compile(perChannelID)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: compile per-channel reconnect schema: %w", err)
	}
	return s, nil
}

// addExtensions registers the results and notifications of termhost's
// extensions, whose schemas are ahp/ext's schema.json (no AHP schema
// covers them): each request's result def, or null, and each
// notification's params def, as its index names them.
func addExtensions(c *Checker, compiler *jsonschema.Compiler) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ext.Schema()))
	if err != nil {
		return fmt.Errorf("schemacheck: extensions schema: %w", err)
	}
	if err := compiler.AddResource(ext.SchemaID, doc); err != nil {
		return fmt.Errorf("schemacheck: add extensions schema: %w", err)
	}
	spec, err := ext.LoadSpec()
	if err != nil {
		return fmt.Errorf("schemacheck: %w", err)
	}
	compile := func(def string) (*jsonschema.Schema, error) {
		s, err := compiler.Compile(ext.SchemaID + "#/$defs/" + def)
		if err != nil {
			return nil, fmt.Errorf("schemacheck: compile extensions %s: %w", def, err)
		}
		return s, nil
	}
	for method, req := range spec.Requests {
		if req.Result == "" {
			c.nullResults[method] = true
			continue
		}
		s, err := compile(req.Result)
		if err != nil {
			return err
		}
		c.results[method] = []*jsonschema.Schema{s}
	}
	for method, def := range spec.Notifications {
		s, err := compile(def)
		if err != nil {
			return err
		}
		c.notifications[method] = s
	}
	return nil
}
