package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// throughput: the workload through the server vs the raw pty, to a client
// that asked for binary data messages (as termhost's own clients do), then
// to an AHP client that gets JSON text frames, then to a client that asked
// for permessage-deflate.
func (rn *runner) throughput(ctx context.Context, res *Result) error {
	p := rn.o.Plan
	times := rn.work.times(p.Size)
	payload := rn.work.chunk * int64(times)
	gib := float64(payload) / (1 << 30)
	tp := &Throughput{Bytes: payload}
	rl, err := rn.startPeer(ctx)
	if err != nil {
		return err
	}
	defer rl.stop()
	tp.Peer = rl.name
	// CPU per GiB: each side's median over the rounds, and the server's
	// ratio to the relay as the median of each round's own ratio. Rounds
	// on a shared machine differ by tens of percent; the two runs of one
	// round share its conditions, and the median leaves out a round a
	// neighbour disturbed.
	var rawCPU, relayCPU, serverCPU, jsonCPU, zCPU, overRelay, jsonOverRelay []float64
	for rep := 0; rep < max(1, p.Reps); rep++ {
		// Raw first, then the relay, then the server, alternating; the best
		// throughput of each counts.
		el, cpu, n, err := rn.rawRun(times, payload)
		if err != nil {
			return err
		}
		tp.RawMBps = max(tp.RawMBps, mbps(payload, el))
		rawCPU = append(rawCPU, cpu/gib)
		tp.PtyBytes = n
		rel, relCPU, err := rn.relayRun(ctx, rl, times, payload)
		if err != nil {
			return err
		}
		tp.RelayMBps = max(tp.RelayMBps, mbps(payload, rel))

		r, err := rn.serverRun(ctx, times, payload, wireMode{})
		if err != nil {
			return err
		}
		if s := mbps(payload, r.elapsed); s > tp.ServerMBps {
			tp.ServerMBps = s
			tp.Frames, tp.WireBytes, tp.DataBytes = r.stats.frames, r.wire, r.stats.dataBytes
		}
		serverCPU = append(serverCPU, r.cpu/gib)
		relayNote := ""
		if relCPU > 0 { // the peer is a process of its own: its CPU is known
			relayCPU = append(relayCPU, relCPU/gib)
			overRelay = append(overRelay, r.cpu/relCPU)
			relayNote = fmt.Sprintf(", CPU server %.1f s/GiB = %.2f× the peer's %.1f", r.cpu/gib, r.cpu/relCPU, relCPU/gib)
		}
		j, err := rn.serverRun(ctx, times, payload, wireMode{json: true})
		if err != nil {
			return err
		}
		if c := tp.JSON; c == nil || mbps(payload, j.elapsed) > c.MBps {
			tp.JSON = &JSONClient{MBps: mbps(payload, j.elapsed), WireBytes: j.wire, DataBytes: j.stats.dataBytes}
		}
		jsonCPU = append(jsonCPU, j.cpu/gib)
		if relCPU > 0 {
			jsonOverRelay = append(jsonOverRelay, j.cpu/relCPU)
		}
		z, err := rn.serverRun(ctx, times, payload, wireMode{compress: true})
		if err != nil {
			return err
		}
		if c := tp.Compressed; c == nil || mbps(payload, z.elapsed) > c.MBps {
			tp.Compressed = &Compressed{Negotiated: z.deflate, MBps: mbps(payload, z.elapsed), WireBytes: z.wire}
		}
		zCPU = append(zCPU, z.cpu/gib)
		rn.logf("throughput %d/%d: raw %.0f MB/s, peer %.0f MB/s, server %.0f MB/s (%d frames), JSON %.0f MB/s, compressed %.0f MB/s (deflate %s)%s", rep+1, p.Reps,
			mbps(payload, el), mbps(payload, rel), mbps(payload, r.elapsed), r.stats.frames, mbps(payload, j.elapsed), mbps(payload, z.elapsed), onOff(z.deflate), relayNote)
	}
	tp.RawCPUPerGiB, tp.CPUPerGiB = median(rawCPU), median(serverCPU)
	tp.JSON.CPUPerGiB, tp.Compressed.CPUPerGiB = median(jsonCPU), median(zCPU)
	if len(relayCPU) > 0 {
		tp.RelayCPUPerGiB, tp.CPUOverRelay = median(relayCPU), median(overRelay)
		tp.CPUOverRelayRange = [2]float64{slices.Min(overRelay), slices.Max(overRelay)}
		tp.JSON.CPUOverRelay = median(jsonOverRelay)
	}
	tp.Ratio = tp.ServerMBps / tp.RawMBps
	tp.RelayRatio = tp.RelayMBps / tp.RawMBps
	if tp.PtyBytes > 0 {
		tp.WirePerByte = float64(tp.WireBytes) / float64(tp.PtyBytes)
		tp.JSON.EscapeOverhead = float64(tp.JSON.DataBytes)/float64(tp.PtyBytes) - 1
		tp.JSON.WirePerByte = float64(tp.JSON.WireBytes) / float64(tp.PtyBytes)
		tp.Compressed.WirePerByte = float64(tp.Compressed.WireBytes) / float64(tp.PtyBytes)
	}
	res.Throughput = tp
	return nil
}

// startPeer starts what the server is measured against besides the raw
// pty: ttyd when the options name it, else the bench's relay (a process of
// its own when the options have a RelayCommand).
func (rn *runner) startPeer(ctx context.Context) (*relay, error) {
	switch {
	case rn.o.TTYD != "":
		return startTTYD(ctx, rn.o.TTYD, rn.raw, rn.o.Progress)
	case len(rn.o.RelayCommand) > 0:
		return startRelayProcess(ctx, rn.o.RelayCommand, rn.raw, rn.o.Progress)
	}
	return startRelay(rn.raw)
}

