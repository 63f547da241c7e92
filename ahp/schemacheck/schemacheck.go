// Package schemacheck checks the frames a server sends against the official
// AHP JSON schemas of the connection's protocol version, for tests: the 0.8
// schemas (ahp/upstream/schema) on connections that negotiated ≤ 0.8,
// the 1.x terminal shapes (ahp/upstream/schema-1.x) on ≥ 0.9. Both
// are pinned copies inside the repository.
//
// The schemas are used as published with two in-memory changes:
//
//   - the broken {"$ref":"#/$defs/"} entry is dropped from
//     actions.schema.json $defs.StateAction.oneOf (ahp/upstream/README.md,
//     "Known defects"), without which no strict compiler accepts the file;
//   - the terminal types whose shape changed in 0.9.0 (closedDefs) and the
//     content parts (partDefs) are closed with "additionalProperties":
//     false; only catalogue entries and claims, which actions carry whole,
//     may have a "_meta", AHP's extension point (metaOpenDefs). The
//     published schemas leave every object open (and 0.8 makes exitCode
//     optional), so without this a 0.9+ "lifecycle" or claim "chat" leaking
//     onto a 0.8 connection, a 0.8 "exitCode" onto a 1.x one, or a key no
//     reducer puts in the state (a command part's "_meta"), would validate.
//
// On top of the schemas, Frame checks the JSON-RPC 2.0 envelope and error
// objects, which the schemas do not describe.
package schemacheck

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/upstream"
)

// Checker validates server → client frames of one protocol shape. It is safe
// for concurrent use.
type Checker struct {
	name          string                          // "0.8" or "1.x", for messages
	envelope      *jsonschema.Schema              // ActionEnvelope (actions.schema.json)
	actions       map[string]*jsonschema.Schema   // action type → its def, for short messages
	notifications map[string]*jsonschema.Schema   // notification method → params def
	results       map[string][]*jsonschema.Schema // request method → result defs (one must match)
	nullResults   map[string]bool                 // request methods whose result is null
	codes         map[int64]bool                  // JsonRpcErrorCode ∪ AhpErrorCode
	errorData     map[int64]errorData
}

type errorData struct {
	schema   *jsonschema.Schema
	required bool
}

// schemaSet is one pinned schema directory and the checker compiled from it.
type schemaSet struct {
	dir, name string
	once      sync.Once
	checker   *Checker
	err       error
}

var sets = map[ahp.Shape]*schemaSet{
	ahp.Legacy:  {dir: "schema", name: "0.8"},
	ahp.Current: {dir: "schema-1.x", name: "1.x"},
}

// New returns the Checker for frames of the given shape: ahp.Legacy (≤ 0.8
// connections) or ahp.Current (≥ 0.9). Each schema set is compiled once per
// process.
func New(shape ahp.Shape) (*Checker, error) {
	set, ok := sets[shape]
	if !ok {
		return nil, fmt.Errorf("schemacheck: no schemas for shape %d", shape)
	}
	set.once.Do(func() { set.checker, set.err = load(upstream.FS, set.dir, set.name, true) })
	return set.checker, set.err
}

// ForVersion returns the Checker for a connection that negotiated version.
func ForVersion(version string) (*Checker, error) { return New(ahp.ShapeFor(version)) }

// closedDefs are the terminal types whose wire shape changed in 0.9.0 (the
// lifecycle states exist in the 1.x schemas only).
var closedDefs = []string{"TerminalState", "TerminalInfo", "TerminalClientClaim", "TerminalSessionClaim",
	"TerminalRunningLifecycleState", "TerminalExitedLifecycleState"}

// metaOpenDefs are the closed types that may carry a _meta: the objects an
// action carries whole, which AHP's reducers keep as they are (a catalogue
// entry in root/terminalsChanged, a claim in terminal/claimed). The others
// (the terminal state, its lifecycle, its content parts) are built by the
// reducers from an action's listed fields: a _meta there would be state no
// client reducing the actions has.
var metaOpenDefs = map[string]bool{"TerminalInfo": true, "TerminalClientClaim": true, "TerminalSessionClaim": true}

// partDefs are the content parts, closed in both shapes (see metaOpenDefs).
var partDefs = []string{"TerminalCommandPart", "TerminalUnclassifiedPart"}

