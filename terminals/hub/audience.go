package hub

import "github.com/termhost/termhost/ahp"

// Audience is who watches a terminal channel: its claim and its subscribers.
type Audience struct {
	URI   string
	Claim ahp.Claim
	Subs  []Subscriber
}

// Audiences returns the audience of every terminal channel, catalogue
// order (presence: who is connected to which terminal, and who holds it).
func (h *Hub) Audiences() []Audience {
	h.mu.Lock()
	defer h.unlock()
	out := make([]Audience, 0, len(h.order))
	for _, uri := range h.order {
		ch := h.channels[uri]
		a := Audience{URI: uri, Claim: ch.term.Claim, Subs: make([]Subscriber, 0, len(ch.subs))}
		for s := range ch.subs {
			a.Subs = append(a.Subs, s)
		}
		out = append(out, a)
	}
	return out
}
