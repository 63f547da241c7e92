package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Filter selects events. Empty fields select everything.
type Filter struct {
	Who      string    // identity or display name, case-insensitive; * matches any run
	Terminal string    // terminal URI, its id, or its title, case-insensitive
	Events   []string  // kinds
	Since    time.Time // inclusive
	Until    time.Time // exclusive
}

// Match reports whether e passes the filter.
func (f Filter) Match(e Event) bool {
	switch {
	case f.Who != "" && !glob(f.Who, e.Who) && !glob(f.Who, e.Name):
		return false
	case f.Terminal != "" && !terminalMatch(f.Terminal, e):
		return false
	case len(f.Events) > 0 && !slices.Contains(f.Events, e.Event):
		return false
	case !f.Since.IsZero() && e.Time.Before(f.Since):
		return false
	case !f.Until.IsZero() && !e.Time.Before(f.Until):
		return false
	}
	return true
}

func terminalMatch(want string, e Event) bool {
	if e.Terminal == "" {
		return false
	}
	id := e.Terminal[strings.LastIndexByte(e.Terminal, '/')+1:]
	return strings.EqualFold(want, e.Terminal) || strings.EqualFold(want, id) || strings.EqualFold(want, e.Title)
}

// glob matches s against pattern, ignoring case; * matches any run.
func glob(pattern, s string) bool {
	pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// Read calls fn for each event of r that f selects, in file order. A line
// that is not an event (a torn last line after a crash) is skipped and
// counted in the error returned at the end, after every good line.
func Read(r io.Reader, f Filter, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	bad, first := 0, 0
	for n := 1; sc.Scan(); n++ {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Event == "" {
			if bad++; first == 0 {
				first = n
			}
			continue
		}
		if !f.Match(e) {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read audit log: %w", err)
	}
	if bad > 0 {
		return fmt.Errorf("read audit log: %d lines are not events (the first is line %d)", bad, first)
	}
	return nil
}