// notificationDefs maps server → client notification methods (other than
// action) to their params in notifications.schema.json.
var notificationDefs = map[string]string{
	"auth/required":              "AuthRequiredParams",
	"root/sessionAdded":          "SessionAddedParams",
	"root/sessionRemoved":        "SessionRemovedParams",
	"root/sessionSummaryChanged": "SessionSummaryChangedParams",
	"root/progress":              "ProgressParams",
	"otlp/exportLogs":            "OtlpExportLogsParams",
	"otlp/exportTraces":          "OtlpExportTracesParams",
	"otlp/exportMetrics":         "OtlpExportMetricsParams",
}

// errorDataDefs are the error codes with a data shape in errors.schema.json.
var errorDataDefs = map[int64]struct {
	def      string
	required bool
}{
	-32005: {"UnsupportedProtocolVersionErrorData", true},
	-32007: {"AuthRequiredErrorData", true},
	-32009: {"PermissionDeniedErrorData", false},
}

// notResultParams are *Params defs in commands.schema.json that are not
// request methods with a result: shared bases and client notifications.
var notResultParams = map[string]bool{"Base": true, "Paginated": true, "DispatchAction": true, "Unsubscribe": true}

// load reads and compiles the five schema files of dir in fsys.
func load(fsys fs.FS, dir, name string, closeTerminalShapes bool) (*Checker, error) {
	docs := map[string]map[string]any{}
	ids := map[string]string{}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	for _, file := range []string{"actions", "commands", "errors", "notifications", "state"} {
		loc := path.Join(dir, file+".schema.json")
		b, err := fs.ReadFile(fsys, loc)
		if err != nil {
			return nil, fmt.Errorf("schemacheck: %w", err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("schemacheck: %s: %w", loc, err)
		}
		doc, ok := v.(map[string]any)
		id, _ := doc["$id"].(string)
		defs, _ := doc["$defs"].(map[string]any)
		if !ok || id == "" || defs == nil {
			return nil, fmt.Errorf("schemacheck: %s has no $id or $defs", loc)
		}
		if file == "actions" {
			dropBrokenRef(defs)
		}
		if closeTerminalShapes {
			for _, d := range append(slices.Clone(closedDefs), partDefs...) {
				if def, ok := defs[d].(map[string]any); ok {
					def["additionalProperties"] = false
					if metaOpenDefs[d] {
						// _meta, AHP's extension point, stays open (termhost's catalogue extensions).
						def["patternProperties"] = map[string]any{"^_meta$": map[string]any{"type": "object"}}
					}
				}
			}
		}
		if err := compiler.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("schemacheck: add %s: %w", loc, err)
		}
		docs[file], ids[file] = defs, id
	}
	compile := func(file, def string) (*jsonschema.Schema, error) {
		s, err := compiler.Compile(ids[file] + "#/$defs/" + def)
		if err != nil {
			return nil, fmt.Errorf("schemacheck: compile %s %s: %w", file, def, err)
		}
		return s, nil
	}

	c := &Checker{
		name:          name,
		actions:       map[string]*jsonschema.Schema{},
		notifications: map[string]*jsonschema.Schema{},
		results:       map[string][]*jsonschema.Schema{},
		nullResults:   map[string]bool{},
		codes:         map[int64]bool{},
		errorData:     map[int64]errorData{},
	}
	var err error
	if c.envelope, err = compile("actions", "ActionEnvelope"); err != nil {
		return nil, err
	}
	for typ, def := range actionDefs(docs["actions"]) {
		if c.actions[typ], err = compile("actions", def); err != nil {
			return nil, err
		}
	}
	for method, def := range notificationDefs {
		if c.notifications[method], err = compile("notifications", def); err != nil {
			return nil, err
		}
	}
	for def := range docs["commands"] {
		base, ok := strings.CutSuffix(def, "Params")
		if !ok || notResultParams[base] {
			continue
		}
		method := strings.ToLower(base[:1]) + base[1:]
		if _, has := docs["commands"][base+"Result"]; has {
			s, err := compile("commands", base+"Result")
			if err != nil {
				return nil, err
			}
			c.results[method] = []*jsonschema.Schema{s}
		} else {
			c.nullResults[method] = true
		}
	}
	// reconnect answers with one of two result types, or the per-channel
	// result of a per-channel request.
	delete(c.nullResults, "reconnect")
	c.results["reconnect"] = nil
	for _, def := range []string{"ReconnectReplayResult", "ReconnectSnapshotResult"} {
		s, err := compile("commands", def)
		if err != nil {
			return nil, err
		}
		c.results["reconnect"] = append(c.results["reconnect"], s)
	}
	perChannel, err := compilePerChannel(compiler, ids["actions"], ids["commands"])
	if err != nil {
		return nil, err
	}
	c.results["reconnect"] = append(c.results["reconnect"], perChannel)
	if err := addExtensions(c, compiler); err != nil {
		return nil, err
	}
	for _, def := range []string{"JsonRpcErrorCode", "AhpErrorCode"} {
		d, _ := docs["errors"][def].(map[string]any)
		values, _ := d["enum"].([]any)
		if len(values) == 0 {
			return nil, fmt.Errorf("schemacheck: errors.schema.json %s has no enum", def)
		}
		for _, v := range values {
			if n, ok := integer(v); ok {
				c.codes[n] = true
			}
		}
	}
	for code, rule := range errorDataDefs {
		s, err := compile("errors", rule.def)
		if err != nil {
			return nil, err
		}
		c.errorData[code] = errorData{s, rule.required}
	}
	return c, nil
}

