package terminals

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/lockrank"
	"github.com/termhost/termhost/terminals/hub"
)

// presence counts live connections per clientId: the one count, used for
// claims (a claim whose client has gone can be taken over, and is handed on
// after Config.ClaimGrace) and by the server for how long it remembers a
// client. Its lock is a leaf: it may be taken under any other.
type presence struct {
	mu      lockrank.Mutex[lockrank.Leaf]
	count   map[string]int
	release map[string]*time.Timer // by clientId: hands its claims on once it stays gone
	away    map[string]bool        // clientIds whose claims are marked ext.MetaHolderAway
}

// MethodPresence is the notification that tells a terminal's subscribers
// who is on it, and the owner's request for every terminal's list
// (docs/protocol.md, "Presence and control"). The names and payloads of
// termhost's extensions are package ext's; these are aliases.
const MethodPresence = ext.MethodPresence

// PresenceList is a terminal's presence: the params of MethodPresence.
type PresenceList = ext.PresenceList

// Member kinds.
const (
	KindOwner  = ext.KindOwner
	KindCLI    = ext.KindCLI
	KindAgent  = ext.KindAgent
	KindDriver = ext.KindDriver
	KindViewer = ext.KindViewer
)

// Member is one client connected to a terminal, as everyone sees it: a
// label, never a token or a clientId. Its ID is PresenceID of the client.
type Member = ext.Member

// Present is a subscriber that shows in presence (a server connection).
// Subscribers without it (tests' fakes) are not listed.
type Present interface {
	PresenceMember() Member
}

// PresenceID is the opaque presence id of a clientId: stable across
// reconnects and restarts, and it tells nothing of the clientId.
func PresenceID(clientID string) string {
	sum := sha256.Sum256([]byte("termhost presence\x00" + clientID))
	return "p" + hex.EncodeToString(sum[:6])
}

// Connected counts a connection of clientID in.
func (m *Manager) Connected(clientID string) {
	m.presence.mu.Lock()
	m.presence.count[clientID]++
	if t := m.presence.release[clientID]; t != nil {
		t.Stop()
		delete(m.presence.release, clientID)
	}
	back := m.presence.away[clientID]
	delete(m.presence.away, clientID)
	m.presence.mu.Unlock()
	if back { // its claims have their holder again
		mine := ahp.ClientClaim(clientID)
		for _, a := range m.hub.Audiences() {
			if a.Claim == mine {
				m.hub.SetInfoMeta(a.URI, ext.MetaHolderAway, nil)
			}
		}
	}
}

// ConnectionLost undoes Connected for a connection that dropped and
// returns how many connections of clientID remain. When none is left, the
// claims the client holds are handed on after the grace period unless it
// comes back.
func (m *Manager) ConnectionLost(clientID string) int {
	return m.disconnected(clientID, m.cfg.ClaimGrace)
}

// ConnectionClosedByClient is ConnectionLost for a client that said
// goodbye (a normal close, as `termhost attach` sends on detach): with no
// connection left, its claims are handed on at once, so whoever stays gets the terminal's size back
// without waiting out the grace meant for dropped connections.
func (m *Manager) ConnectionClosedByClient(clientID string) int {
	return m.disconnected(clientID, 0)
}

func (m *Manager) disconnected(clientID string, grace time.Duration) int {
	m.presence.mu.Lock()
	defer m.presence.mu.Unlock()
	n := m.presence.count[clientID] - 1
	if n > 0 {
		m.presence.count[clientID] = n
		return n
	}
	delete(m.presence.count, clientID)
	m.graceLocked(clientID, grace)
	return 0
}

// graceLocked starts the grace period of clientID, gone: its claims are
// handed on when it ends unless the client comes back.
func (m *Manager) graceLocked(clientID string, grace time.Duration) {
	if m.presence.release == nil {
		m.presence.release = map[string]*time.Timer{}
	}
	if t := m.presence.release[clientID]; t != nil {
		t.Stop()
	}
	m.presence.release[clientID] = time.AfterFunc(grace, func() { m.releaseClaims(clientID) })
}

