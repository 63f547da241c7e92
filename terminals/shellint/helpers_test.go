package shellint

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// osc and oscST build an OSC ended by BEL and by ST.
func osc(p string) string   { return "\x1b]" + p + "\a" }
func oscST(p string) string { return "\x1b]" + p + "\x1b\\" }

func code(n int) *int { return &n }

func evData(s string) Event        { return Event{Kind: Data, Text: s} }
func evDetect() Event              { return Event{Kind: DetectionAvailable} }
func evExec(id, line string) Event { return Event{Kind: CommandExecuted, ID: id, CommandLine: line} }
func evFin(id string, exit *int, dur int64) Event {
	return Event{Kind: CommandFinished, ID: id, ExitCode: exit, DurationMs: dur}
}
func evCwd(u string) Event   { return Event{Kind: CwdChanged, Cwd: u} }
func evTitle(t string) Event { return Event{Kind: TitleChanged, Title: t} }

// format renders an event as the tests compare it: data("…"), detect,
// exec(id, "line"), fin(id, exit or -, durationMs), cwd("uri"), title("t").
func format(e Event) string {
	switch e.Kind {
	case Data:
		return "data(" + strconv.Quote(e.Text) + ")"
	case DetectionAvailable:
		return "detect"
	case CommandExecuted:
		return fmt.Sprintf("exec(%s,%q)", e.ID, e.CommandLine)
	case CommandFinished:
		x := "-"
		if e.ExitCode != nil {
			x = strconv.Itoa(*e.ExitCode)
		}
		return fmt.Sprintf("fin(%s,%s,%d)", e.ID, x, e.DurationMs)
	case CwdChanged:
		return "cwd(" + strconv.Quote(e.Cwd) + ")"
	case TitleChanged:
		return "title(" + strconv.Quote(e.Title) + ")"
	}
	return e.Kind.String()
}

// normalize concatenates adjacent data events, drops timestamps and, unless
// keepDur, durations; it returns the events as format renders them.
func normalize(evs []Event, keepDur bool) []string {
	var out []string
	var data strings.Builder
	flush := func() {
		if data.Len() > 0 {
			out = append(out, format(evData(data.String())))
			data.Reset()
		}
	}
	for _, e := range evs {
		if e.Kind == Data {
			data.WriteString(e.Text)
			continue
		}
		if e.Kind == PromptEnd { // a flush hint, in no conformance case (see TestPromptEnd)
			continue
		}
		flush()
		e.Timestamp = 0
		if !keepDur {
			e.DurationMs = 0
		}
		out = append(out, format(e))
	}
	flush()
	return out
}

func joinData(evs []Event) string {
	var sb strings.Builder
	for _, e := range evs {
		if e.Kind == Data {
			sb.WriteString(e.Text)
		}
	}
	return sb.String()
}

// testClock returns the time set by the test.
type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time { return c.t }

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// run feeds reads to a fresh processor; read k happens at epoch + 100·k ms,
// so a command's durationMs is 100 × the reads between its C and D. It checks
// per-write invariants (memory bound, valid UTF-8, no empty data, no adjacent
// data events inside one write) and returns all events plus the data emitted
// during each read.
func run(t testing.TB, opts Options, pin string, reads []string, eof bool) ([]Event, []string) {
	t.Helper()
	clk := &testClock{t: epoch}
	opts.Clock = clk
	if opts.Hostname == "" {
		opts.Hostname = "myhost"
	}
	p := NewProcessor(opts)
	if pin != "" {
		p.PinTitle(pin)
	}
	var all []Event
	var perRead []string
	for k, r := range reads {
		clk.t = epoch.Add(time.Duration(k) * 100 * time.Millisecond)
		var got []Event
		p.Write([]byte(r), func(e Event) { got = append(got, e) })
		checkWrite(t, got, r)
		if h := p.held(); h > capMarker+64 {
			t.Fatalf("after read %d of %q: scanner+decoder hold %d bytes, want <= %d", k, r, h, capMarker+64)
		}
		all = append(all, got...)
		perRead = append(perRead, joinData(got))
	}
	if eof {
		var got []Event
		p.Close(func(e Event) { got = append(got, e) })
		checkWrite(t, got, "<EOF>")
		all = append(all, got...)
		if h := p.held(); h != 0 {
			t.Fatalf("after Close: held %d bytes, want 0", h)
		}
	}
	return all, perRead
}

