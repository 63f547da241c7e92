//go:build e2e

package e2e

import (
	"net/http"
	"testing"

	"github.com/termhost/termhost/internal/ahptest"
)

// wsClient is the shared recording AHP test client, used here as a CLI
// would be: straight to the server or through nginx.
type wsClient = ahptest.Client

// dialWS opens url with the given Authorization header value ("" sends
// none). It returns the HTTP status of a refused upgrade.
func dialWS(t *testing.T, url, authorization string) (*wsClient, int, error) {
	t.Helper()
	h := http.Header{}
	if authorization != "" {
		h.Set("Authorization", authorization)
	}
	c, resp, err := ahptest.Dial(t, url, ahptest.Options{Header: h})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		return nil, status, err
	}
	return c, http.StatusSwitchingProtocols, nil
}

// initialize performs the handshake at 1.0.0 and checks the server agreed.
func initialize(t *testing.T, c *wsClient, clientID string) {
	t.Helper()
	if got := c.Initialize("1.0.0", clientID)["protocolVersion"]; got != "1.0.0" {
		t.Fatalf("initialize: protocolVersion %v, want 1.0.0", got)
	}
}
