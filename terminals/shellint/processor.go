// Package shellint implements shell integration for termhost terminals:
// it decodes pty output as UTF-8, strips the shell-integration escape
// sequences (OSC 633, 133, 7 and 1337;CurrentDir), turns them into command,
// cwd and title events, and injects integration scripts into bash, zsh and
// fish. Program output is untrusted: in a shell it injected, only 633
// sequences that carry the terminal's nonce change state (see Mode), and
// no client ever sees a shell-integration sequence.
package shellint

import (
	"crypto/subtle"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/termhost/termhost/ahp"
)

// Kind says what an Event reports.
type Kind int

const (
	Data               Kind = iota // Text: clean output, valid UTF-8, escapes stripped
	DetectionAvailable             // command detection works in this terminal (once)
	CommandExecuted                // ID ("cmd-1"), CommandLine, Timestamp (unix ms)
	CommandFinished                // ID, ExitCode (nil = unknown), DurationMs
	CwdChanged                     // Cwd: "file:///..." URI
	TitleChanged                   // Title
	// PromptEnd: the prompt is complete and the shell waits for input (633;B
	// or 133;B). It changes no state; output before it should go out now.
	PromptEnd
)

var kindNames = [...]string{"Data", "DetectionAvailable", "CommandExecuted", "CommandFinished", "CwdChanged", "TitleChanged", "PromptEnd"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one item of processed terminal output, in stream order.
type Event struct {
	Kind Kind
	Text string // a Data event's text (see Options.RawData)
	// Raw is a Data event's text instead of Text with Options.RawData: it
	// aliases the processor's buffers and is valid only during the call.
	Raw         []byte
	ID          string
	CommandLine string
	Timestamp   int64
	ExitCode    *int
	DurationMs  int64
	Cwd         string
	Title       string
}

// Mode is the trust mode of a terminal: which sequences it believes
// (docs/decisions/0002-shell-integration-trust.md).
type Mode int

const (
	// Lenient: no injection. Sequences are accepted without a nonce.
	Lenient Mode = iota
	// Pending: injected, no trusted sequence seen yet. Behaves like Strict
	// and becomes Lenient if no trusted sequence arrives within PendingTimeout.
	Pending
	// Strict: only OSC 633 sequences carrying the nonce change state.
	Strict
)

func (m Mode) String() string {
	switch m {
	case Lenient:
		return "lenient"
	case Pending:
		return "pending"
	case Strict:
		return "strict"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// PendingTimeout is how long a Pending terminal waits for its first trusted
// sequence before it falls back to Lenient.
const PendingTimeout = 10 * time.Second

// Clock supplies the time. Wall time gives timestamps, the monotonic
// reading (when present) gives durations.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Options configures a Processor.
type Options struct {
	Nonce     string // the terminal's nonce; empty = none
	Mode      Mode
	Clock     Clock // nil = real clock
	KeepEmpty bool  // false = empty-command elision on (the default)
	// RawData: Data events carry Raw instead of Text, so that a caller that
	// copies the bytes anyway (to coalesce them) spares a string per read.
	RawData bool
	// Hostname is the local host name accepted in OSC 7 besides "" and
	// "localhost"; empty = os.Hostname().
	Hostname string
}

type command struct {
	active    bool
	emitted   bool
	sawOutput bool
	id        string
	line      string
	start     time.Time
	startWall int64
}

// Processor turns pty output into Events: UTF-8 decoding, the
// escape scanner, then the interpreter of the sequences. It is owned by one
// goroutine; it does no locking.
type Processor struct {
	dec decoder
	sc  *scanner

	emitFn  func(Event)
	rawData bool
	closed  bool

	// pending data: pend aliases the current input while it is one
	// contiguous run, else it is own.
	pend  []byte
	owned bool
	own   []byte

	clock     Clock
	hostname  string
	hostKnown bool
	nonce     []byte
	mode      Mode
	spawned   time.Time
	keepEmpty bool

	detected   bool
	pendingSet bool
	pending    string
	run        command
	depth      int
	saw633     bool // lenient: a 633 A–D was accepted; 133 is ignored from now on
	cwd        string
	title      string
	pinned     bool
	hint       string
	hintSet    bool
	nextID     int
}

// NewProcessor returns a Processor for one terminal process.
func NewProcessor(opts Options) *Processor {
	p := &Processor{
		clock:     opts.Clock,
		mode:      opts.Mode,
		keepEmpty: opts.KeepEmpty,
		rawData:   opts.RawData,
		hostname:  opts.Hostname,
		hostKnown: opts.Hostname != "",
		nextID:    1,
	}
	if p.clock == nil {
		p.clock = realClock{}
	}
	if opts.Nonce != "" {
		p.nonce = []byte(opts.Nonce)
	}
	if p.mode == Pending {
		p.spawned = p.clock.Now()
	}
	p.sc = newScanner(p)
	return p
}

// Mode reports the current trust mode.
func (p *Processor) Mode() Mode { return p.mode }

// Write processes one pty read, calling emit for every event in stream
// order. Data events never straddle a non-data event. emit is not retained.
func (p *Processor) Write(b []byte, emit func(Event)) {
	if p.closed {
		return
	}
	p.emitFn = emit
	p.sc.write(p.dec.decode(b))
	p.flushData()
	p.emitFn = nil
}

// Close flushes the decoder and the scanner at process end and finishes a
// running command without exit code (a held phantom is dropped). It does not
// report the exit itself. Further calls and Writes do nothing.
func (p *Processor) Close(emit func(Event)) {
	if p.closed {
		return
	}
	p.emitFn = emit
	if r := p.dec.flush(); r != nil {
		p.sc.write(r)
	}
	p.sc.close()
	if p.run.active {
		p.finish(nil)
	}
	p.flushData()
	p.emitFn = nil
	p.closed = true
}

// PinTitle records a client-dispatched rename: automatic title updates stop
// until the client sets an empty title, which unpins.
func (p *Processor) PinTitle(title string) {
	p.title = title
	p.pinned = title != ""
}

// SetServerHint remembers a command the server typed into the terminal, used
// as the command line if no trusted E supplies one, until the next C or A.
// An empty cmd clears it.
func (p *Processor) SetServerHint(cmd string) {
	p.hint = cmd
	p.hintSet = cmd != ""
}

// held reports the stream bytes kept between reads (for the memory bound).
func (p *Processor) held() int { return p.dec.held() + p.sc.held() }

// data implements itemSink.
func (p *Processor) data(b []byte, stable bool) {
	if len(b) == 0 {
		return
	}
	if p.run.active {
		if !p.run.emitted {
			p.announce()
		}
		p.run.sawOutput = true
	}
	if len(p.pend) == 0 {
		if stable {
			p.pend, p.owned = b, false
			return
		}
		p.own = append(p.own[:0], b...)
		p.pend, p.owned = p.own, true
		return
	}
	if !p.owned {
		n := len(p.pend)
		if stable && cap(p.pend) >= n+len(b) && &p.pend[:n+1][n] == &b[0] {
			p.pend = p.pend[:n+len(b)] // contiguous in the input: no copy
			return
		}
		p.own = append(p.own[:0], p.pend...)
		p.owned = true
	}
	p.own = append(p.own, b...)
	p.pend = p.own
}

func (p *Processor) flushData() {
	if len(p.pend) == 0 {
		return
	}
	ev := Event{Kind: Data, Raw: p.pend}
	if !p.rawData {
		ev = Event{Kind: Data, Text: string(p.pend)}
	}
	p.pend, p.owned = nil, false
	p.emitFn(ev)
}

// emit sends a non-data event after the data that preceded it.
func (p *Processor) emit(e Event) {
	p.flushData()
	p.emitFn(e)
}

func (p *Processor) detect() {
	if !p.detected {
		p.detected = true
		p.emit(Event{Kind: DetectionAvailable})
	}
}

func (p *Processor) announce() {
	p.run.id = "cmd-" + strconv.Itoa(p.nextID)
	p.nextID++
	p.run.emitted = true
	p.emit(Event{Kind: CommandExecuted, ID: p.run.id, CommandLine: p.run.line, Timestamp: p.run.startWall})
}

// finish ends the running command, as a D sequence does.
func (p *Processor) finish(exit *int) {
	if !p.run.emitted {
		if exit == nil && !p.run.sawOutput {
			p.run = command{} // phantom from an empty Enter or Ctrl-C
			return
		}
		p.announce()
	}
	d := p.clock.Now().Sub(p.run.start).Milliseconds()
	if d < 0 {
		d = 0
	}
	id := p.run.id
	p.run = command{}
	p.emit(Event{Kind: CommandFinished, ID: id, ExitCode: exit, DurationMs: d})
}

func (p *Processor) clearPending() {
	p.pendingSet, p.pending = false, ""
}

func (p *Processor) onA() {
	p.clearPending()
	p.hint, p.hintSet = "", false
}

func (p *Processor) onC(url string, urlSet bool) {
	if p.run.active {
		if p.mode == Lenient {
			p.depth++ // a nested shell started a command
			return
		}
		p.finish(nil) // the previous D was lost
	}
	line := ""
	switch {
	case p.pendingSet:
		line = p.pending
	case urlSet:
		line = url
	case p.hintSet:
		line = p.hint
	}
	p.clearPending()
	p.hint, p.hintSet = "", false
	now := p.clock.Now()
	p.run = command{active: true, line: line, start: now, startWall: now.UnixMilli()}
	p.flushData() // output before C is not the command's
	if line != "" || p.keepEmpty {
		p.announce()
	}
}

func (p *Processor) onD(exit *int) {
	p.clearPending()
	if p.mode == Lenient && p.depth > 0 {
		p.depth--
		return
	}
	if p.run.active {
		p.finish(exit)
	}
}

func (p *Processor) setCwd(path string) {
	if !strings.HasPrefix(path, "/") || path == p.cwd {
		return
	}
	p.cwd = path
	p.emit(Event{Kind: CwdChanged, Cwd: ahp.FileURI(path)})
}

// checkPending downgrades Pending to Lenient after PendingTimeout.
func (p *Processor) checkPending() {
	if p.mode == Pending && p.clock.Now().Sub(p.spawned) >= PendingTimeout {
		p.mode = Lenient
	}
}

// osc implements itemSink.
func (p *Processor) osc(k oscKind, payload []byte) {
	switch k {
	case kind633:
		p.on633(payload)
	case kind133:
		p.checkPending()
		if p.mode == Lenient && !p.saw633 {
			p.on133(payload)
		}
	case kindCwd7:
		p.checkPending()
		if p.mode == Lenient {
			if path, ok := parseOSC7(payload, p.isLocalHost); ok {
				p.setCwd(path)
			}
		}
	case kindITerm:
		p.checkPending()
		if p.mode == Lenient {
			if v, ok := strings.CutPrefix(string(payload), "CurrentDir="); ok {
				p.setCwd(v)
			}
		}
	case kindTitle:
		p.onTitle(payload)
	}
}

func (p *Processor) isLocalHost(h string) bool {
	if !p.hostKnown {
		p.hostname, _ = os.Hostname()
		p.hostKnown = true
	}
	return p.hostname != "" && strings.EqualFold(h, p.hostname)
}

func (p *Processor) on633(payload []byte) {
	sub, rest, hasRest := cut(payload)
	if len(sub) != 1 {
		return // unknown sub-command (SetMark, EnvJson, …): stripped, ignored
	}
	var field, slot []byte
	hasSlot := false
	switch sub[0] {
	case 'A', 'B', 'C':
		slot, hasSlot = rest, hasRest
	case 'D', 'E', 'P':
		if hasRest {
			field, slot, hasSlot = cut(rest)
		}
	default:
		return
	}
	trusted := len(p.nonce) > 0 && hasSlot && subtle.ConstantTimeCompare(slot, p.nonce) == 1

	p.checkPending()
	switch p.mode {
	case Strict, Pending:
		if !trusted {
			return
		}
		p.mode = Strict
	case Lenient:
		if trusted { // integration came alive after the downgrade
			p.mode = Strict
			p.depth = 0
			if p.run.active {
				p.finish(nil)
			}
		}
	}

	op := sub[0]
	if p.mode == Strict || op <= 'D' {
		p.detect()
	}
	if p.mode == Lenient && op <= 'D' {
		p.saw633 = true
	}
	switch op {
	case 'A':
		p.onA()
	case 'B':
		p.emit(Event{Kind: PromptEnd})
	case 'C':
		p.onC("", false)
	case 'D':
		p.onD(parseExit(field))
	case 'E':
		p.pending, p.pendingSet = unescape633(field), true
	case 'P':
		if k, v, ok := strings.Cut(unescape633(field), "="); ok && k == "Cwd" {
			p.setCwd(v)
		}
	}
}

func (p *Processor) on133(payload []byte) {
	fields := strings.Split(string(payload), ";")
	switch fields[0] {
	case "A":
		p.detect()
		p.onA()
	case "B":
		p.detect()
		p.emit(Event{Kind: PromptEnd})
	case "C":
		p.detect()
		url, urlSet := "", false
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "cmdline_url="); ok {
				if b, ok := percentDecode(v); ok {
					url, urlSet = decodeString(b), true
				}
			}
		}
		p.onC(url, urlSet)
	case "D":
		p.detect()
		var exit *int
		if len(fields) > 1 {
			exit = parseExit([]byte(fields[1]))
		}
		p.onD(exit)
	}
}

func (p *Processor) onTitle(payload []byte) {
	t := sanitizeTitle(payload)
	if t == "" || p.pinned || t == p.title {
		return
	}
	p.title = t
	p.emit(Event{Kind: TitleChanged, Title: t})
}