// graceClaims gives the holders of adopted terminals (a hand-over: nobody
// is connected yet) that were connected when their predecessor stopped
// serving (h.Held) the grace of a client that just left, so an upgrade's
// reconnect does not hand their control to whoever asks first. A holder
// that had already left gets none: its claim is nobody's, as it was.
func (m *Manager) graceClaims(h Handover) {
	held := map[string]bool{}
	for _, id := range h.Held {
		held[id] = true
	}
	audiences := m.hub.Audiences()
	m.presence.mu.Lock()
	defer m.presence.mu.Unlock()
	for _, a := range audiences {
		id := a.Claim.ClientID
		if a.Claim.Kind == ahp.ClaimClient && (held[id] || !h.HeldKnown) && m.presence.count[id] == 0 && m.presence.release[id] == nil {
			m.graceLocked(id, m.cfg.ClaimGrace)
		}
	}
}

// ConnectedClients are the clients with a live connection now, sorted:
// what Pause is told once they are closed for a hand-over.
func (m *Manager) ConnectedClients() []string {
	m.presence.mu.Lock()
	defer m.presence.mu.Unlock()
	ids := make([]string, 0, len(m.presence.count))
	for id := range m.presence.count {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// heldClaims are the holders of the terminals' client claims in st that are
// among connected, sorted.
func heldClaims(st hub.State, connected []string) []string {
	holders := map[string]bool{}
	for _, t := range st.Terminals {
		if c := t.State.Claim; c.Kind == ahp.ClaimClient && slices.Contains(connected, c.ClientID) {
			holders[c.ClientID] = true
		}
	}
	held := make([]string, 0, len(holders))
	for id := range holders {
		held = append(held, id)
	}
	slices.Sort(held)
	return held
}

// Present reports whether clientID counts as holding its claims: it has a
// connection, or it left less than Config.ClaimGrace ago (a network blip,
// an eviction, an upgrade's reconnect). A claim whose client is not
// present is nobody's: whoever may act and asks, types or resizes first
// gets it.
func (m *Manager) Present(clientID string) bool {
	m.presence.mu.Lock()
	defer m.presence.mu.Unlock()
	return m.presence.count[clientID] > 0 || m.presence.release[clientID] != nil
}

// Connections is the number of live connections of clientID.
func (m *Manager) Connections(clientID string) int {
	m.presence.mu.Lock()
	defer m.presence.mu.Unlock()
	return m.presence.count[clientID]
}

// stopReleases stops the pending claim releases (Close).
func (m *Manager) stopReleases() {
	m.presence.mu.Lock()
	defer m.presence.mu.Unlock()
	for id, t := range m.presence.release {
		t.Stop()
		delete(m.presence.release, id)
	}
}

// releaseClaims hands on every client claim of clientID, gone for the
// grace period: AHP has no unclaimed state, so the claim goes to a client
// still there that may act on the terminal (the owner's first, else a
// driver's). With nobody to take it, it stays, and anyone may take it.
func (m *Manager) releaseClaims(clientID string) {
	m.presence.mu.Lock()
	delete(m.presence.release, clientID)
	back := m.presence.count[clientID] > 0
	m.presence.mu.Unlock()
	m.mu.Lock()
	closed := m.closed || m.paused
	m.mu.Unlock()
	if back || closed {
		return
	}
	gone := ahp.ClientClaim(clientID)
	heir := m.cfg.Hooks.ClaimHeir
	for _, a := range m.hub.Audiences() {
		if a.Claim != gone {
			continue
		}
		if heir != nil && heir(a.URI, clientID) {
			m.log.Info("claim holder left: claim handed to who asked for it", "terminal", a.URI)
			continue
		}
		next, ok := m.successor(a.Subs)
		if !ok {
			m.log.Info("claim holder left; nobody present may take the claim", "terminal", a.URI)
			// Tell everyone who lists terminals that nobody has control
			// (the side bar of a page that does not show this terminal).
			m.presence.mu.Lock()
			if m.presence.away == nil {
				m.presence.away = map[string]bool{}
			}
			m.presence.away[clientID] = true
			m.presence.mu.Unlock()
			m.hub.SetInfoMeta(a.URI, ext.MetaHolderAway, true)
			continue
		}
		if m.SetClaim(a.URI, gone, ahp.ClientClaim(next)) {
			m.log.Info("claim holder left: claim handed on", "terminal", a.URI)
		}
	}
}

// successor picks who gets a claim whose holder left: a connected client
// that may act (not a viewer), the owner's before a driver's.
func (m *Manager) successor(subs []Subscriber) (string, bool) {
	rank := map[string]int{KindOwner: 0, KindCLI: 1, KindDriver: 2}
	best, bestRank := "", len(rank)
	for _, s := range subs {
		p, ok := s.(Present)
		if !ok || s.ViewOnly() || s.ClientID() == "" || m.Connections(s.ClientID()) == 0 {
			continue
		}
		r, ok := rank[p.PresenceMember().Kind]
		if ok && (r < bestRank || r == bestRank && s.ClientID() < best) {
			best, bestRank = s.ClientID(), r
		}
	}
	return best, best != ""
}

// driveRefusal is why a client may not type into or resize a terminal, or
// "": the claim holder drives; while a holder is present (Present) nobody
// else does, the owner included (it takes control first, which it always
// may); a terminal nobody holds is driven by whoever may act (takeFree
// gives it the claim); an agent session's terminal is driven by the owner.
func driveRefusal(a ahp.Action, holder ahp.Claim, isHolder, holderPresent, owner bool) string {
	switch {
	case isHolder:
		return ""
	case holder.Kind == ahp.ClaimClient && holderPresent && a.Type == ahp.TerminalResized:
		return "only the claim holder can resize the terminal"
	case holder.Kind == ahp.ClaimClient && holderPresent:
		return "only the claim holder can type into the terminal: ask for control first"
	case holder.Kind == ahp.ClaimClient || owner:
		return ""
	}
	return "an agent session holds this terminal: only the owner can take it"
}

// takeFree gives the claim of uri to clientID when nobody holds it (its
// client is not Present): the first to type or resize a terminal nobody
// controls gets control. It runs under the hub lock, before the action it
// came with is published.
func (m *Manager) takeFree(tx hub.Tx, uri string, s Subscriber, clientID string) bool {
	st, ok := tx.Terminal(uri)
	if !ok || s.ViewOnly() || clientID == "" || st.Claim.Kind != ahp.ClaimClient || st.Claim.ClientID == clientID || m.Present(st.Claim.ClientID) {
		return false
	}
	tx.Publish(uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim(clientID)}, nil)
	return true
}

// Claim is a terminal's claim.
func (m *Manager) Claim(uri string) (claim ahp.Claim, ok bool) {
	m.hub.Do(func(tx hub.Tx) {
		var st ahp.TerminalState
		st, ok = tx.Terminal(uri)
		claim = st.Claim
	})
	return claim, ok
}

// SetClaim moves a terminal's claim from `from` to `to` as the server (a
// terminal/claimed action without origin, so every client, foreign ones
// included, sees the usual claim change) if the claim is still `from`.
func (m *Manager) SetClaim(uri string, from, to ahp.Claim) bool {
	done := false
	m.hub.Do(func(tx hub.Tx) {
		if st, ok := tx.Terminal(uri); ok && st.Claim == from && !st.Lifecycle.Exited() {
			tx.Publish(uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: to}, nil)
			done = true
		}
	})
	return done
}

