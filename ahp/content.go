package ahp

import (
	"encoding/json"
	"fmt"
)

// Content part types.
const (
	PartUnclassified = "unclassified"
	PartCommand      = "command"
)

// Part is one terminal content part: raw unclassified output, or a command with
// its line, output and result.
type Part struct {
	Type string
	// Value is the text of an unclassified part.
	Value string
	// Command fields.
	CommandID   string
	CommandLine string
	Output      string
	Timestamp   int64
	IsComplete  bool
	ExitCode    *int
	DurationMs  *int64
}

// Text returns the part's output text, whatever its type.
func (p Part) Text() string {
	if p.Type == PartCommand {
		return p.Output
	}
	return p.Value
}

type wireUnclassified struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type wireCommand struct {
	Type        string `json:"type"`
	CommandID   string `json:"commandId"`
	CommandLine string `json:"commandLine"`
	Output      string `json:"output"`
	Timestamp   int64  `json:"timestamp"`
	IsComplete  bool   `json:"isComplete"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	DurationMs  *int64 `json:"durationMs,omitempty"`
}

// MarshalJSON encodes the part by its type.
func (p Part) MarshalJSON() ([]byte, error) {
	if p.Type == PartCommand {
		return json.Marshal(wireCommand{p.Type, p.CommandID, p.CommandLine, p.Output, p.Timestamp, p.IsComplete, p.ExitCode, p.DurationMs})
	}
	return json.Marshal(wireUnclassified{p.Type, p.Value})
}

// UnmarshalJSON decodes either part type.
func (p *Part) UnmarshalJSON(b []byte) error {
	var w wireCommand
	var u wireUnclassified
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	switch w.Type {
	case PartCommand:
		*p = Part{Type: w.Type, CommandID: w.CommandID, CommandLine: w.CommandLine, Output: w.Output,
			Timestamp: w.Timestamp, IsComplete: w.IsComplete, ExitCode: w.ExitCode, DurationMs: w.DurationMs}
	case PartUnclassified:
		if err := json.Unmarshal(b, &u); err != nil {
			return err
		}
		*p = Part{Type: u.Type, Value: u.Value}
	default:
		return fmt.Errorf("unknown content part type %q", w.Type)
	}
	return nil
}