// rawRun cats the workload in a raw pty; it returns the time, this
// process's CPU seconds and the bytes the pty delivered.
func (rn *runner) rawRun(times int, payload int64) (time.Duration, float64, int64, error) {
	r, err := startRaw(rn.raw)
	if err != nil {
		return 0, 0, 0, err
	}
	defer r.close()
	if err := r.sync(20 * time.Second); err != nil {
		return 0, 0, 0, err
	}
	m := newMarker()
	self := process{}
	cpu0, _ := self.cpu()
	t0 := time.Now()
	if err := r.write(m.catCommand(rn.work.path, times)); err != nil {
		return 0, 0, 0, err
	}
	n, err := r.readUntil(newScanner(m.text()), time.Now().Add(timeoutFor(payload)))
	el := time.Since(t0)
	cpu1, _ := self.cpu()
	return el, cpu1 - cpu0, n, err
}

// serverRunResult is one run of the workload through the server.
type serverRunResult struct {
	elapsed time.Duration
	cpu     float64 // server CPU seconds
	wire    int64   // bytes the client read from its TCP connection
	stats   streamStats
	deflate bool // permessage-deflate was negotiated
}

// serverRun cats the workload in a new terminal, read by one client that
// scans frames without decoding them (the server's cost, not a client's).
func (rn *runner) serverRun(ctx context.Context, times int, payload int64, mode wireMode) (serverRunResult, error) {
	c, err := dial(ctx, rn.wsURL, rn.o.Token, "bench-throughput", mode)
	if err != nil {
		return serverRunResult{}, err
	}
	uri, err := c.createTerminal(ctx, "throughput-"+strconv.FormatInt(time.Now().UnixNano()%1e9, 36))
	if err == nil {
		err = rn.syncServer(ctx, c, uri)
	}
	if err != nil {
		c.close()
		return serverRunResult{}, err
	}
	defer rn.closeTerminal(c, uri)
	m := newMarker()
	r := serverRunResult{deflate: c.deflate}
	rctx, cancel := context.WithTimeout(ctx, timeoutFor(payload))
	defer cancel()
	cpu0, _ := rn.proc.cpu()
	wire0 := c.wire.Load()
	t0 := time.Now()
	err = c.input(rctx, uri, m.catCommand(rn.work.path, times))
	if err == nil {
		err = c.readUntil(rctx, newScanner(m.text()), &r.stats)
	}
	r.elapsed = time.Since(t0)
	cpu1, _ := rn.proc.cpu()
	r.cpu, r.wire = cpu1-cpu0, c.wire.Load()-wire0
	return r, err
}

// median of xs (not empty); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	return (xs[(n-1)/2] + xs[n/2]) / 2
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// fanout: the slowest of N viewers of one terminal vs a lone one. Each
// viewer is a connection of its own, read by a goroutine of its own that
// decodes every frame as a client must. The first viewer created the
// terminal and holds its claim (the one the pty is paced by).
func (rn *runner) fanout(ctx context.Context, res *Result) error {
	p := rn.o.Plan
	times := rn.work.times(p.FanoutSize)
	payload := rn.work.chunk * int64(times)
	fo := &Fanout{Subscribers: p.Subscribers, Bytes: payload}

	// A viewer that falls behind skips ahead to the screen (skips); one
	// that cannot is evicted.
	run := func(subs int) (slowest time.Duration, evicted int, skips []skipCount, err error) {
		c, uri, err := rn.newTerminal(ctx, fmt.Sprintf("fanout%d", subs))
		if err != nil {
			return 0, 0, nil, err
		}
		defer rn.closeTerminal(c, uri)
		all := []*client{c}
		for i := 1; i < subs; i++ {
			s, err := rn.dial(ctx, fmt.Sprintf("bench-sub-%d", i))
			if err != nil {
				return 0, 0, nil, err
			}
			defer s.close()
			if err := s.subscribe(ctx, uri); err != nil {
				return 0, 0, nil, err
			}
			all = append(all, s)
		}
		m := newMarker()
		rctx, cancel := context.WithTimeout(ctx, timeoutFor(payload*int64(subs)))
		defer cancel()
		var wg sync.WaitGroup
		ends := make([]time.Duration, len(all))
		errs := make([]error, len(all))
		skips = make([]skipCount, len(all))
		t0 := time.Now()
		if err := c.input(rctx, uri, m.catCommand(rn.work.path, times)); err != nil {
			return 0, 0, nil, err
		}
		for i, s := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.readDecoded(rctx, newScanner(m.text()), &skips[i])
				ends[i] = time.Since(t0)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			switch {
			case errors.Is(err, errEvicted):
				evicted++
			case err != nil:
				return 0, evicted, nil, err
			default:
				slowest = max(slowest, ends[i])
			}
		}
		return slowest, evicted, skips, nil
	}
	single, _, _, err := run(1)
	if err != nil {
		return err
	}
	multi, evicted, skips, err := run(p.Subscribers)
	if err != nil {
		return err
	}
	fo.SingleMBps, fo.SlowestMBps, fo.Evicted = mbps(payload, single), mbps(payload, multi), evicted
	for _, s := range skips {
		if s.times > 0 {
			fo.Skipped++
			fo.SkippedBytes += s.bytes
		}
	}
	fo.Ratio = fo.SlowestMBps / fo.SingleMBps
	if evicted > 0 {
		fo.Ratio = 0
	}
	rn.logf("fanout: single %.0f MB/s, slowest of %d %.0f MB/s, %d evicted, %d skipped ahead (%s)", fo.SingleMBps, p.Subscribers, fo.SlowestMBps,
		evicted, fo.Skipped, human(fo.SkippedBytes))
	res.Fanout = fo
	return nil
}