// Subscribers are the subscribers of a terminal channel.
func (m *Manager) Subscribers(uri string) []Subscriber {
	for _, a := range m.hub.Audiences() {
		if a.URI == uri {
			return a.Subs
		}
	}
	return nil
}

// presenceFrame is the hub's presence hook: the x-termhost/presence
// notification of a terminal (docs/protocol.md, "Presence and control"),
// sent to its subscribers only, or nil when nobody listed is on it.
func presenceFrame(uri string, claim ahp.Claim, subs []Subscriber) []byte {
	b, err := ahp.EncodeNotification(MethodPresence, presenceList(hub.Audience{URI: uri, Claim: claim, Subs: subs}), ahp.Current)
	if err != nil {
		panic("terminals: encode presence: " + err.Error()) // plain strings always encode
	}
	return b
}

// Presence is the presence list of every terminal s may see, catalogue
// order (the answer to MethodPresence).
func (m *Manager) Presence(s Subscriber) []PresenceList {
	out := []PresenceList{}
	for _, a := range m.hub.Audiences() {
		if scope := s.Scope(); scope != "" && scope != a.URI {
			continue
		}
		out = append(out, presenceList(a))
	}
	return out
}

// presenceList is a terminal's presence: every client on it by name, or,
// past ext.CrowdThreshold viewers, everyone but the viewers by name and
// the viewers counted. Counting costs a pass over the subscribers and no
// more: a join into a crowd costs the same whatever its size but for it.
func presenceList(a hub.Audience) PresenceList {
	var viewers map[string]struct{}
	for _, s := range a.Subs {
		if _, ok := s.(Present); ok && s.ViewOnly() && s.ClientID() != "" {
			if viewers == nil {
				viewers = map[string]struct{}{}
			}
			viewers[s.ClientID()] = struct{}{}
		}
	}
	crowd := len(viewers) > ext.CrowdThreshold
	list := members(a, crowd)
	if list == nil {
		list = []Member{}
	}
	pl := PresenceList{Channel: a.URI, Members: list}
	if crowd {
		pl.Viewers = len(viewers)
	}
	return pl
}

