package hub

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/ahp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeSub is a Subscriber that records what it is given. Its backlog is
// set by the test; setBacklog closes Drained's channel as a writer would.
type fakeSub struct {
	shape    ahp.Shape
	scope    string
	clientID string
	viewOnly bool
	full     bool // Deliver refuses (queue over its bound)

	mu      sync.Mutex
	frames  []*Frame
	holds   int
	backlog int
	drained chan struct{}
}

func newSub(clientID string) *fakeSub { return &fakeSub{clientID: clientID} }

func (s *fakeSub) Shape() ahp.Shape { return s.shape }
func (s *fakeSub) Scope() string    { return s.scope }
func (s *fakeSub) ClientID() string { return s.clientID }
func (s *fakeSub) ViewOnly() bool   { return s.viewOnly }
func (s *fakeSub) Hold()            { s.mu.Lock(); s.holds++; s.mu.Unlock() }
func (s *fakeSub) Deliver(f *Frame) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full {
		return false
	}
	s.frames = append(s.frames, f)
	return true
}
func (s *fakeSub) Backlog() int { s.mu.Lock(); defer s.mu.Unlock(); return s.backlog }
func (s *fakeSub) Drained() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	ch := s.drained
	if s.backlog < LowWater {
		close(s.drained)
		s.drained = nil
	}
	return ch
}

func (s *fakeSub) setBacklog(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backlog = n
	if n < LowWater && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}

// envelopes returns what s received, in order.
func (s *fakeSub) envelopes() []ahp.Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ahp.Envelope, len(s.frames))
	for i, f := range s.frames {
		out[i] = f.Envelope()
	}
	return out
}

func (s *fakeSub) types() []string {
	var out []string
	for _, e := range s.envelopes() {
		out = append(out, e.Action.Type)
	}
	return out
}

const term1, term2 = "ahp-terminal:/one", "ahp-terminal:/two"

// newHub returns a hub with the given terminals, claimed by client "me".
func newHub(t *testing.T, replay int, uris ...string) *Hub {
	t.Helper()
	h := counting(New(replay))
	for _, uri := range uris {
		st := ahp.TerminalState{Title: uri, Cols: 80, Rows: 24, Lifecycle: ahp.Running(), Claim: ahp.ClientClaim("me")}
		if err := h.AddTerminal(uri, st, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// counting makes h's serverSeq a plain counter (a clock stopped at 0), so
// tests can name the values.
func counting(h *Hub) *Hub {
	h.SetClock(func() int64 { return 0 })
	return h
}

// tickPast lets CoalesceInterval pass in a synctest bubble and the hub's
// tick send what waited.
func tickPast() {
	time.Sleep(CoalesceInterval)
	synctest.Wait()
}

func data(s string) ahp.Action { return ahp.Action{Type: ahp.TerminalData, Data: s} }
