package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// throughput: the workload through the server vs the raw pty.
func (rn *runner) throughput(ctx context.Context, res *Result) error {
	p := rn.o.Plan
	times := rn.work.times(p.Size)
	payload := rn.work.chunk * int64(times)
	tp := &Throughput{Bytes: payload}
	for rep := 0; rep < max(1, p.Reps); rep++ {
		// Raw first, then the server, alternating, best of each.
		r, err := startRaw(rn.raw)
		if err != nil {
			return err
		}
		if err := r.sync(20 * time.Second); err != nil {
			r.close()
			return err
		}
		m := newMarker()
		self := process{}
		rawCPU0, _ := self.cpu()
		t0 := time.Now()
		if err := r.write(m.catCommand(rn.work.path, times)); err != nil {
			r.close()
			return err
		}
		n, err := r.readUntil(newScanner(m.text()), time.Now().Add(timeoutFor(payload)))
		el := time.Since(t0)
		rawCPU1, _ := self.cpu()
		r.close()
		if err != nil {
			return err
		}
		if s := mbps(payload, el); s > tp.RawMBps {
			tp.RawMBps = s
			tp.RawCPUPerGiB = (rawCPU1 - rawCPU0) / (float64(payload) / (1 << 30))
		}
		tp.PtyBytes = n

		c, uri, err := rn.newTerminal(ctx, "throughput")
		if err != nil {
			return err
		}
		m = newMarker()
		var st streamStats
		rctx, cancel := context.WithTimeout(ctx, timeoutFor(payload))
		cpu0, _ := rn.proc.cpu()
		t0 = time.Now()
		err = c.input(rctx, uri, m.catCommand(rn.work.path, times))
		if err == nil {
			err = c.readUntil(rctx, newScanner(m.text()), &st)
		}
		el = time.Since(t0)
		cpu1, _ := rn.proc.cpu()
		cancel()
		rn.closeTerminal(c, uri)
		if err != nil {
			return err
		}
		if s := mbps(payload, el); s > tp.ServerMBps {
			tp.ServerMBps = s
			tp.CPUPerGiB = (cpu1 - cpu0) / (float64(payload) / (1 << 30))
			tp.Frames, tp.WireBytes, tp.DataBytes = st.frames, st.wireBytes, st.dataBytes
		}
		rn.logf("throughput %d/%d: raw %.0f MB/s, server %.0f MB/s (%d frames)", rep+1, p.Reps, tp.RawMBps, mbps(payload, el), st.frames)
	}
	tp.Ratio = tp.ServerMBps / tp.RawMBps
	if tp.PtyBytes > 0 {
		tp.EscapeOverhead = float64(tp.DataBytes)/float64(tp.PtyBytes) - 1
		tp.WireOverhead = float64(tp.WireBytes)/float64(tp.PtyBytes) - 1
	}
	res.Throughput = tp
	return nil
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// fanout: the slowest of N subscribers of one terminal vs a lone subscriber.
func (rn *runner) fanout(ctx context.Context, res *Result) error {
	p := rn.o.Plan
	times := rn.work.times(p.FanoutSize)
	payload := rn.work.chunk * int64(times)
	fo := &Fanout{Subscribers: p.Subscribers, Bytes: payload}

	run := func(subs int) (slowest time.Duration, evicted int, err error) {
		c, uri, err := rn.newTerminal(ctx, fmt.Sprintf("fanout%d", subs))
		if err != nil {
			return 0, 0, err
		}
		defer rn.closeTerminal(c, uri)
		all := []*client{c}
		for i := 1; i < subs; i++ {
			s, err := rn.dial(ctx, fmt.Sprintf("bench-sub-%d", i))
			if err != nil {
				return 0, 0, err
			}
			defer s.close()
			if err := s.subscribe(ctx, uri); err != nil {
				return 0, 0, err
			}
			all = append(all, s)
		}
		m := newMarker()
		rctx, cancel := context.WithTimeout(ctx, timeoutFor(payload*int64(subs)))
		defer cancel()
		var wg sync.WaitGroup
		ends := make([]time.Duration, len(all))
		errs := make([]error, len(all))
		t0 := time.Now()
		if err := c.input(rctx, uri, m.catCommand(rn.work.path, times)); err != nil {
			return 0, 0, err
		}
		for i, s := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.readUntil(rctx, newScanner(m.text()), nil)
				ends[i] = time.Since(t0)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			switch {
			case errors.Is(err, errEvicted):
				evicted++
			case err != nil:
				return 0, evicted, err
			default:
				slowest = max(slowest, ends[i])
			}
		}
		return slowest, evicted, nil
	}
	single, _, err := run(1)
	if err != nil {
		return err
	}
	multi, evicted, err := run(p.Subscribers)
	if err != nil {
		return err
	}
	fo.SingleMBps, fo.SlowestMBps, fo.Evicted = mbps(payload, single), mbps(payload, multi), evicted
	fo.Ratio = fo.SlowestMBps / fo.SingleMBps
	if evicted > 0 {
		fo.Ratio = 0
	}
	rn.logf("fanout: single %.0f MB/s, slowest of %d %.0f MB/s, %d evicted", fo.SingleMBps, p.Subscribers, fo.SlowestMBps, evicted)
	res.Fanout = fo
	return nil
}
