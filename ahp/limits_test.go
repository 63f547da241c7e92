package ahp

import (
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short", "abc", "abc"},
		{"at the bound", strings.Repeat("a", MaxLogString), strings.Repeat("a", MaxLogString)},
		{"over the bound", strings.Repeat("a", 100<<10), strings.Repeat("a", MaxLogString) + "…"},
		// "é" is two bytes: the cut falls inside the 64th one.
		{"rune boundary", "a" + strings.Repeat("é", 100), "a" + strings.Repeat("é", 63) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clip(tc.in); got != tc.want {
				t.Errorf("Clip(%.20q…) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParamLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	name := long(MaxTitle + 1)
	claim := ClientClaim("c")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"clientId", InitializeParams{Channel: RootURI, ProtocolVersions: []string{"1.0.0"}, ClientID: long(MaxClientID + 1)}.Validate(), "clientId is longer than 256 bytes"},
		{"initialize _meta", InitializeParams{Channel: RootURI, ProtocolVersions: []string{"1.0.0"}, ClientID: "c", Meta: []byte(`"` + long(MaxMeta) + `"`)}.Validate(), "_meta is larger than 16384 bytes"},
		{"createTerminal name", CreateTerminalParams{Channel: "ahp-terminal:/t", Claim: &claim, Name: &name}.Validate(), "name is longer than 1024 bytes"},
		{"createTerminal cwd", CreateTerminalParams{Channel: "ahp-terminal:/t", Claim: &claim, Cwd: long(MaxURI + 1)}.Validate(), "cwd is longer than 2048 bytes"},
		{"subscribe channel", SubscribeParams{Channel: long(MaxURI + 1)}.Validate(), "channel is longer than 2048 bytes"},
		{"claim toolCallId", Claim{Kind: ClaimSession, Session: "s", ToolCallID: long(MaxClaimField + 1)}.CheckLimits(), "claim toolCallId is longer than 256 bytes"},
		{"title", Action{Type: TerminalTitleChanged, Title: long(MaxTitle + 1)}.CheckLimits(), "title is longer than 1024 bytes"},
		{"title at the bound", Action{Type: TerminalTitleChanged, Title: long(MaxTitle)}.CheckLimits(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if tc.err != nil {
				got = tc.err.Error()
			}
			if got != tc.want {
				t.Errorf("error %q, want %q", got, tc.want)
			}
		})
	}
}
