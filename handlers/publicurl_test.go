package handlers_test

import (
	"testing"
)

// TestInitializeStatesPublicURL: a server with a public URL states it,
// without its trailing slash, in initialize's _meta ("termhost/publicUrl"),
// so a client that dialled it over loopback prints the links people open;
// a server without one states nothing (links keep the dialled URL).
func TestInitializeStatesPublicURL(t *testing.T) {
	for _, tc := range []struct{ public, want string }{
		{"https://dev.example/term/", "https://dev.example/term"},
		{"", ""},
	} {
		ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) { hc.PublicURL = tc.public })
		init := ts.dial(t).Initialize("1.0.0", "links")
		got, ok := init["_meta"].(map[string]any)["termhost/publicUrl"].(string)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("public URL %q: initialize _meta publicUrl = %q (present %v), want %q", tc.public, got, ok, tc.want)
		}
	}
}
