package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// testServer is the shared in-process server with the handles these tests
// use, and the versions its clients negotiated (for reconnects' schema
// checks).
type testServer struct {
	*testserver.Server
	m        *terminals.Manager
	srv      *handlers.Server
	versions *ahptest.Versions
}

// client is the shared recording AHP test client.
type client = ahptest.Client

type handlersConfig = handlers.Config

type terminalsConfig = terminals.Config

type serverOption = testserver.Option

// ownerToken is the test servers' owner secret; dial sends it unless the
// headers say otherwise ("Authorization", "" sends none).
const ownerToken = testserver.OwnerToken

// newServer starts bash --norc behind the real router; TERMHOST_TOKEN in the
// shells' environment lets tests check it does not leak.
func newServer(t *testing.T, opts ...serverOption) *testServer {
	t.Helper()
	s := testserver.New(t, append([]serverOption{testserver.Env("TERMHOST_TOKEN=secret")}, opts...)...)
	return &testServer{Server: s, m: s.Manager, srv: s.Handler, versions: &ahptest.Versions{}}
}

func (ts *testServer) dial(t *testing.T, headers ...string) *client {
	t.Helper()
	c, err := ts.tryDial(t, headers...)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return c
}

// tryDial dials /ws with the owner's token and headers given as name, value
// pairs (an empty value removes the header; X-Test-Query is the query).
func (ts *testServer) tryDial(t *testing.T, headers ...string) (*client, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+ownerToken)
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
		if headers[i+1] == "" {
			h.Del(headers[i])
		}
	}
	path := "/ws"
	if q := h.Get("X-Test-Query"); q != "" {
		path += "?" + q
		h.Del("X-Test-Query")
	}
	c, _, err := ahptest.Dial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+path, ahptest.Options{Header: h, Versions: ts.versions})
	return c, err
}

// decodeEnvelope decodes an envelope, failing the test on a bad one.
func decodeEnvelope(t *testing.T, params []byte) ahp.Envelope {
	t.Helper()
	e, err := ahptest.DecodeEnvelope(params)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// dialStatus tries a WebSocket upgrade with headers and says how it went:
// "ok", "401", "429", or the error.
func (ts *testServer) dialStatus(t *testing.T, headers ...string) string {
	t.Helper()
	c, err := ts.tryDial(t, headers...)
	if err != nil {
		for _, code := range []string{"401", "429"} {
			if strings.Contains(err.Error(), code) {
				return code
			}
		}
		return err.Error()
	}
	c.Conn().CloseNow()
	return "ok"
}
