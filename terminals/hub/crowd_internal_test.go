package hub

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/termhost/termhost/ahp/ext"
)

// pacedSub is a fakeSub that can be paced: it notes the frames given
// without a wake-up and the Flushes that woke it.
type pacedSub struct {
	*fakeSub
	pmu     sync.Mutex
	paced   int // frames given by DeliverPaced
	waiting int // of those, given since the last Flush
	flushes int // Flushes that found frames waiting
}

func (s *pacedSub) DeliverPaced(f *Frame) bool {
	if !s.fakeSub.Deliver(f) {
		return false
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.paced++
	s.waiting++
	return true
}

func (s *pacedSub) Flush() {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.waiting > 0 {
		s.waiting = 0
		s.flushes++
	}
}

func (s *pacedSub) counts() (paced, waiting, flushes int) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	return s.paced, s.waiting, s.flushes
}

// ticking reports whether uri's crowd ticker runs.
func ticking(h *Hub, uri string) bool {
	h.mu.Lock()
	defer h.unlock()
	c := h.channels[uri].crowd
	return c != nil && c.stop != nil
}

// TestCrowdPacing: with ext.CrowdThreshold subscribers or more, a viewer's
// output waits for its turn, and every viewer is woken within a cycle,
// once, a slice at a time; the holder's output and an owner's never wait.
// The ticker runs only while output waits, and a crowd that shrinks below
// the threshold is woken at once. (Virtual time: synctest.)
func TestCrowdPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1)
		defer h.Close()
		holder := &pacedSub{fakeSub: newSub("me")}
		owner := &pacedSub{fakeSub: newSub("my-other-tab")}
		h.Initialize(holder, []string{term1})
		h.Initialize(owner, []string{term1})
		var crowd []*pacedSub
		for i := range ext.CrowdThreshold {
			v := &pacedSub{fakeSub: newSub(fmt.Sprintf("v%d", i))}
			v.viewOnly = true
			h.Initialize(v, []string{term1})
			crowd = append(crowd, v)
		}
		synctest.Wait()
		if ticking(h, term1) {
			t.Fatal("the crowd's ticker runs with no output waiting")
		}

		h.Publish(term1, data("x"))
		h.Publish(term1, data("y"))
		for name, s := range map[string]*pacedSub{"holder": holder, "owner": owner} {
			if p, _, _ := s.counts(); p != 0 || len(s.types()) != 2 {
				t.Fatalf("the %s was given %d frames paced, %v in all: want 2, at once", name, p, s.types())
			}
		}
		woken := func() (n int) {
			for _, v := range crowd {
				if p, w, f := v.counts(); p != 2 {
					t.Fatalf("a viewer was given %d frames paced, want 2", p)
				} else if w == 0 && f == 1 {
					n++
				}
			}
			return n
		}
		synctest.Wait()
		if n := woken(); n != 0 {
			t.Fatalf("%d viewers woken before the first tick", n)
		}
		// Half a cycle wakes about half of them, a whole one all, once.
		time.Sleep(DefaultCrowdCycle / 2)
		synctest.Wait()
		if n := woken(); n == 0 || n == len(crowd) {
			t.Fatalf("%d of %d viewers woken after half a cycle, want a part", n, len(crowd))
		}
		time.Sleep(DefaultCrowdCycle / 2)
		synctest.Wait()
		if n := woken(); n != len(crowd) {
			t.Fatalf("%d of %d viewers woken after a cycle", n, len(crowd))
		}
		// A cycle with nothing paced: the ticker ends.
		time.Sleep(2 * DefaultCrowdCycle)
		synctest.Wait()
		if ticking(h, term1) {
			t.Fatal("the ticker still runs two cycles after the last output")
		}

		// Below the threshold, what waited goes at once, and nothing waits.
		h.Publish(term1, data("z"))
		for _, v := range crowd[:3] { // 2 + 47 subscribers
			h.Leave(v)
		}
		for _, v := range crowd[3:] {
			if p, w, _ := v.counts(); p != 3 || w != 0 {
				t.Fatalf("after the crowd shrank a viewer has %d of %d frames waiting", w, p)
			}
		}
		h.Publish(term1, data("w"))
		for _, v := range crowd[3:] {
			if p, _, _ := v.counts(); p != 3 || len(v.types()) != 4 {
				t.Fatalf("below the threshold a viewer was given %d frames paced, %d in all; want 3 and 4", p, len(v.types()))
			}
		}
	})
}
