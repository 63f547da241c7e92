package csibound_test

import (
	"syscall"
	"testing"

	"github.com/termhost/termhost/internal/bench"
	"github.com/termhost/termhost/terminals/csibound"
)

// BenchmarkBenchWorkload: the mixed text termhost bench's throughput step
// cats (ASCII, SGR colours, UTF-8), in 32 KiB reads, through the
// rewriter; against the server's CPU per byte of that step (about 11 s/GiB,
// 10 ns/byte, in docs/BENCHMARKS.md).
func BenchmarkBenchWorkload(b *testing.B) {
	src := bench.MixedText(32 << 10)
	size := csibound.Size{Cols: 80, Rows: 24}
	var w csibound.Rewriter
	dst := make([]byte, 0, 2*len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	before := cpu()
	for b.Loop() {
		dst = w.Append(dst[:0], src, size, size)
	}
	b.ReportMetric(float64(cpu()-before)/float64(b.N)/float64(len(src)), "cpu-ns/byte")
}

func cpu() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
