package handlers

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
)

// Budgets bounds what one participant can make the server hold or do. A
// participant is who a credential names (auth.Principal.ID): the owner
// (every owner credential), one share link, one person signed in by SSO;
// and each agent connection (termhost mcp), though it signs in as the
// owner (separateAgent). Zero fields take the defaults
// (docs/protocol.md, "Budgets per participant").
type Budgets struct {
	// MaxOwnerConns bounds the owner's live connections (default 256); a
	// person signed in by SSO gets Config.MaxLinkConns, like a share link.
	// Past it a new connection is closed with 4029.
	MaxOwnerConns int
	// AnswerQueue is how many bytes of a connection's answers may wait
	// unsent before the server stops reading that connection: its next
	// request waits until they are sent (default 512 KiB).
	AnswerQueue int
	// ParticipantQueue bounds the unsent answers of all the connections of
	// one participant but the owner (default 16 MiB), OwnerQueue the
	// owner's (default 64 MiB), TotalQueue those of all participants but the
	// owner together (default 128 MiB). An answer past a bound closes its
	// connection with 4001 (reconnect to resume); past TotalQueue only
	// for a participant holding more than an equal share of it (fairShare).
	ParticipantQueue, OwnerQueue, TotalQueue int
	// RequestRate and RequestBurst pace the costly requests of a
	// participant (subscribe, unsubscribe, initialize, reconnect, previews,
	// presence): past the burst, its next one waits for a token (defaults
	// 10/s, burst 40; the owner and people with the owner role 100/s,
	// burst 400).
	RequestRate, OwnerRequestRate   rate.Limit
	RequestBurst, OwnerRequestBurst int
	// ParticipantDownloads is how many recording downloads one participant
	// but the owner may run at once (default 2; 429 past it); they never
	// take the last free slot, which stays the owner's.
	ParticipantDownloads int
	// DownloadStall cuts a download off when the client has not taken a
	// chunk of it (at most downloadChunk bytes) for this long (default 10 s).
	DownloadStall time.Duration
}

func (b *Budgets) setDefaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&b.MaxOwnerConns, 256)
	def(&b.AnswerQueue, 512<<10)
	def(&b.ParticipantQueue, 16<<20)
	def(&b.OwnerQueue, 64<<20)
	def(&b.TotalQueue, 128<<20)
	def(&b.RequestBurst, 40)
	def(&b.OwnerRequestBurst, 400)
	def(&b.ParticipantDownloads, 2)
	if b.RequestRate <= 0 {
		b.RequestRate = 10
	}
	if b.OwnerRequestRate <= 0 {
		b.OwnerRequestRate = 100
	}
	if b.DownloadStall <= 0 {
		b.DownloadStall = 10 * time.Second
	}
}

// participant is what the server counts for one principal while it has
// connections or downloads: they share one byte budget and one token bucket.
type participant struct {
	id      string
	owner   bool // the owner, or a person with the owner role: larger budgets
	limiter *rate.Limiter

	// Under Server.mu.
	conns, downloads int

	held atomic.Int64 // bytes of its connections' answers not yet sent
}

// costly reports whether a request or notification is paced: it makes the
// server build a snapshot, a preview or a presence list.
func costly(method string) bool {
	switch method {
	case ahp.MethodSubscribe, ahp.MethodUnsubscribe, ahp.MethodInitialize, ahp.MethodReconnect,
		ext.MethodScreen, ext.MethodPresence:
		return true
	}
	return false
}

// participantLocked returns the participant of principal who, made if
// needed; s.mu is held. Participants are dropped once they have neither
// connections nor downloads and their bucket is full again (a reconnect
// loop must not start over with a full bucket).
func (s *Server) participantLocked(who auth.Principal) *participant {
	id := who.ID()
	if p := s.participants[id]; p != nil {
		return p
	}
	if len(s.participants) >= 1024 {
		now := time.Now()
		for k, p := range s.participants {
			if p.conns == 0 && p.downloads == 0 && p.limiter.TokensAt(now) >= float64(p.limiter.Burst()) {
				delete(s.participants, k)
			}
		}
	}
	b := &s.cfg.Budgets
	p := &participant{id: id, owner: who.Role == auth.RoleOwner}
	if p.owner {
		p.limiter = rate.NewLimiter(b.OwnerRequestRate, b.OwnerRequestBurst)
	} else {
		p.limiter = rate.NewLimiter(b.RequestRate, b.RequestBurst)
	}
	s.participants[id] = p
	return p
}

// admit counts a connection of who in, or returns why it must close at
// once (4029): the owner has MaxOwnerConns connections, a person signed
// in by SSO MaxLinkConns. Share links are counted by trackShare.
func (s *Server) admit(c *conn, who auth.Principal) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.participantLocked(who)
	switch {
	case who.Share == nil && who.Person != "" && p.conns >= s.cfg.MaxLinkConns:
		return fmt.Sprintf("too many connections of this person (at most %d)", s.cfg.MaxLinkConns)
	case who.Share == nil && who.Person == "" && p.conns >= s.cfg.Budgets.MaxOwnerConns:
		return fmt.Sprintf("too many connections of the owner (at most %d)", s.cfg.Budgets.MaxOwnerConns)
	}
	p.conns++
	if p.conns == 1 && !p.owner {
		s.connected.Add(1)
	}
	c.part = p
	return ""
}

