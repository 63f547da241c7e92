package handlers

import (
	"encoding/json"
	"testing"

	"github.com/termhost/termhost/ahp/ext"
)

// TestControlFrameBytes: the control notice built by the envelope encoder
// is byte for byte the frame the server used to build by hand (json.Marshal
// of the whole message), labels with characters encoding/json escapes
// included.
func TestControlFrameBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    ext.ControlNotice
	}{
		{"pending", ext.ControlNotice{Terminal: "ahp-terminal:/1", RequestID: "r1", Status: ext.ControlPending, AutoGrantMs: 20000,
			From: ext.Member{ID: "p0123456789ab", Name: "alice", Kind: ext.KindDriver, Device: "Firefox on Linux"}}},
		{"granted by itself", ext.ControlNotice{Terminal: "ahp-terminal:/1", RequestID: "r1", Status: ext.ControlGranted, Auto: true,
			From: ext.Member{ID: "p0123456789ab", Name: "Owner", Kind: ext.KindOwner, Control: true}}},
		{"label to escape", ext.ControlNotice{Terminal: "ahp-terminal:/a&b", RequestID: "r<2>", Status: ext.ControlCancelled,
			From: ext.Member{ID: "p0123456789ab", Name: "<b>Tom & \"Jerry\"</b> \u2028 \\ é 😀", Kind: ext.KindViewer}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "x-termhost/controlRequest", "params": tc.n})
			if err != nil {
				t.Fatal(err)
			}
			if got := controlFrame(tc.n); string(got) != string(old) {
				t.Errorf("controlFrame(%+v) =\n%s\nwant\n%s", tc.n, got, old)
			}
		})
	}
}
