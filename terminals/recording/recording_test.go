package recording

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock advances by step at every reading.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func startTest(t *testing.T, o Options) (*Recorder, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0), step: 250 * time.Millisecond}
	o.Path = filepath.Join(t.TempDir(), "rec", "t.cast")
	o.Clock = clock.Now
	if o.Cols == 0 {
		o.Cols, o.Rows = 80, 24
	}
	r, err := Start(o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return r, clock
}

func parseFile(t *testing.T, path string) *Cast {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestRecorderWritesAsciicast(t *testing.T) {
	r, _ := startTest(t, Options{Title: "bash", Env: map[string]string{"TERM": "xterm-256color", "SHELL": "/bin/bash"}})
	r.Output("hello \x1b[31mred\x1b[0m\r\n")
	r.Marker("make build")
	r.Output("caf\xc3") // é split between two reads
	r.Output("\xa9\r\n")
	r.Resize(100, 30)
	r.Close("exited with code 0")

	info, err := os.Stat(r.Path())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: got %v, %v, want 0600", info, err)
	}
	if dir, _ := os.Stat(filepath.Dir(r.Path())); dir.Mode().Perm() != 0o700 {
		t.Errorf("dir mode: got %v, want 0700", dir.Mode().Perm())
	}
	c := parseFile(t, r.Path())
	h := c.Header
	if h.Width != 80 || h.Height != 24 || h.Timestamp != 1_700_000_000 || h.Title != "bash" || h.Env["SHELL"] != "/bin/bash" || h.Env["TERM"] != "xterm-256color" {
		t.Errorf("header: got %+v", h)
	}
	var codes []string
	for _, ev := range c.Events {
		codes = append(codes, ev.Code+":"+ev.Data)
	}
	want := []string{"o:hello \x1b[31mred\x1b[0m\r\n", "m:make build", "o:caf", "o:é\r\n", "r:100x30", "m:exited with code 0"}
	if strings.Join(codes, "|") != strings.Join(want, "|") {
		t.Errorf("events:\ngot  %q\nwant %q", codes, want)
	}
	if got := c.Events[0].Time; got != 0.25 {
		t.Errorf("first event time: got %v, want 0.25 (fake clock)", got)
	}
	if got := PlainText(c.Output()); got != "hello red\ncafé\n" {
		t.Errorf("PlainText: got %q", got)
	}
	f, _ := os.Open(r.Path())
	defer f.Close()
	var text strings.Builder
	if err := WriteText(&text, f); err != nil || text.String() != "hello red\ncafé\n" {
		t.Errorf("WriteText: got %q, %v", text.String(), err)
	}
}

func TestRecorderSizeCap(t *testing.T) {
	r, _ := startTest(t, Options{Max: 2048})
	line := strings.Repeat("x", 99) + "\n"
	for range 100 {
		r.Output(line)
	}
	r.Close("exited")
	info, _ := os.Stat(r.Path())
	if info.Size() > 2048 {
		t.Errorf("size: got %d, want ≤ 2048", info.Size())
	}
	c := parseFile(t, r.Path())
	last := c.Events[len(c.Events)-1]
	if last.Code != "m" || !strings.HasPrefix(last.Data, "recording truncated at ") {
		t.Errorf("last event: got %+v, want the truncated marker", last)
	}
	if n := strings.Count(c.Output(), line); n < 5 || n >= 100 {
		t.Errorf("output lines kept: got %d, want some but not all", n)
	}
}

func TestRecorderNeverDropsSilently(t *testing.T) {
	// An output larger than the queue bound cannot wait: it is left out
	// and the gap is a marker.
	r, _ := startTest(t, Options{Pending: 16})
	r.Output("before\n")
	r.Output(strings.Repeat("y", 17))
	r.Close("")
	c := parseFile(t, r.Path())
	if got := c.Output(); got != "before\n" {
		t.Errorf("output: got %q", got)
	}
	last := c.Events[len(c.Events)-1]
	if last.Code != "m" || last.Data != "recording skipped 17 bytes of output: the disk did not keep up" {
		t.Errorf("last event: got %+v, want the skipped marker", last)
	}
}

