package schemacheck

import (
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schemas of our own for results the pinned AHP schemas do not cover: the
// per-channel reconnect result (a proposal newer than the pins) and
// termhost's x-share/* extension commands.

// perChannelID names the schema of the per-channel reconnect result.
const perChannelID = "https://termhost.invalid/schemacheck/per-channel-reconnect.json"

// compilePerChannel compiles the per-channel reconnect result (spec digest
// §11.2, a 1.1.0-dev proposal the pinned schemas predate): exactly the
// members termhost sends, with its envelopes and snapshots checked against
// the set's ActionEnvelope and Snapshot.
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

// extensionsID names the schema of termhost's own extension commands.
const extensionsID = "https://termhost.invalid/schemacheck/extensions.json"

// extensions describes the results of termhost's x-share/* commands
// (docs/protocol.md, "termhost extensions"), which no AHP schema covers.
const extensions = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$defs": {
    "ShareInfo": {
      "type": "object", "required": ["id", "terminal", "role", "createdAt"], "additionalProperties": false,
      "properties": {
        "id": {"type": "string", "minLength": 1}, "terminal": {"type": "string", "minLength": 1},
        "role": {"enum": ["viewer", "driver"]}, "label": {"type": "string", "minLength": 1, "maxLength": 256},
        "createdAt": {"type": "integer"}, "expiresAt": {"type": "integer"},
        "url": {"type": "string", "minLength": 1}
      }
    },
    "Member": {
      "type": "object", "required": ["id", "name", "kind"], "additionalProperties": false,
      "properties": {
        "id": {"type": "string", "pattern": "^p[0-9a-f]{12}$"}, "name": {"type": "string", "minLength": 1},
        "kind": {"enum": ["owner", "cli", "agent", "driver", "viewer"]}, "device": {"type": "string", "minLength": 1},
        "control": {"const": true}, "person": {"const": true}
      }
    },
    "ControlResult": {
      "type": "object", "required": ["status"], "additionalProperties": false,
      "properties": {"status": {"enum": ["granted", "pending"]}, "requestId": {"type": "string", "minLength": 1}, "autoGrantMs": {"type": "integer", "minimum": 1}}
    },
    "ControlNotice": {
      "type": "object", "required": ["terminal", "requestId", "status", "from"], "additionalProperties": false,
      "properties": {
        "terminal": {"type": "string", "minLength": 1}, "requestId": {"type": "string", "minLength": 1},
        "status": {"enum": ["pending", "granted", "declined", "cancelled"]}, "from": {"$ref": "#/$defs/Member"},
        "autoGrantMs": {"type": "integer", "minimum": 1}, "auto": {"const": true}
      }
    },
    "PresenceList": {
      "type": "object", "required": ["channel", "members"], "additionalProperties": false,
      "properties": {"channel": {"type": "string", "minLength": 1}, "members": {"type": "array", "items": {"$ref": "#/$defs/Member"}}}
    },
    "PresenceResult": {
      "type": "object", "required": ["terminals"], "additionalProperties": false,
      "properties": {"terminals": {"type": "array", "items": {"$ref": "#/$defs/PresenceList"}}}
    },
    "ScreenResult": {
      "type": "object", "required": ["cols", "rows", "altScreen", "lines"], "additionalProperties": false,
      "properties": {"cols": {"type": "integer", "minimum": 1}, "rows": {"type": "integer", "minimum": 1},
        "altScreen": {"type": "boolean"}, "lines": {"type": "array", "items": {"type": "string"}}}
    },
    "ShareCreateResult": {"allOf": [{"$ref": "#/$defs/ShareInfo"}, {"required": ["url"]}]},
    "ShareListResult": {
      "type": "object", "required": ["shares"], "additionalProperties": false,
      "properties": {"shares": {"type": "array", "items": {"allOf": [{"$ref": "#/$defs/ShareInfo"}, {"not": {"required": ["url"]}}]}}}
    }
  }
}`

// addExtensions registers the results of termhost's extension commands.
func addExtensions(c *Checker, compiler *jsonschema.Compiler) error {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(extensions))
	if err != nil {
		return fmt.Errorf("schemacheck: extensions schema: %w", err)
	}
	if err := compiler.AddResource(extensionsID, doc); err != nil {
		return fmt.Errorf("schemacheck: add extensions schema: %w", err)
	}
	for method, def := range map[string]string{"x-share/create": "ShareCreateResult", "x-share/list": "ShareListResult",
		"x-termhost/screen": "ScreenResult", "x-termhost/presence": "PresenceResult"} {
		s, err := compiler.Compile(extensionsID + "#/$defs/" + def)
		if err != nil {
			return fmt.Errorf("schemacheck: compile extensions %s: %w", def, err)
		}
		c.results[method] = []*jsonschema.Schema{s}
	}
	c.nullResults["x-share/revoke"] = true
	if err := addControl(c, compiler); err != nil {
		return err
	}
	c.nullResults["x-termhost/record"] = true
	return nil
}

// addControl registers termhost's x-termhost/*Control extensions: the
// request's result and the notification to the holder and the requester.
func addControl(c *Checker, compiler *jsonschema.Compiler) error {
	result, err := compiler.Compile(extensionsID + "#/$defs/ControlResult")
	if err != nil {
		return fmt.Errorf("schemacheck: compile extensions ControlResult: %w", err)
	}
	c.results["x-termhost/requestControl"] = []*jsonschema.Schema{result}
	c.nullResults["x-termhost/answerControl"] = true
	notice, err := compiler.Compile(extensionsID + "#/$defs/ControlNotice")
	if err != nil {
		return fmt.Errorf("schemacheck: compile extensions ControlNotice: %w", err)
	}
	c.notifications["x-termhost/controlRequest"] = notice
	presence, err := compiler.Compile(extensionsID + "#/$defs/PresenceList")
	if err != nil {
		return fmt.Errorf("schemacheck: compile extensions PresenceList: %w", err)
	}
	c.notifications["x-termhost/presence"] = presence
	return nil
}
