package content

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
)

// refContent is the content store as AHP's reducer reads it: each part's
// whole text, trimmed by joining it. The chunked store must keep
// exactly the same text.
type refContent struct {
	budget int
	parts  []ahp.Part
}

func (r *refContent) size() int {
	n := 0
	for _, p := range r.parts {
		n += len(p.Text())
	}
	return n
}

func (r *refContent) apply(a ahp.Action) {
	switch a.Type {
	case ahp.TerminalData:
		n := len(r.parts)
		if n == 0 || (r.parts[n-1].Type == ahp.PartCommand && r.parts[n-1].IsComplete) {
			r.parts = append(r.parts, ahp.Part{Type: ahp.PartUnclassified})
			n++
		}
		if p := &r.parts[n-1]; p.Type == ahp.PartCommand {
			p.Output += a.Data
		} else {
			p.Value += a.Data
		}
		r.trim()
	case ahp.TerminalCommandExecuted:
		r.parts = append(r.parts, ahp.Part{Type: ahp.PartCommand, CommandID: a.CommandID, CommandLine: a.CommandLine, Timestamp: a.Timestamp})
	case ahp.TerminalCommandFinished:
		for i := range r.parts {
			if r.parts[i].Type == ahp.PartCommand && r.parts[i].CommandID == a.CommandID {
				r.parts[i].IsComplete, r.parts[i].ExitCode, r.parts[i].DurationMs = true, a.ExitCode, a.DurationMs
				break
			}
		}
	case ahp.TerminalCleared:
		r.parts = nil
	}
}

func (r *refContent) trim() {
	if r.budget <= 0 || r.size() <= r.budget {
		return
	}
	for len(r.parts) > 1 && r.size() > r.budget {
		r.parts = r.parts[1:]
	}
	size := r.size()
	if size <= r.budget {
		return
	}
	p := &r.parts[0]
	text := p.Text()
	cut := safeCut(text, size-r.budget*8/10)
	if p.Type == ahp.PartCommand {
		p.Output = text[cut:]
	} else {
		p.Value = text[cut:]
	}
}

// randomOutput is terminal output with the features trimming cares about:
// newlines (or long runs without), escape sequences (some unterminated for
// long), multi-byte characters.
func randomOutput(r *rand.Rand) string {
	pieces := []string{"a", "line\n", "\x1b[1;31m", "\x1b[0m", "ü", "漢", "👍", "\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\",
		strings.Repeat("x", 300), strings.Repeat("y", 5000), "\x1b]2;", "\x1b[", "\r\n"}
	var sb strings.Builder
	for n := 1 + r.IntN(12); n > 0; n-- {
		sb.WriteString(pieces[r.IntN(len(pieces))])
	}
	return sb.String()
}

func TestContentMatchesReference(t *testing.T) {
	for _, budget := range []int{0, 64, 1000, 4096, 20000, 100000} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(budget), 9))
			c := New(budget)
			ref := &refContent{budget: budget}
			cmd := 0
			for step := 0; step < 3000; step++ {
				var a ahp.Action
				switch x := r.IntN(100); {
				case x < 85:
					a = ahp.Action{Type: ahp.TerminalData, Data: randomOutput(r)}
				case x < 92:
					cmd++
					a = ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: fmt.Sprint("cmd-", cmd), CommandLine: "ls"}
				case x < 99:
					code := x
					a = ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: fmt.Sprint("cmd-", cmd), ExitCode: &code}
				default:
					a = ahp.Action{Type: ahp.TerminalCleared}
				}
				c.Apply(a)
				ref.apply(a)
				if step%7 == 0 || step > 2990 {
					got := c.Snapshot()
					if len(got) != len(ref.parts) {
						t.Fatalf("step %d (%s): %d parts, want %d", step, a.Type, len(got), len(ref.parts))
					}
					for i := range got {
						if got[i].Text() != ref.parts[i].Text() || got[i].Type != ref.parts[i].Type || got[i].IsComplete != ref.parts[i].IsComplete {
							t.Fatalf("step %d (%s): part %d = %s %q…, want %s %q…", step, a.Type, i,
								got[i].Type, textHead(got[i].Text()), ref.parts[i].Type, textHead(ref.parts[i].Text()))
						}
					}
					if c.size != ref.size() {
						t.Fatalf("step %d: size %d, want %d", step, c.size, ref.size())
					}
				}
			}
		})
	}
}

func textHead(s string) string { return s[:min(len(s), 40)] }

