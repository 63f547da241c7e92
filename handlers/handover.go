package handlers

import (
	"time"

	"github.com/termhost/termhost/ahp"
)

// ClientRecord is what a server remembers of a clientId for reconnect,
// handed to a successor process (an upgrade) so its clients resume with a
// reconnect instead of starting over.
type ClientRecord struct {
	ClientID  string    `json:"clientId"`
	Principal string    `json:"principal"`
	Version   string    `json:"version,omitempty"`
	Shape     ahp.Shape `json:"shape"`
	Binary    bool      `json:"binaryData,omitempty"` // ext.CapabilityBinaryData
	Expires   time.Time `json:"expires"`              // for a client with no live connection
}

// Clients returns the client records. Call it after Close: a client that
// was connected then gets the full retention from now.
func (s *Server) Clients() []ClientRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ClientRecord, 0, len(s.clients))
	for id, rec := range s.clients {
		out = append(out, ClientRecord{ClientID: id, Principal: rec.principal, Version: rec.version, Shape: rec.shape, Binary: rec.binary, Expires: rec.expires})
	}
	return out
}

// restoreClients loads a predecessor's client records (Config.Clients).
func (s *Server) restoreClients(list []ClientRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range list {
		s.clients[r.ClientID] = &clientRecord{principal: r.Principal, version: r.Version, shape: r.Shape, binary: r.Binary, expires: r.Expires}
	}
}