// dropBrokenRef removes {"$ref":"#/$defs/"} from $defs.StateAction.oneOf.
func dropBrokenRef(defs map[string]any) {
	sa, _ := defs["StateAction"].(map[string]any)
	list, _ := sa["oneOf"].([]any)
	kept := list[:0:0]
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && len(m) == 1 && m["$ref"] == "#/$defs/" {
			continue
		}
		kept = append(kept, e)
	}
	if sa != nil {
		sa["oneOf"] = kept
	}
}

// actionDefs maps each action type of StateAction.oneOf to its def name.
func actionDefs(defs map[string]any) map[string]string {
	out := map[string]string{}
	sa, _ := defs["StateAction"].(map[string]any)
	list, _ := sa["oneOf"].([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		ref, _ := m["$ref"].(string)
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			continue
		}
		def, _ := defs[name].(map[string]any)
		props, _ := def["properties"].(map[string]any)
		typ, _ := props["type"].(map[string]any)
		if s, ok := typ["const"].(string); ok {
			out[s] = name
		}
	}
	return out
}

// Frame validates one server → client frame. method is the request method when
// the frame is a response (the caller tracks id → method), "" for notifications.
// An error response may be checked with method "" (e.g. a parse error).
func (c *Checker) Frame(frame []byte, method string) error {
	if err := c.frame(frame, method); err != nil {
		return fmt.Errorf("schemacheck: %w\nframe: %s", err, excerpt(frame))
	}
	return nil
}

