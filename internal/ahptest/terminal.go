package ahptest

import (
	"encoding/json"

	"github.com/termhost/termhost/ahp"
)

// Initialize performs the handshake at version, subscribed to subs (the
// root when none), and returns the result.
func (c *Client) Initialize(version, clientID string, subs ...string) map[string]any {
	c.t.Helper()
	return c.InitializeWith(version, clientID, nil, subs...)
}

// InitializeWith is Initialize with capabilities (none when nil).
func (c *Client) InitializeWith(version, clientID string, capabilities map[string]any, subs ...string) map[string]any {
	c.t.Helper()
	if subs == nil {
		subs = []string{ahp.RootURI}
	}
	params := map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{version},
		"clientId": clientID, "initialSubscriptions": subs, "clientInfo": map[string]any{"name": "test"}}
	if capabilities != nil {
		params["capabilities"] = capabilities
	}
	res := c.MustCall(ahp.MethodInitialize, params)
	var out map[string]any
	if err := json.Unmarshal(res, &out); err != nil {
		c.t.Fatalf("initialize result %s: %v", res, err)
	}
	return out
}

// CreateTerminal creates a terminal claimed by clientID, with extra params,
// and subscribes to it.
func (c *Client) CreateTerminal(id, clientID string, extra map[string]any) (string, ahp.Snapshot) {
	c.t.Helper()
	uri := ahp.TerminalURI(id)
	params := map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": clientID}}
	for k, v := range extra {
		params[k] = v
	}
	c.MustCall(ahp.MethodCreateTerminal, params)
	return uri, c.Subscribe(uri)
}

// Subscribe subscribes to uri and returns its snapshot.
func (c *Client) Subscribe(uri string) ahp.Snapshot {
	c.t.Helper()
	res := c.MustCall(ahp.MethodSubscribe, map[string]any{"channel": uri})
	var r struct {
		Snapshot ahp.Snapshot `json:"snapshot"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		c.t.Fatalf("subscribe result: %v", err)
	}
	return r.Snapshot
}
