package ahp

import "encoding/json"

// ReduceRoot applies a to s and returns the new state. s is not modified.
func ReduceRoot(s RootState, a Action) RootState {
	switch a.Type {
	case RootAgentsChanged:
		s.Agents = a.Agents
	case RootActiveSessionsChanged:
		n := a.ActiveSessions
		s.ActiveSessions = &n
	case RootTerminalsChanged:
		s.Terminals = a.Terminals
	case RootConfigChanged:
		if s.Config == nil {
			return s
		}
		values := make(map[string]json.RawMessage, len(s.Config.Values)+len(a.Config))
		if a.Replace == nil || !*a.Replace {
			for k, v := range s.Config.Values {
				values[k] = v
			}
		}
		for k, v := range a.Config {
			values[k] = v
		}
		s.Config = &RootConfig{Schema: s.Config.Schema, Values: values}
	}
	return s
}

// ReduceTerminal applies a to s and returns the new state, as AHP's terminal
// reducer does. s is not
// modified: Content is copied before it changes.
func ReduceTerminal(s TerminalState, a Action) TerminalState {
	switch a.Type {
	case TerminalData:
		s.Content = appendData(s.Content, a.Data)
	case TerminalResized:
		s.Cols, s.Rows = a.Cols, a.Rows
	case TerminalClaimed:
		s.Claim = a.Claim
	case TerminalTitleChanged:
		s.Title = a.Title
	case TerminalCwdChanged:
		s.Cwd = a.Cwd
	case TerminalExited:
		s.Lifecycle = Lifecycle{Status: StatusExited, ExitCode: a.ExitCode}
	case TerminalCleared:
		s.Content = []Part{}
	case TerminalCommandDetectionAvailable:
		s.SupportsCommandDetection = boolPtr(true)
	case TerminalCommandExecuted:
		s.Content = append(clone(s.Content), Part{Type: PartCommand, CommandID: a.CommandID,
			CommandLine: a.CommandLine, Timestamp: a.Timestamp})
		s.SupportsCommandDetection = boolPtr(true)
	case TerminalCommandFinished:
		for i, p := range s.Content {
			if p.Type == PartCommand && p.CommandID == a.CommandID {
				s.Content = clone(s.Content)
				s.Content[i].IsComplete = true
				s.Content[i].ExitCode = a.ExitCode
				s.Content[i].DurationMs = a.DurationMs
				break
			}
		}
	}
	return s
}

func appendData(content []Part, data string) []Part {
	out := clone(content)
	if n := len(out); n > 0 {
		tail := &out[n-1]
		switch {
		case tail.Type == PartCommand && !tail.IsComplete:
			tail.Output += data
			return out
		case tail.Type == PartUnclassified:
			tail.Value += data
			return out
		}
	}
	return append(out, Part{Type: PartUnclassified, Value: data})
}

func clone(parts []Part) []Part {
	return append(make([]Part, 0, len(parts)+1), parts...)
}

func boolPtr(b bool) *bool { return &b }