func (c *Checker) frame(frame []byte, method string) error {
	if !utf8.Valid(frame) {
		return errors.New("frame is not valid UTF-8")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(frame))
	if err != nil {
		return fmt.Errorf("frame is not one JSON value: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return errors.New("frame is not a JSON object")
	}
	for k := range obj {
		switch k {
		case "jsonrpc", "id", "method", "params", "result", "error":
		default:
			return fmt.Errorf("unexpected member %q", k)
		}
	}
	if obj["jsonrpc"] != "2.0" {
		return fmt.Errorf(`jsonrpc is %v, want "2.0"`, jsonText(obj["jsonrpc"]))
	}
	if _, ok := obj["method"]; ok {
		return c.notification(obj, method)
	}
	return c.response(obj, method)
}

func (c *Checker) notification(obj map[string]any, expected string) error {
	method, ok := obj["method"].(string)
	if !ok || method == "" {
		return fmt.Errorf("method is %s, want a non-empty string", jsonText(obj["method"]))
	}
	for _, k := range []string{"id", "result", "error"} {
		if _, has := obj[k]; has {
			return fmt.Errorf("notification %q has %q (a server sends no requests; notifications have no id)", method, k)
		}
	}
	if expected != "" {
		return fmt.Errorf("expected the response to a %q request, got a %q notification", expected, method)
	}
	params, ok := obj["params"].(map[string]any)
	if !ok {
		return fmt.Errorf("notification %q params is %s, want an object", method, jsonText(obj["params"]))
	}
	if method == "action" {
		return c.action(params)
	}
	s, ok := c.notifications[method]
	if !ok {
		return fmt.Errorf("notification %q is not defined by the %s schemas", method, c.name)
	}
	if err := s.Validate(params); err != nil {
		return fmt.Errorf("notification %q params: %w", method, err)
	}
	return nil
}

// action validates an ActionEnvelope. When the envelope fails, the action is
// checked against its own def so that the message is not the failure of all
// 86 StateAction branches.
func (c *Checker) action(params map[string]any) error {
	err := c.envelope.Validate(params)
	if err == nil {
		return nil
	}
	action, _ := params["action"].(map[string]any)
	typ, _ := action["type"].(string)
	if action != nil {
		s, known := c.actions[typ]
		if !known {
			return fmt.Errorf("action type %s is not defined by the %s schemas", jsonText(action["type"]), c.name)
		}
		if aerr := s.Validate(action); aerr != nil {
			return fmt.Errorf("action %q: %w", typ, aerr)
		}
	}
	return fmt.Errorf("action envelope: %w", err)
}

func (c *Checker) response(obj map[string]any, method string) error {
	id, hasID := obj["id"]
	if !hasID {
		return errors.New("response has no id")
	}
	switch id.(type) {
	case string, nil:
	default:
		if _, ok := integer(id); !ok {
			return fmt.Errorf("response id is %s, want an integer or a string", jsonText(id))
		}
	}
	result, hasResult := obj["result"]
	errObj, hasError := obj["error"]
	switch {
	case hasResult && hasError:
		return errors.New("response has both result and error")
	case hasError:
		return c.errorObject(errObj)
	case !hasResult:
		return errors.New("frame has neither method, result nor error (a success response needs \"result\", even null)")
	}
	if id == nil {
		return errors.New("success response has id null")
	}
	if method == "" {
		return errors.New("success response checked without its request method")
	}
	if c.nullResults[method] {
		if result != nil {
			return fmt.Errorf("%s result is %s, want null", method, excerpt([]byte(jsonText(result))))
		}
		return nil
	}
	schemas, ok := c.results[method]
	if !ok {
		return fmt.Errorf("no result type for method %q in the %s schemas", method, c.name)
	}
	var errs []error
	for _, s := range schemas {
		err := s.Validate(result)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("%s result: %w", method, errors.Join(errs...))
}

func (c *Checker) errorObject(v any) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("error is %s, want an object", jsonText(v))
	}
	for k := range obj {
		if k != "code" && k != "message" && k != "data" {
			return fmt.Errorf("error has unexpected member %q", k)
		}
	}
	code, ok := integer(obj["code"])
	if !ok {
		return fmt.Errorf("error code is %s, want an integer", jsonText(obj["code"]))
	}
	if !c.codes[code] {
		return fmt.Errorf("error code %d is not defined by the %s schemas (JsonRpcErrorCode, AhpErrorCode)", code, c.name)
	}
	if _, ok := obj["message"].(string); !ok {
		return fmt.Errorf("error message is %s, want a string", jsonText(obj["message"]))
	}
	data, hasData := obj["data"]
	rule, ok := c.errorData[code]
	switch {
	case !ok:
		return nil
	case !hasData:
		if rule.required {
			return fmt.Errorf("error %d needs data", code)
		}
		return nil
	}
	if err := rule.schema.Validate(data); err != nil {
		return fmt.Errorf("error %d data: %w", code, err)
	}
	return nil
}

// integer reports whether v (a json.Number from jsonschema.UnmarshalJSON) is a
// JSON integer that fits in int64.
func integer(v any) (int64, bool) {
	n, ok := v.(interface{ String() string })
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	return i, err == nil
}

func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("an object with %v", keys)
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	}
	return fmt.Sprint(v)
}

func excerpt(b []byte) string {
	const max = 400
	if len(b) <= max {
		return string(b)
	}
	return string(b[:max]) + "…"
}
