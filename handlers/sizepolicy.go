package handlers

import (
	"encoding/json"

	"github.com/termhost/termhost/ahp/ext"
)

// initializeMeta is the initialize result's _meta: the connection's own
// presence id (ext.MetaPresenceID: one per client, or one per person
// signed in by SSO), so a client can find itself in a terminal's presence
// list ("You (this tab)"), and the size policy (ext.MetaSizePolicy:
// ext.SizeHolder or SizeSmallest): under "smallest" the browser reports its
// view's size even when it does not hold the claim.
func (s *Server) initializeMeta(presenceID string) json.RawMessage {
	return mustMarshal(map[string]string{ext.MetaPresenceID: presenceID, ext.MetaSizePolicy: s.m.SizePolicy()})
}