func TestRecorderPause(t *testing.T) {
	r, _ := startTest(t, Options{})
	r.Output("a")
	r.Pause()
	r.Output("secret")
	r.Resize(90, 20)
	r.Resume(100, 40)
	r.Output("b")
	r.Close("")
	c := parseFile(t, r.Path())
	var got []string
	for _, ev := range c.Events {
		got = append(got, ev.Code+":"+ev.Data)
	}
	want := "o:a|m:recording paused|m:recording resumed|r:100x40|o:b"
	if strings.Join(got, "|") != want {
		t.Errorf("events: got %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "make build", "make build"},
		{"newlines", "echo a\necho b", "echo a echo b"},
		{"invalid utf8", "ls \xff", "ls  "},
		{"clipped at a rune", strings.Repeat("é", 150), strings.Repeat("é", 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Label(tc.in); got != tc.want {
				t.Errorf("Label(%q): got %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"no header", ""},
		{"version 1", `{"version":1,"width":80,"height":24}`},
		{"string width", `{"version":2,"width":"80","height":24}`},
		{"time backwards", "{\"version\":2,\"width\":80,\"height\":24}\n[1.0, \"o\", \"a\"]\n[0.5, \"o\", \"b\"]"},
		{"unknown code", "{\"version\":2,\"width\":80,\"height\":24}\n[1.0, \"q\", \"a\"]"},
		{"bad resize", "{\"version\":2,\"width\":80,\"height\":24}\n[1.0, \"r\", \"80,24\"]"},
		{"data not a string", "{\"version\":2,\"width\":80,\"height\":24}\n[1.0, \"o\", 3]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(strings.NewReader(tc.in)); err == nil {
				t.Errorf("Parse(%q): got no error", tc.in)
			}
		})
	}
}

// BenchmarkRecorderOutput is recording output in 32 KiB reads, from the
// pty reader's call to the bytes on disk (Close waits for the writer);
// the queue is large enough that nothing is skipped.
func BenchmarkRecorderOutput(b *testing.B) {
	r, err := Start(Options{Path: filepath.Join(b.TempDir(), "b.cast"), Cols: 80, Rows: 24, Max: 1 << 40, Pending: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	chunk := strings.Repeat("build output line \x1b[32mok\x1b[0m\r\n", 2048)[:32<<10]
	b.SetBytes(int64(len(chunk)))
	b.ResetTimer()
	for range b.N {
		r.Output(chunk)
	}
	r.Close("")
}

// TestContinue: a recording reopened after an upgrade
// goes on in the same file: a cut last line is dropped, the header kept,
// times go on, the note and the size come first.
func TestContinue(t *testing.T) {
	r, clock := startTest(t, Options{Title: "bash"})
	r.Output("before\r\n")
	r.Close("recording stopped: the server was upgraded")
	f, _ := os.OpenFile(r.Path(), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`[9.0, "o", "cut by a cra`) // a crash mid-line
	f.Close()

	r2, err := Continue(Options{Path: r.Path(), Clock: clock.Now}, "recording continues after the upgrade", 100, 30)
	if err != nil {
		t.Fatal(err)
	}
	r2.Output("after\r\n")
	r2.Close("exited")
	c := parseFile(t, r.Path())
	if c.Header.Title != "bash" || c.Header.Width != 80 {
		t.Errorf("header after Continue: %+v", c.Header)
	}
	var codes []string
	for _, ev := range c.Events {
		codes = append(codes, ev.Code+":"+ev.Data)
	}
	want := []string{"o:before\r\n", "m:recording stopped: the server was upgraded", "m:recording continues after the upgrade", "r:100x30", "o:after\r\n", "m:exited"}
	if strings.Join(codes, "|") != strings.Join(want, "|") {
		t.Errorf("events:\ngot  %q\nwant %q", codes, want)
	}
	if _, err := Continue(Options{Path: filepath.Join(t.TempDir(), "none.cast")}, "", 80, 24); err == nil {
		t.Errorf("Continue of a missing file: no error")
	}
}

// A recording paused when the server was upgraded stays paused after it.
func TestContinuePaused(t *testing.T) {
	r, clock := startTest(t, Options{})
	r.Output("before\r\n")
	r.Pause()
	r.Close("recording stopped: the server was upgraded") // dropped: paused
	r2, err := Continue(Options{Path: r.Path(), Clock: clock.Now}, "recording continues after the upgrade", 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Paused() {
		t.Errorf("a paused recording continues unpaused")
	}
	r2.Output("secret\r\n")
	r2.Resume(80, 24)
	r2.Output("after\r\n")
	r2.Close("")
	var codes []string
	for _, ev := range parseFile(t, r.Path()).Events {
		codes = append(codes, ev.Code+":"+ev.Data)
	}
	want := []string{"o:before\r\n", "m:recording paused", "m:recording resumed", "r:80x24", "o:after\r\n"}
	if strings.Join(codes, "|") != strings.Join(want, "|") {
		t.Errorf("events:\ngot  %q\nwant %q", codes, want)
	}
}
