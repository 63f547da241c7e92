package terminals

import "sync"

// presence counts live connections per clientId: the one count, used for
// claims (a claim whose client has gone can be taken over) and by the
// server for how long it remembers a client. Its lock is a leaf: it may be
// taken under any other.
type presence struct {
	mu    sync.Mutex
	count map[string]int
}

// Connected counts a connection of clientID in.
func (m *Manager) Connected(clientID string) {
	m.presence.mu.Lock()
	m.presence.count[clientID]++
	m.presence.mu.Unlock()
}

// Disconnected undoes Connected and returns how many connections of
// clientID remain.
func (m *Manager) Disconnected(clientID string) int {
	m.presence.mu.Lock()
	defer m.presence.mu.Unlock()
	n := m.presence.count[clientID] - 1
	if n <= 0 {
		delete(m.presence.count, clientID)
		return 0
	}
	m.presence.count[clientID] = n
	return n
}

// Connections is the number of live connections of clientID.
func (m *Manager) Connections(clientID string) int {
	m.presence.mu.Lock()
	defer m.presence.mu.Unlock()
	return m.presence.count[clientID]
}