// members is a terminal's presence list: one entry per client (a client
// may have several connections), owners first, then by name; without the
// viewers when crowd.
func members(a hub.Audience, crowd bool) []Member {
	byID := map[string]Member{}
	for _, s := range a.Subs {
		p, ok := s.(Present)
		if !ok || s.ClientID() == "" || crowd && s.ViewOnly() {
			continue
		}
		mb := p.PresenceMember()
		mb.Control = a.Claim.Kind == ahp.ClaimClient && a.Claim.ClientID == s.ClientID() && !s.ViewOnly()
		if old, ok := byID[mb.ID]; ok {
			mb.Control = mb.Control || old.Control
		}
		byID[mb.ID] = mb
	}
	if len(byID) == 0 {
		return nil
	}
	order := map[string]int{KindOwner: 0, KindCLI: 1, KindDriver: 2, KindViewer: 3}
	list := make([]Member, 0, len(byID))
	for _, mb := range byID {
		list = append(list, mb)
	}
	slices.SortFunc(list, func(x, y Member) int {
		return cmp.Or(cmp.Compare(order[x.Kind], order[y.Kind]), cmp.Compare(x.Name, y.Name), cmp.Compare(x.ID, y.ID))
	})
	return list
}

// lastInputs is when each client last typed into a terminal (a claim
// holder that has not typed for a while is away: see LastInput).
type lastInputs struct {
	mu lockrank.Mutex[lockrank.Leaf]
	at map[string]time.Time
}

func (l *lastInputs) note(clientID string) {
	now := time.Now()
	l.mu.Lock()
	if l.at == nil {
		l.at = map[string]time.Time{}
	}
	l.at[clientID] = now
	l.mu.Unlock()
}

// LastInput is when clientID last typed into the terminal uri (zero: never).
func (m *Manager) LastInput(uri, clientID string) time.Time {
	t := m.live(uri)
	if t == nil {
		return time.Time{}
	}
	t.inputs.mu.Lock()
	defer t.inputs.mu.Unlock()
	return t.inputs.at[clientID]
}

// CoalesceInterval is the shortest time between two presence
// notifications of a terminal, and between two catalogues that carry only
// renames, claims or _meta: changes that come sooner wait for the next one,
// the latest state winning (see hub.CoalesceInterval).
const CoalesceInterval = hub.CoalesceInterval
