package handlers

import (
	"encoding/json"
)

// metaSizePolicy is the initialize result's _meta key naming the server's
// size policy (terminals.SizeHolder or SizeSmallest): under "smallest" the
// browser reports its view's size even when it does not hold the claim.
const metaSizePolicy = "termhost/sizePolicy"

// initializeMeta is the initialize result's _meta: the connection's own
// presence id and the size policy.
func (s *Server) initializeMeta(presenceID string) json.RawMessage {
	return mustMarshal(map[string]string{metaPresenceID: presenceID, metaSizePolicy: s.m.SizePolicy()})
}
