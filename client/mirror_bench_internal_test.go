package client

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// BenchmarkMirrorFrame: one 100-byte output frame into a terminal mirror
// that is already full, at three budgets. The store appends in place and
// trims in chunks, so ns/op and B/op must not grow with the budget (~1 ms
// and 1 MB per frame at 1 MiB before the shared store).
// "output" is one long stream of lines; "commands" is a shell session of
// 1 KiB command outputs, 64 commands in all whatever the budget (a budget
// holds at most as many parts as were made).
func BenchmarkMirrorFrame(b *testing.B) {
	for _, parts := range []int{1, 64, 0} {
		for _, budget := range []int{64 << 10, 1 << 20, 16 << 20} {
			b.Run(fmt.Sprintf("parts=%d/budget=%dKiB", parts, budget>>10), func(b *testing.B) {
				m := fullMirror(budget, parts)
				frame := ahp.Action{Type: ahp.TerminalData, Data: string(make([]byte, 99)) + "\n"}
				b.SetBytes(int64(len(frame.Data)))
				b.ReportAllocs()
				for b.Loop() {
					m.state = m.reduce(frame)
				}
			})
		}
	}
}

// fullMirror is a terminal mirror holding budget bytes of output in lines
// of 100 bytes: one part (parts 1), or commands making that many parts, or
// (parts 0) a command per line, as many as the budget holds.
func fullMirror(budget, parts int) *mirror {
	m := &mirror{channel: ahp.TerminalURIOf("bench")}
	m.install(ahp.TerminalState{Title: "bench"}, budget)
	line := ahp.Action{Type: ahp.TerminalData, Data: string(make([]byte, 99)) + "\n"}
	if parts == 0 {
		parts = budget / len(line.Data)
	}
	for i := range parts {
		if parts > 1 {
			m.state = m.reduce(ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: strconv.Itoa(i), CommandLine: "make"})
		}
		for range budget / parts / len(line.Data) {
			m.state = m.reduce(line)
		}
	}
	return m
}

// TestMirrorFrameCost: a frame allocates O(len(data)) whatever the mirror
// holds. Before, each frame copied every part out of the store (~1 MB per
// 100-byte frame at a 1 MiB budget full of commands).
func TestMirrorFrameCost(t *testing.T) {
	const frames, maxPerFrame = 1000, 2 << 10
	for _, tc := range []struct {
		name          string
		budget, parts int
	}{
		{"one part, 1 MiB", 1 << 20, 1},
		{"a command per line, 1 MiB", 1 << 20, 0},
		{"a command per line, 16 MiB", 16 << 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fullMirror(tc.budget, tc.parts)
			frame := ahp.Action{Type: ahp.TerminalData, Data: string(make([]byte, 99)) + "\n"}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range frames {
				m.state = m.reduce(frame)
			}
			runtime.ReadMemStats(&after)
			if per := (after.TotalAlloc - before.TotalAlloc) / frames; per > maxPerFrame {
				t.Errorf("%d parts: %d bytes allocated per 100-byte frame, want ≤ %d", len(m.content.Snapshot()), per, maxPerFrame)
			}
			if st := m.state.(ahp.TerminalState); st.Content != nil {
				t.Errorf("state after a frame has %d parts, want none (the store keeps them)", len(st.Content))
			}
		})
	}
}
