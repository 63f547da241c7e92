package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Header is an asciicast v2 header line.
type Header struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp"`
	Env       map[string]string `json:"env"`
	Title     string            `json:"title"`
}

// Event is one event line.
type Event struct {
	Time float64
	Code string
	Data string
}

// Cast is a parsed asciicast v2 file.
type Cast struct {
	Header Header
	Events []Event
}

var resizeData = regexp.MustCompile(`^[1-9][0-9]*x[1-9][0-9]*$`)

// Parse reads an asciicast v2 file and checks it against the format's
// rules: a header object with version 2, positive width and height, an
// integer timestamp and string env values (json checks the types); then events [time, code, data]
// with non-decreasing times ≥ 0, a known code, string data, and
// resizes written COLSxROWS.
func Parse(r io.Reader) (*Cast, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	if !sc.Scan() {
		return nil, errors.New("asciicast: no header line")
	}
	c := &Cast{}
	if err := json.Unmarshal(sc.Bytes(), &c.Header); err != nil {
		return nil, fmt.Errorf("asciicast header: %w", err)
	}
	if h := c.Header; h.Version != 2 || h.Width < 1 || h.Height < 1 {
		return nil, fmt.Errorf("asciicast header: want version 2 and a positive size, got %+v", h)
	}
	last := 0.0
	for line := 2; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		ev, err := parseEvent(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("asciicast line %d: %w", line, err)
		}
		if ev.Time < last {
			return nil, fmt.Errorf("asciicast line %d: time %v goes back from %v", line, ev.Time, last)
		}
		last = ev.Time
		c.Events = append(c.Events, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("asciicast: %w", err)
	}
	return c, nil
}

func parseEvent(b []byte) (Event, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != 3 {
		return Event{}, fmt.Errorf("want [time, code, data], got %.80s", b)
	}
	var ev Event
	if err := json.Unmarshal(raw[0], &ev.Time); err != nil || ev.Time < 0 {
		return Event{}, fmt.Errorf("time %s is not a number ≥ 0", raw[0])
	}
	if err := json.Unmarshal(raw[1], &ev.Code); err != nil || !strings.Contains("oirmx", ev.Code) || len(ev.Code) != 1 {
		return Event{}, fmt.Errorf("code %s is not one of o, i, r, m, x", raw[1])
	}
	if err := json.Unmarshal(raw[2], &ev.Data); err != nil {
		return Event{}, fmt.Errorf("data %.80s is not a string", raw[2])
	}
	if ev.Code == "r" && !resizeData.MatchString(ev.Data) {
		return Event{}, fmt.Errorf("resize %q is not COLSxROWS", ev.Data)
	}
	return ev, nil
}

// Output is the concatenated output of the cast.
func (c *Cast) Output() string {
	var b strings.Builder
	for _, ev := range c.Events {
		if ev.Code == "o" {
			b.WriteString(ev.Data)
		}
	}
	return b.String()
}
