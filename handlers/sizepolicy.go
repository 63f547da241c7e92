package handlers

import (
	"encoding/json"

	"github.com/termhost/termhost/ahp/ext"

	"github.com/termhost/termhost/terminals"
)

// initializeMeta is the initialize result's _meta: the connection's own
// presence id (ext.MetaPresenceID), so a client can find itself in a
// terminal's presence list ("You (this tab)"), and the size policy
// (ext.MetaSizePolicy: ext.SizeHolder or SizeSmallest): under "smallest"
// the browser reports its view's size even when it does not hold the claim.
func (s *Server) initializeMeta(clientID string) json.RawMessage {
	return mustMarshal(map[string]string{ext.MetaPresenceID: terminals.PresenceID(clientID), ext.MetaSizePolicy: s.m.SizePolicy()})
}
