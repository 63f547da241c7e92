package ahptest_test

import (
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/testserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func wsURL(s *testserver.Server) string { return "ws" + strings.TrimPrefix(s.URL, "http") + "/ws" }

func owner() ahptest.Options {
	return ahptest.Options{Header: http.Header{"Authorization": {"Bearer " + testserver.OwnerToken}}}
}

// TestClientRecords drives a real server: calls, errors, dispatch, output,
// actions, frames; Cleanup then checks every frame against the schemas.
func TestClientRecords(t *testing.T) {
	for _, version := range []string{"0.8.0", "1.0.0"} {
		t.Run(version, func(t *testing.T) {
			s := testserver.New(t)
			c := ahptest.MustDial(t, wsURL(s), owner())
			if got := c.Initialize(version, "rec")["protocolVersion"]; got != version || c.Version() != version {
				t.Fatalf("Initialize(%s): protocolVersion %v, Version() %q", version, got, c.Version())
			}
			uri, snap := c.CreateTerminal("rec", "rec", nil)
			if snap.Resource != uri {
				t.Errorf("snapshot of %s is of %q", uri, snap.Resource)
			}
			seq := c.Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": "echo rec-$((1+1))\r"})
			echo := c.WaitAction("the input echo", func(e ahp.Envelope) bool {
				return e.Origin != nil && e.Origin.ClientSeq == seq
			})
			if echo.Action.Type != ahp.TerminalInput {
				t.Errorf("echo of clientSeq %d is %s", seq, echo.Action.Type)
			}
			c.WaitOutput(uri, "rec-2")
			if !strings.Contains(c.Output(uri), "rec-2") || c.LastSeq() == 0 || len(c.Envelopes()) == 0 {
				t.Errorf("output %q, last seq %d, %d envelopes", c.Output(uri), c.LastSeq(), len(c.Envelopes()))
			}
			if err := c.CallErr("subscribe", map[string]any{"channel": "ahp-terminal:/none"}, ahp.CodeNotFound); err == nil {
				t.Error("CallErr returned no error")
			}
			c.SendRaw(`{"jsonrpc":"2.0","id":"raw","method":"x-nothing","params":{"channel":"ahp-root://"}}`)
			if res, err := c.Response([]byte(`"raw"`)); err == nil || err.Code != ahp.CodeMethodNotFound {
				t.Errorf("raw x-nothing: %s, %v; want %d", res, err, ahp.CodeMethodNotFound)
			}
			c.SetNextID(100)
			c.MustCall("ping", map[string]any{"channel": ahp.RootURI})
			if !strings.Contains(c.RawFrames(), `"id":101`) || len(c.Frames()) < 4 {
				t.Errorf("frames lack the answer to id 101:\n%s", c.RawFrames())
			}
			_ = c.Conn().CloseNow()
			if err := c.WaitClosed(); err == nil {
				t.Error("WaitClosed = nil, want why the connection ended")
			}
		})
	}
}

// TestReconnectKeepsVersion: a reconnect answered on another connection
// takes the version its clientId negotiated, through the shared Versions.
func TestReconnectKeepsVersion(t *testing.T) {
	s := testserver.New(t)
	opts := owner()
	opts.Versions = &ahptest.Versions{}
	a := ahptest.MustDial(t, wsURL(s), opts)
	a.Initialize("0.8.0", "again")
	_ = a.Conn().CloseNow()
	b := ahptest.MustDial(t, wsURL(s), opts)
	b.MustCall(ahp.MethodReconnect, map[string]any{"channel": ahp.RootURI, "clientId": "again", "lastSeenServerSeq": 0, "subscriptions": []string{}})
	if got := b.Version(); got != "0.8.0" {
		t.Errorf("Version() after reconnect = %q, want 0.8.0", got)
	}
}

func TestDialRefused(t *testing.T) {
	s := testserver.New(t)
	c, resp, err := ahptest.Dial(t, wsURL(s), ahptest.Options{})
	if err == nil || c != nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Dial without a token = %v, %v; want a 401", resp, err)
	}
}

func TestDecodeEnvelope(t *testing.T) {
	tests := []struct {
		name, params string
		want         ahp.Envelope
		wantErr      bool
	}{
		{"rejection of an unknown action", `{"channel":"c","serverSeq":2,"rejectionReason":"no","action":{"type":"x/y","z":1}}`,
			ahp.Envelope{Channel: "c", ServerSeq: 2, RejectionReason: "no", Action: ahp.Action{Type: "x/y"}}, false},
		{"not an envelope", `[]`, ahp.Envelope{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ahptest.DecodeEnvelope([]byte(tt.params))
			if (err != nil) != tt.wantErr || got.Channel != tt.want.Channel || got.RejectionReason != tt.want.RejectionReason || got.Action.Type != tt.want.Action.Type {
				t.Errorf("DecodeEnvelope(%s) = %+v, %v; want %+v (error %v)", tt.params, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