// TestPartMemoryBounded: a part that is appended to and trimmed for a long
// time holds at most about twice its text (plus the buffer's growth slack).
func TestPartMemoryBounded(t *testing.T) {
	const budget = 64 << 10
	c := New(budget)
	line := strings.Repeat("y", 99) + "\n"
	for range 20 * budget / len(line) {
		c.appendData(line)
		if p := c.parts[0]; cap(p.text) > 3*budget {
			t.Fatalf("part buffer holds %d bytes for a %d-byte budget", cap(p.text), budget)
		}
	}
	if c.size > budget || c.parts[0].len() != c.size {
		t.Errorf("size %d (part %d), want at most %d", c.size, c.parts[0].len(), budget)
	}
}

// TestSnapshotSharesText: a snapshot does not copy the text, so its cost
// does not grow with the budget (the Go client takes one per frame).
func TestSnapshotSharesText(t *testing.T) {
	c := New(1 << 20)
	c.appendData(strings.Repeat("z", 512<<10))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		c.appendData("k")
		_ = c.Snapshot()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 16<<10 {
		t.Errorf("append + snapshot of a 512 KiB part allocates %d bytes, want under 16 KiB (no copy of the text)", per)
	}
}

// TestFloodReusesBuffers: a part trimmed as it is appended to (a terminal
// flooding its scrollback) moves between spare buffers instead of
// allocating one per move, which costs about two bytes per byte appended.
// Garbage collection is off while it counts (a collection may empty the
// pool); with the race detector a quarter of the spares is dropped, so a
// move in four allocates there.
func TestFloodReusesBuffers(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	c := New(1 << 20)
	chunk := strings.Repeat("0123456789abcdef ok\r\n", 64<<10/21)
	for range 64 { // warm up: the part fills, is trimmed and moves
		c.appendData(chunk)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const rounds = 256 // 16 MiB through the 1 MiB store: about twenty moves
	for range rounds {
		c.appendData(chunk)
	}
	runtime.ReadMemStats(&after)
	in := uint64(rounds * len(chunk))
	limit := in / 8
	if raceDetector {
		limit = in * 3 / 2 // a quarter of twenty moves, far from all twenty
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
		t.Errorf("%d MiB through a 1 MiB store allocated %.1f MiB, want at most %.1f: the buffers reused",
			in>>20, float64(alloc)/(1<<20), float64(limit)/(1<<20))
	}
}

// TestSnapshotTextNeverChanges: text handed out by Snapshot stays as it
// was while the store goes on taking output, moving and reusing buffers.
func TestSnapshotTextNeverChanges(t *testing.T) {
	c := New(64 << 10)
	type held struct{ got, want string }
	var snaps []held
	for i := range 2000 {
		c.appendData(fmt.Sprintf("line %05d %s\n", i, strings.Repeat("x", i%97)))
		if i%37 == 0 {
			for _, p := range c.Snapshot() {
				snaps = append(snaps, held{p.Text(), strings.Clone(p.Text())})
			}
		}
	}
	for _, s := range snaps {
		if s.got != s.want {
			t.Fatalf("a snapshot's text changed after it was taken: %q…, was %q…", textHead(s.got), textHead(s.want))
		}
	}
}

// joinStore is the store before chunk-wise trimming: appends kept as
// chunks, but every trim joined the whole head part to cut it.
type joinStore struct {
	budget, size int
	chunks       []string
}

func (j *joinStore) append(data string) {
	j.chunks = append(j.chunks, data)
	j.size += len(data)
	if j.size <= j.budget {
		return
	}
	text := strings.Join(j.chunks, "")
	cut := safeCut(text, len(text)-j.budget*8/10)
	j.chunks = []string{text[cut:]}
	j.size -= cut
}

// BenchmarkContentAppend: a 1 MiB store taking 64 KiB output chunks (the
// coalesced terminal/data of a busy terminal). The baseline, run in the
// same benchmark, is the store it replaced, which joined the head part on
// every trim; "x-baseline" is how many times faster the chunked trim is.
func BenchmarkContentAppend(b *testing.B) {
	chunk := strings.Repeat("0123456 \x1b[1;32mcolour\x1b[0m text ü 漢字 ok\r\n", 64<<10/48)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	c := New(1 << 20)
	start := time.Now()
	for b.Loop() {
		c.appendData(chunk)
	}
	fast := time.Since(start)
	b.StopTimer()
	// The baseline runs for a bounded time (it is thousands of times slower).
	j := &joinStore{budget: 1 << 20}
	n := 0
	start = time.Now()
	for ; n < b.N && (n < 64 || time.Since(start) < 200*time.Millisecond); n++ {
		j.append(chunk)
	}
	base := time.Since(start) / time.Duration(n) * time.Duration(b.N)
	b.ReportMetric(float64(base)/float64(fast), "x-baseline")
}
