package ahptest

import (
	"encoding/json"
	"fmt"

	"github.com/termhost/termhost/ahp"
)

// seqCheck holds the invariant every connection keeps: on each channel,
// serverSeq strictly increases, whether an action comes live or in a
// reconnect's replay, and nothing older than a snapshot the connection was
// given comes after it; and serverSeq being one counter for all channels,
// no two actions a connection gets share one. A client that dedupes by
// serverSeq would drop an action that breaks it, one that does not would
// apply it twice.
type seqCheck struct {
	last map[string]int64 // per channel: the newest serverSeq the connection knows it at
	seen map[int64]string // every action's serverSeq the connection got, and its channel
}

func (s *seqCheck) init() {
	if s.last == nil {
		s.last, s.seen = map[string]int64{}, map[int64]string{}
	}
}

// action checks one envelope, live or replayed; "" when it keeps the
// invariant, else what broke it.
func (s *seqCheck) action(e ahp.Envelope, how string) string {
	s.init()
	if other, dup := s.seen[e.ServerSeq]; dup && other != e.Channel {
		return fmt.Sprintf("%s %s serverSeq %d (%s) on the same connection as an action of %s at that serverSeq: serverSeq is one counter for every channel",
			how, e.Channel, e.ServerSeq, e.Action.Type, other)
	}
	s.seen[e.ServerSeq] = e.Channel
	prev, seen := s.last[e.Channel]
	s.last[e.Channel] = max(prev, e.ServerSeq)
	if seen && e.ServerSeq <= prev {
		return fmt.Sprintf("%s %s serverSeq %d (%s) after %d on the same connection: serverSeq must strictly increase per channel",
			how, e.Channel, e.ServerSeq, e.Action.Type, prev)
	}
	return ""
}

// snapshot checks a snapshot's fromSeq: not older than what the
// connection knows of the channel.
func (s *seqCheck) snapshot(channel string, fromSeq int64) string {
	s.init()
	prev, seen := s.last[channel]
	s.last[channel] = max(prev, fromSeq)
	if seen && fromSeq < prev {
		return fmt.Sprintf("snapshot of %s at fromSeq %d after serverSeq %d on the same connection", channel, fromSeq, prev)
	}
	return ""
}

// result checks the snapshots and replayed actions an answer carries
// (initialize, subscribe, reconnect in any of its forms), in the order a
// client applies them.
func (s *seqCheck) result(result json.RawMessage) []string {
	var r struct {
		Snapshot  *wireSnapshot     `json:"snapshot"`
		Snapshots []wireSnapshot    `json:"snapshots"`
		Actions   []json.RawMessage `json:"actions"`
		Channels  []struct {
			Channel  string            `json:"channel"`
			Actions  []json.RawMessage `json:"actions"`
			Snapshot *wireSnapshot     `json:"snapshot"`
		} `json:"channels"`
	}
	if len(result) == 0 || result[0] != '{' || json.Unmarshal(result, &r) != nil {
		return nil
	}
	var bad []string
	note := func(msg string) {
		if msg != "" {
			bad = append(bad, msg)
		}
	}
	replay := func(raws []json.RawMessage) {
		for _, raw := range raws {
			if e, err := DecodeEnvelope(raw); err == nil {
				note(s.action(e, "replayed"))
			}
		}
	}
	if r.Snapshot != nil {
		note(s.snapshot(r.Snapshot.Resource, r.Snapshot.FromSeq))
	}
	for _, sn := range r.Snapshots {
		note(s.snapshot(sn.Resource, sn.FromSeq))
	}
	replay(r.Actions)
	for _, ch := range r.Channels {
		if ch.Snapshot != nil {
			note(s.snapshot(ch.Snapshot.Resource, ch.Snapshot.FromSeq))
		}
		replay(ch.Actions)
	}
	return bad
}

// wireSnapshot is the part of a snapshot the check reads.
type wireSnapshot struct {
	Resource string `json:"resource"`
	FromSeq  int64  `json:"fromSeq"`
}
