package hub

import (
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// nullSub takes frames and forgets them: what the hub's lock covers, not
// the writers' encoding.
type nullSub struct{ fakeSub }

func (s *nullSub) Deliver(*Frame) bool { return true }

// BenchmarkPublish: one 64 KiB terminal/data (a coalesced busy terminal)
// published to 10 subscribers: the work done under the hub lock. Encoding
// is the writers' (BenchmarkFrameBytes), once per frame.
func BenchmarkPublish(b *testing.B) {
	h := New(4 << 20)
	if err := h.AddTerminal(term1, ahp.TerminalState{Claim: ahp.ClientClaim("me")}, 1<<20); err != nil {
		b.Fatal(err)
	}
	for range 10 {
		h.Subscribe(&nullSub{}, term1)
	}
	chunk := strings.Repeat("0123456 \x1b[1;32mcolour\x1b[0m text ü 漢字 ok\r\n", 64<<10/48)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		h.Publish(term1, data(chunk))
	}
}

// BenchmarkFrameBytes: encoding one 64 KiB frame, done once per frame by
// the first writer that needs it.
func BenchmarkFrameBytes(b *testing.B) {
	chunk := strings.Repeat("0123456 \x1b[1;32mcolour\x1b[0m text ü 漢字 ok\r\n", 64<<10/48)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		f := newFrame(ahp.Envelope{Channel: term1, Action: data(chunk), ServerSeq: 1})
		_ = f.Bytes(ahp.Current)
	}
}
