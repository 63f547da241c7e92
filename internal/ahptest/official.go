package ahptest

import (
	"maps"
	"strings"

	"github.com/termhost/termhost/ahp"
)

// ReduceOfficial applies a to a channel's state as a client that knows
// nothing of termhost does: with AHP's own reducers only (the TypeScript
// SDK's rootReducer and terminalReducer, ahp/upstream's fixtures), on the JSON
// as received. Unlike ahp.ReduceRoot and ahp.ReduceTerminal, which decode
// into termhost's Go types first, it keeps what the official reducers keep
// and nothing else: an object an action carries whole (a claim, the
// catalogue) is kept whole, unknown keys included; any other key of an
// action (a _meta) is not. legacy selects the ≤ 0.8 terminal shape
// (terminal/exited sets exitCode, not lifecycle). Neither input is modified.
func ReduceOfficial(channel string, state, a map[string]any, legacy bool) map[string]any {
	switch {
	case channel == ahp.RootURI:
		return reduceRootOfficial(state, a)
	case strings.HasPrefix(channel, "ahp-terminal:"):
		return reduceTerminalOfficial(state, a, legacy)
	}
	return state
}

func reduceRootOfficial(s, a map[string]any) map[string]any {
	switch a["type"] {
	case ahp.RootAgentsChanged:
		return with(s, "agents", a["agents"])
	case ahp.RootActiveSessionsChanged:
		return with(s, "activeSessions", a["activeSessions"])
	case ahp.RootTerminalsChanged:
		return with(s, "terminals", a["terminals"])
	case ahp.RootConfigChanged:
		cfg, ok := s["config"].(map[string]any)
		if !ok {
			return s
		}
		values := map[string]any{}
		if r, _ := a["replace"].(bool); !r {
			old, _ := cfg["values"].(map[string]any)
			maps.Copy(values, old)
		}
		add, _ := a["config"].(map[string]any)
		maps.Copy(values, add)
		return with(s, "config", with(cfg, "values", values))
	}
	return s
}

func reduceTerminalOfficial(s, a map[string]any, legacy bool) map[string]any {
	content, _ := s["content"].([]any)
	switch a["type"] {
	case ahp.TerminalData:
		d, _ := a["data"].(string)
		return with(s, "content", appendOfficial(content, d))
	case ahp.TerminalResized:
		return with(with(s, "cols", a["cols"]), "rows", a["rows"])
	case ahp.TerminalClaimed:
		return with(s, "claim", a["claim"])
	case ahp.TerminalTitleChanged:
		return with(s, "title", a["title"])
	case ahp.TerminalCwdChanged:
		return with(s, "cwd", a["cwd"])
	case ahp.TerminalExited:
		code, has := a["exitCode"]
		has = has && code != nil
		if legacy {
			if !has {
				return without(s, "exitCode")
			}
			return with(s, "exitCode", code)
		}
		lc := map[string]any{"status": "exited"}
		if has {
			lc["exitCode"] = code
		}
		return with(s, "lifecycle", lc)
	case ahp.TerminalCleared:
		return with(s, "content", []any{})
	case ahp.TerminalCommandDetectionAvailable:
		return with(s, "supportsCommandDetection", true)
	case ahp.TerminalCommandExecuted:
		part := map[string]any{"type": ahp.PartCommand, "commandId": a["commandId"], "commandLine": a["commandLine"],
			"output": "", "timestamp": a["timestamp"], "isComplete": false}
		return with(with(s, "content", append(append([]any{}, content...), part)), "supportsCommandDetection", true)
	case ahp.TerminalCommandFinished:
		out := append([]any{}, content...)
		found := false
		for i, p := range out {
			m, _ := p.(map[string]any)
			if m["type"] != ahp.PartCommand || m["commandId"] != a["commandId"] {
				continue
			}
			found = true
			done := without(without(with(m, "isComplete", true), "exitCode"), "durationMs")
			for _, k := range []string{"exitCode", "durationMs"} {
				if v, ok := a[k]; ok && v != nil {
					done[k] = v
				}
			}
			out[i] = done
		}
		if !found {
			return s
		}
		return with(s, "content", out)
	}
	return s // terminal/input and unknown types
}

// appendOfficial is the official terminal/data: into an incomplete command's
// output, else the unclassified tail, else a new unclassified part.
func appendOfficial(content []any, d string) []any {
	out := append([]any{}, content...)
	if n := len(out); n > 0 {
		tail, _ := out[n-1].(map[string]any)
		switch {
		case tail["type"] == ahp.PartCommand && tail["isComplete"] != true:
			out[n-1] = with(tail, "output", tail["output"].(string)+d)
			return out
		case tail["type"] == ahp.PartUnclassified:
			out[n-1] = with(tail, "value", tail["value"].(string)+d)
			return out
		}
	}
	return append(out, map[string]any{"type": ahp.PartUnclassified, "value": d})
}

// with is {...m, k: v}; an absent (nil) v leaves k absent, as the JSON
// encoding of undefined does.
func with(m map[string]any, k string, v any) map[string]any {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func without(m map[string]any, k string) map[string]any {
	out := maps.Clone(m)
	delete(out, k)
	return out
}
