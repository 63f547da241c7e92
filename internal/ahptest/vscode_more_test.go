package ahptest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/testserver"
)

// TestVSCodeSession drives the VS Code look-alike through its whole life on
// a real server: startup (token in the query, configChanged rejected),
// a terminal at agenthost-terminal:/<uuid>, input, resize, a dropped socket
// and reconnect without `channel`, then dispose. Cleanup checks every frame
// of both connections against the schemas.
func TestVSCodeSession(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts ahptest.VSCodeOptions
	}{
		{"channel field", ahptest.VSCodeOptions{}},
		{"terminal field, 0.9.0", ahptest.VSCodeOptions{TerminalField: true, Versions: []string{"0.9.0"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := testserver.New(t)
			v := ahptest.NewVSCode(t, s.URL, s.Token, tt.opts)
			if !strings.HasPrefix(v.ClientID, "vscode-") {
				t.Errorf("ClientID = %q, want a vscode-… id", v.ClientID)
			}
			uri := v.CreateTerminal(90, 20)
			id := strings.TrimPrefix(uri, "agenthost-terminal:/")
			if parts := strings.Split(id, "-"); len(parts) != 5 || len(id) != 36 || id[14] != '4' {
				t.Errorf("terminal URI %q: want agenthost-terminal:/<version 4 uuid>", uri)
			}
			if info, ok := terminalInfo(s, uri); !ok || info.Claim.ClientID != v.ClientID {
				t.Fatalf("catalogue entry of %s = %+v (found %v), want claimed by %s", uri, info, ok, v.ClientID)
			}

			first := v.Conn()
			v.Input(uri, "echo vs-$((2+3))\r")
			first.WaitOutput(uri, "vs-5")
			v.Resize(uri, 100, 30)
			if got := first.NextFrame("anything after the resize echo", func(*ahp.Message) bool { return true }); got == nil {
				t.Fatal("NextFrame returned nil")
			}

			_ = first.Conn().CloseNow()
			res := v.Reconnect()
			if v.Conn() == first {
				t.Fatal("Reconnect kept the closed connection")
			}
			var r map[string]json.RawMessage
			if err := json.Unmarshal(res, &r); err != nil || len(r) == 0 {
				t.Errorf("reconnect result %s: %v, want an object", res, err)
			}
			if got := v.Conn().Version(); got != first.Version() || got == "" {
				t.Errorf("version after reconnect = %q, before %q", got, first.Version())
			}
			// The terminal's subscription survived: new output reaches the new connection.
			v.Input(uri, "echo again-$((3+4))\r")
			v.Conn().WaitOutput(uri, "again-7")

			v.Dispose(uri)
			if _, ok := terminalInfo(s, uri); ok {
				t.Errorf("%s is still in the catalogue after Dispose", uri)
			}
		})
	}
}

func terminalInfo(s *testserver.Server, uri string) (ahp.TerminalInfo, bool) {
	for _, in := range s.Manager.Terminals() {
		if in.Resource == uri {
			return in, true
		}
	}
	return ahp.TerminalInfo{}, false
}
