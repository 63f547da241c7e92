package handlers

import (
	"encoding/json"
	"strings"

	"github.com/termhost/termhost/ahp/ext"
)

// initializeMeta is the initialize result's _meta: the connection's own
// presence id (ext.MetaPresenceID: one per client, or one per person
// signed in by SSO), so a client can find itself in a terminal's presence
// list ("You (this tab)"), and the size policy (ext.MetaSizePolicy:
// ext.SizeHolder or SizeSmallest): under "smallest" the browser reports its
// view's size even when it does not hold the claim; and, with a
// Config.PublicURL, that URL (ext.MetaPublicURL), so that a client dialling
// over loopback or behind the proxy prints the links people can open; and
// the name of this host (ext.MetaHostName), which a client reaching several
// hosts keys its state by.
func (s *Server) initializeMeta(presenceID string) json.RawMessage {
	m := map[string]string{ext.MetaPresenceID: presenceID, ext.MetaSizePolicy: s.m.SizePolicy(), ext.MetaHostName: s.cfg.Hosts.Home()}
	if s.cfg.PublicURL != "" {
		m[ext.MetaPublicURL] = strings.TrimRight(s.cfg.PublicURL, "/")
	}
	return mustMarshal(m)
}