func checkWrite(t testing.TB, got []Event, input string) {
	t.Helper()
	for i, e := range got {
		if e.Kind != Data {
			continue
		}
		if e.Text == "" {
			t.Fatalf("Write(%q) emitted an empty data event at %d", input, i)
		}
		if !utf8.ValidString(e.Text) {
			t.Fatalf("Write(%q) emitted invalid UTF-8 data %q", input, e.Text)
		}
		if i > 0 && got[i-1].Kind == Data {
			t.Fatalf("Write(%q) emitted two adjacent data events %q and %q", input, got[i-1].Text, e.Text)
		}
	}
}

// markerViolation reports a stripped family left in client data (no client
// may see a shell-integration sequence), parsing identifiers the way xterm.js
// does (any number of digits, numeric value): a complete OSC 633 or 133
// (identifier followed by ';', BEL, ESC or the end), an OSC 7 with a payload,
// or 1337;CurrentDir.
func markerViolation(data string) string {
	for i := 0; ; {
		j := strings.Index(data[i:], "\x1b]")
		if j < 0 {
			return ""
		}
		i += j + 2
		k := i
		for k < len(data) && data[k] >= '0' && data[k] <= '9' {
			k++
		}
		if k == i {
			continue
		}
		id := strings.TrimLeft(data[i:k], "0")
		if id == "" {
			id = "0"
		}
		var next byte
		end := k == len(data)
		if !end {
			next = data[k]
		}
		switch {
		case (id == "633" || id == "133") && (end || next == ';' || next == '\a' || next == 0x1b):
			return "OSC " + id + " at byte " + strconv.Itoa(i-2)
		case id == "7" && next == ';':
			return "OSC 7 at byte " + strconv.Itoa(i-2)
		case id == "1337" && strings.HasPrefix(data[k:], ";CurrentDir"):
			return "OSC 1337;CurrentDir at byte " + strconv.Itoa(i-2)
		}
	}
}

// fidelityApplies reports whether the data must equal in byte for byte: valid
// UTF-8, no stripped family, no OSC ended by a bare ESC, no ESC ESC.
func fidelityApplies(in []byte) bool {
	if !utf8.Valid(in) || bytes.Contains(in, []byte{0x1b, 0x1b}) {
		return false
	}
	for i := 0; ; {
		j := bytes.Index(in[i:], []byte("\x1b]"))
		if j < 0 {
			return true
		}
		i += j + 2
		k := i
		for k < len(in) && in[k] >= '0' && in[k] <= '9' {
			k++
		}
		id := strings.TrimLeft(string(in[i:k]), "0")
		if k > i && id == "" {
			id = "0"
		}
		// Find the end of this OSC.
		e := k
		for e < len(in) && in[e] != '\a' && in[e] != 0x18 && in[e] != 0x1a && in[e] != 0x1b {
			e++
		}
		if e < len(in) && in[e] == 0x1b && (e+1 >= len(in) || in[e+1] != '\\') {
			return false // ended by a bare ESC (or an ESC at the very end)
		}
		if k > i && len(id) <= maxDigits {
			switch id {
			case "633", "133":
				return false
			case "7":
				if k < len(in) && in[k] == ';' {
					return false
				}
			case "1337":
				if bytes.HasPrefix(in[k:], []byte(";CurrentDir")) {
					return false
				}
			}
		}
		if e >= len(in) {
			return true // unterminated at the end: forwarded as is
		}
		i = e
	}
}