// separateAgent gives the connection of an agent (termhost mcp), which
// signs in with the owner's credential, a participant of its own with the
// budgets of a share link: on the owner's, an agent's loops would pace the
// owner's own tabs and could hold the owner's whole share of answers.
// Called when the connection names itself an agent (initialize or
// reconnect); what it already holds moves with it.
func (s *Server) separateAgent(c *conn, clientID string) {
	id := "agent:" + clientID
	s.mu.Lock()
	defer s.mu.Unlock()
	old := c.part
	if old == nil || old.id == id {
		return
	}
	p := s.participants[id]
	if p == nil {
		b := &s.cfg.Budgets
		p = &participant{id: id, limiter: rate.NewLimiter(b.RequestRate, b.RequestBurst)}
		s.participants[id] = p
	}
	c.mu.Lock()
	n := int64(c.answering)
	old.held.Add(-n)
	if !old.owner {
		s.heldTotal.Add(-n)
	}
	p.held.Add(n)
	s.heldTotal.Add(n)
	c.part = p
	c.mu.Unlock()
	if old.conns--; old.conns == 0 && !old.owner {
		s.connected.Add(-1)
	}
	if p.conns++; p.conns == 1 {
		s.connected.Add(1)
	}
}

// leave counts a connection admitted by admit out.
func (s *Server) leave(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.part.conns--
	if c.part.conns == 0 && !c.part.owner {
		s.connected.Add(-1)
	}
}

// queueBound is how many bytes of unsent answers p may have.
func (s *Server) queueBound(p *participant) int64 {
	if p.owner {
		return int64(s.cfg.Budgets.OwnerQueue)
	}
	return int64(s.cfg.Budgets.ParticipantQueue)
}

// holdAnswer counts n bytes of an answer of c in, or says why it cannot be
// held: over its participant's budget, or over the total of all
// participants but the owner.
func (c *conn) holdAnswer(n int) string {
	p := c.part
	if p == nil { // refused at accept: it is closing
		c.answering += n
		return ""
	}
	if p.held.Add(int64(n)) > c.s.queueBound(p) {
		p.held.Add(-int64(n))
		return fmt.Sprintf("too many unsent answers for this %s (over %d bytes): reconnect to resume", participantKind(c), c.s.queueBound(p))
	}
	if !p.owner && c.s.heldTotal.Add(int64(n)) > int64(c.s.cfg.Budgets.TotalQueue) && p.held.Load() > c.s.fairShare() {
		c.s.heldTotal.Add(-int64(n))
		p.held.Add(-int64(n))
		return "the server holds too many unsent answers: reconnect to resume"
	}
	c.answering += n
	return ""
}

// fairShare is what one participant but the owner may hold of TotalQueue
// when the total is over it: an equal share among those connected. Only a
// participant over its share is refused, so participants that do not read
// cannot fill the total and lock out the others; the total then stays
// under twice TotalQueue (what was held before it was reached, plus at
// most a share each).
func (s *Server) fairShare() int64 {
	return int64(s.cfg.Budgets.TotalQueue) / max(s.connected.Load(), 1)
}

// releaseAnswersLocked counts n bytes of c's unsent answers out (sent or
// dropped) and lets its reader go on when few are left; c.mu is held.
func (c *conn) releaseAnswersLocked(n int) {
	if n == 0 {
		return
	}
	c.answering -= n
	if p := c.part; p != nil {
		p.held.Add(-int64(n))
		if !p.owner {
			c.s.heldTotal.Add(-int64(n))
		}
	}
	c.signalAnsweredLocked()
}

// signalAnsweredLocked wakes a reader waiting in awaitAnswers.
func (c *conn) signalAnsweredLocked() {
	if c.answered != nil && (c.answering <= c.s.cfg.Budgets.AnswerQueue || c.closeCode != 0) {
		close(c.answered)
		c.answered = nil
	}
}

// awaitAnswers holds the reader while more than AnswerQueue bytes of this
// connection's answers are unsent: a client that does not read what it
// asked for is not read either (backpressure; nothing is refused).
func (c *conn) awaitAnswers() {
	for {
		c.mu.Lock()
		if c.answering <= c.s.cfg.Budgets.AnswerQueue || c.closeCode != 0 {
			c.mu.Unlock()
			return
		}
		if c.answered == nil {
			c.answered = make(chan struct{})
		}
		ch := c.answered
		c.mu.Unlock()
		c.s.paused.Add(1)
		select {
		case <-ch:
		case <-c.ctx.Done():
		}
		c.s.paused.Add(-1)
		if c.ctx.Err() != nil {
			return // the writer is gone; the next read fails
		}
	}
}

// awaitInput holds the reader while the input queue of the terminal uri
// has no room for n bytes of terminal/input that this connection
// dispatched: a paste goes on at the pace its program reads, and nothing
// more is read from this connection meanwhile (backpressure; other
// connections, the owner's other tabs included, go on). It returns false
// when the connection is closing (the input is dropped with it).
func (c *conn) awaitInput(uri string, n int) bool {
	c.s.metrics.pacedInput.Inc()
	c.inputPauses.Add(1)
	c.inputPaused.Add(1)
	c.s.pausedInput.Add(1)
	c.s.m.AwaitInput(c.ctx, uri, n)
	c.s.pausedInput.Add(-1)
	c.inputPaused.Add(-1)
	return c.ctx.Err() == nil
}

// pace waits for a token of the participant's bucket before a costly
// request; only this connection's reader waits. An error ends the
// connection (it is closing).
func (c *conn) pace(ctx context.Context, method string) error {
	if c.part == nil || !costly(method) {
		return nil
	}
	if c.part.limiter.Allow() {
		return nil
	}
	c.s.metrics.paced.Inc()
	return c.part.limiter.Wait(ctx)
}

// participantKind names a connection's participant in a close reason.
func participantKind(c *conn) string {
	switch {
	case c.shareID != "":
		return "share link"
	case c.person != "":
		return "person"
	}
	return "owner"
}
