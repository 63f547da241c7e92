package audit

import (
	"slices"
	"sync"
	"time"
)

// Typing. A person types a key at a time, and each key arrives as input of
// its own: a line per key would make a trail of "1 bytes" lines (two short
// commands, dozens of them). Input (Log.Input) is summed per participant
// (as in the budget) and terminal instead, and written as one input line
// with the bytes summed and the time of the first: when the person ends a
// line (Enter), when InputWindow has passed since the first of them, before
// any other event of the participant, and at Sync and Close. The lines then
// pass through the budget like any input line.
const InputWindow = 2 * time.Second

// maxTyping bounds the participant-and-terminal pairs with input waiting;
// past it, input is written as it comes (one line each, under the budget).
const maxTyping = 4096

type typingKey struct{ participant, terminal string }

// typing holds the input not yet written.
type typing struct {
	window time.Duration

	mu      sync.Mutex
	closed  bool
	pending map[typingKey]*typed
	timers  sync.WaitGroup // the window-end callbacks scheduled and not stopped
}

// typed is one participant's input into one terminal, not yet written.
type typed struct {
	e     Event // Bytes summed, Time the first's
	timer *time.Timer
}

func participantOf(e Event) string {
	if e.Who != "" {
		return e.Who
	}
	return "remote:" + e.Remote
}

// add counts e into its participant's input to e.Terminal. It returns the
// events to write now: the summed input when the line ended (enter) or e
// itself when it cannot wait (the log is closing, or too many wait).
func (ty *typing) add(e Event, enter bool, write func([]Event)) []Event {
	k := typingKey{participantOf(e), e.Terminal}
	ty.mu.Lock()
	defer ty.mu.Unlock()
	p := ty.pending[k]
	if p == nil {
		if ty.closed || len(ty.pending) >= maxTyping {
			return []Event{e}
		}
		if enter {
			return []Event{e}
		}
		if ty.pending == nil {
			ty.pending = map[typingKey]*typed{}
		}
		p = &typed{e: e}
		ty.pending[k] = p
		ty.timers.Add(1)
		p.timer = time.AfterFunc(ty.window, func() {
			defer ty.timers.Done()
			if out := ty.take(k, p); len(out) > 0 {
				write(out)
			}
		})
		return nil
	}
	p.e.Bytes += e.Bytes
	if p.e.Remote != e.Remote {
		p.e.Remote = ""
	}
	if !enter {
		return nil
	}
	ty.removeLocked(k, p)
	return []Event{p.e}
}

// removeLocked forgets p, stopping its timer.
func (ty *typing) removeLocked(k typingKey, p *typed) {
	delete(ty.pending, k)
	if p.timer.Stop() {
		ty.timers.Done()
	}
}

// take is p's window end: its input, unless it was written already.
func (ty *typing) take(k typingKey, p *typed) []Event {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	if ty.pending[k] != p {
		return nil
	}
	delete(ty.pending, k)
	return []Event{p.e}
}

// takeParticipant is the input waiting of e's participant (in any
// terminal): it goes before e. A nil map costs one lookup per event.
func (ty *typing) takeParticipant(e Event) []Event {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	if len(ty.pending) == 0 {
		return nil
	}
	who := participantOf(e)
	var out []Event
	for k, p := range ty.pending {
		if k.participant == who {
			ty.removeLocked(k, p)
			out = append(out, p.e)
		}
	}
	sortByTime(out)
	return out
}

// takeAll is all the input waiting; with closing set, later input is
// written as it comes. It waits for the window-end callbacks under way.
func (ty *typing) takeAll(closing bool) []Event {
	ty.mu.Lock()
	if closing {
		ty.closed = true
	}
	var out []Event
	for k, p := range ty.pending {
		ty.removeLocked(k, p)
		out = append(out, p.e)
	}
	ty.mu.Unlock()
	if closing {
		ty.timers.Wait()
	}
	sortByTime(out)
	return out
}

func sortByTime(events []Event) {
	slices.SortStableFunc(events, func(a, b Event) int { return a.Time.Compare(b.Time) })
}
