package audit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/poll"
)

// TestAuditBudget: thousands of connections of one share link add a
// bounded number of bytes; the summary counts them exactly; another
// participant's events and events outside the budget stay one a line.
func TestAuditBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	for i := range n {
		l.Record(Event{Event: Connect, Who: "share:flood", Name: "Flood", Role: "viewer", Remote: "10.0.0.9", Terminal: "terminal:/t1", Share: "flood"})
		l.Record(Event{Event: Disconnect, Who: "share:flood", Name: "Flood", Role: "viewer", Remote: "10.0.0.9", Terminal: "terminal:/t1", Share: "flood"})
		if i%1000 == 0 {
			l.Record(Event{Event: Connect, Who: "bob@corp.com", Terminal: "terminal:/t1"})
			l.Record(Event{Event: ShareCreated, Who: "owner", Share: "s" + string(rune('a'+i/1000))})
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// PerWindow lines, two summaries and bob's and the owner's ten lines.
	if st.Size() > 8<<10 {
		t.Errorf("%d connections of one link wrote %d bytes, want at most 8 KiB", n, st.Size())
	}
	count := map[string]int{}
	var summaries []Event
	for _, e := range readAll(t, path, Filter{}) {
		if e.Count > 0 {
			summaries = append(summaries, e)
			count[e.Who+" "+e.Event] += e.Count
			continue
		}
		count[e.Who+" "+e.Event]++
	}
	if count["share:flood connect"] != n || count["share:flood disconnect"] != n {
		t.Errorf("connect and disconnect of share:flood counted %d and %d, want %d each", count["share:flood connect"], count["share:flood disconnect"], n)
	}
	if count["bob@corp.com connect"] != 5 || count["owner share-created"] != 5 {
		t.Errorf("bob's connections %d and share links created %d, want 5 each, one a line", count["bob@corp.com connect"], count["owner share-created"])
	}
	if len(summaries) != 2 {
		t.Fatalf("summaries = %+v, want one for connect and one for disconnect", summaries)
	}
	for _, s := range summaries {
		if s.Terminal != "terminal:/t1" || s.Share != "flood" || s.Remote != "10.0.0.9" || s.Until.Before(s.Time) || s.Detail == "" {
			t.Errorf("summary %+v: want its terminal, link, address, time span and why", s)
		}
	}
}

// TestAuditBudgetWindowEnds: a summary is written when its window ends,
// not only at Close, and a new window starts with lines again; input
// summaries sum the bytes.
func TestAuditBudgetWindowEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.budget.window = 200 * time.Millisecond
	for range PerWindow + 7 {
		l.Record(Event{Event: Input, Who: "alice@corp.com", Terminal: "terminal:/t1", Bytes: 3})
	}
	var sum Event
	poll.Until(t, 10*time.Second, "the input summary at the window's end", func() bool {
		l.Sync()
		for _, e := range readAll(t, path, Filter{}) {
			if e.Count > 0 {
				sum = e
				return true
			}
		}
		return false
	})
	if sum.Count != 7 || sum.Bytes != 21 || sum.Event != Input || sum.Who != "alice@corp.com" {
		t.Errorf("summary = %+v, want 7 inputs of 21 bytes", sum)
	}
	l.Record(Event{Event: Input, Who: "alice@corp.com", Terminal: "terminal:/t1", Bytes: 1})
	l.Sync()
	if got := readAll(t, path, Filter{}); len(got) != PerWindow+2 || got[len(got)-1].Count != 0 {
		t.Errorf("after the window: %d lines, the last %+v; want a line of its own", len(got), got[len(got)-1])
	}
}
