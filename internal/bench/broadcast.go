package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// The broadcast row: one terminal printing a build log at a steady rate,
// its holder (the owner, who created it) and an audience of viewers on
// viewer share links, each a WebSocket of its own asking for binary data
// messages as the browser does, read by a goroutine that counts the bytes
// and parses each message's header (no emulator: a thousand fit in one
// process), in a process of their own (audience.go) so that the holder's
// reader is alone in the bench's. The viewers join in a burst while the log runs; once
// all are in, the program prints a check marker and every viewer sums the
// output from there to the end (CRC-32C), which must equal the holder's.
//
// Lag: every line batch the program prints ends with a marker @@M<n>@@; a
// viewer's lag for marker n is when it saw it minus when the holder saw it.
// The holder's echo (a byte typed into the terminal, which the tty echoes
// while the program prints) is sampled with the log running and nobody
// watching ("alone"), then with the audience.

// Broadcast is the broadcast row's headline, the JSON line's "broadcast".
type Broadcast struct {
	Viewers int `json:"viewers"`
	// LagP99Ms is the 99th percentile over viewers and markers, once every
	// viewer is in, of how long after the holder a viewer saw a marker.
	LagP99Ms float64 `json:"lagP99Ms"`
	Evicted  int     `json:"evicted"`
	// ServerCPUCores is the server's CPU seconds per second while the
	// audience watched; ServerRSSMiB its highest RSS from the first join on.
	ServerCPUCores float64 `json:"serverCpuCores"`
	ServerRSSMiB   float64 `json:"serverRssMiB"`
	// HolderEchoP99Ms is the holder's echo with the audience watching,
	// HolderEchoP99AloneMs with the same log and nobody watching.
	HolderEchoP99Ms      float64 `json:"holderEchoP99Ms"`
	HolderEchoP99AloneMs float64 `json:"holderEchoP99AloneMs"`
	// JoinFirstScreenP99Ms: from a joiner's dial to the subscribe answer
	// that carries its first screen, during the burst.
	JoinFirstScreenP99Ms float64 `json:"joinFirstScreenP99Ms"`
}

// BroadcastDetail is the rest of what the broadcast row measured.
type BroadcastDetail struct {
	RateBytesPerSec int     `json:"rateBytesPerSec"` // the program's pace
	Seconds         float64 `json:"seconds"`         // watched by everyone, after the burst
	JoinSeconds     float64 `json:"joinSeconds"`     // the burst: first dial to last join
	Links           int     `json:"links"`           // viewer share links used
	Lag             Latency `json:"lag"`
	LagBurst        Latency `json:"lagBurst"` // markers during the burst, of those already in
	JoinFirstScreen Latency `json:"joinFirstScreen"`
	HolderEcho      Latency `json:"holderEcho"`
	HolderEchoAlone Latency `json:"holderEchoAlone"`
	EchoSamples     int     `json:"echoSamples"`
	Skipped         int     `json:"skipped"` // viewers that skipped ahead
	// Checked viewers summed the output from the check marker to the end;
	// Mismatched of them got other bytes than the holder.
	Checked    int     `json:"checked"`
	Mismatched int     `json:"mismatched"`
	Bytes      int64   `json:"bytes"`      // output from the check marker to the end
	Messages   int64   `json:"messages"`   // binary data messages the viewers read in all
	Envelopes  int64   `json:"envelopes"`  // output envelopes the holder read
	FDLimit    int     `json:"fdLimit"`    // RLIMIT_NOFILE after raising it
	BenchCores float64 `json:"benchCores"` // this process and the audience's (audience.go)
	// JoinFailed viewers could not join; Errors are what failed (not
	// evictions), the first few.
	JoinFailed int      `json:"joinFailed"`
	Errors     []string `json:"errors,omitempty"`
}

// Default broadcast load: the promise in README.md.
const (
	DefaultBroadcastViewers = 1000
	DefaultBroadcastRate    = 200_000
	// broadcastPerLink is how many viewers share one link: a link holds
	// at most 64 connections and paces its costly requests (a join is
	// two: initialize and subscribe) at a burst of 40.
	broadcastPerLink = 20
	// broadcastTick is the program's pace: one batch of lines and a marker.
	broadcastTick = 50 * time.Millisecond
)

// Broadcast targets (README.md, "Share a terminal with an audience").
const (
	TargetBroadcastLagP99   = 1000.0 // ms
	TargetBroadcastCPU      = 1.0    // cores
	TargetBroadcastRSS      = 300.0  // MiB
	TargetBroadcastEchoOver = 1.0    // ms over the lone holder's p99
	TargetBroadcastJoinP99  = 2000.0 // ms
)

// raiseNoFile raises this process's RLIMIT_NOFILE to its hard limit (a
// server the bench starts inherits it) and returns the limit now.
func raiseNoFile() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	}
	return int(min(l.Cur, 1<<30))
}

// broadcastScript is the build log: batches of compiler lines every tick,
// each batch ending with its marker, paced on the clock (bash's
// EPOCHREALTIME) so that the rate holds however long a batch takes; the
// check marker once the file check exists, the end marker once stop does.
// Between batches it echoes what the holder types, as an interactive
// program does (the tty's own echo is off).
const broadcastScript = `dir=$1; lines=$2
block=$(i=0; while [ $i -lt $lines ]; do printf 'cc -O2 -Wall -Iinclude -c src/subsystem/unit_%%05d.c -o build/obj/unit_%%05d.o   [ %%3d%%%% ]\n' $i $i $((i%%100)); i=$((i+1)); done)
stty -echo -icanon
start=${EPOCHREALTIME/./}; n=0; checked=0
while [ ! -e "$dir/stop" ]; do
  if [ $checked = 0 ] && [ -e "$dir/check" ]; then printf '@@CH''ECK@@'; checked=1; fi
  printf '%%s\n@@M%%d@@\n' "$block" $n
  n=$((n+1))
  while d=$(( start + n*%d - ${EPOCHREALTIME/./} )); [ $d -gt 0 ]; do
    printf -v t '%%d.%%06d' $((d/1000000)) $((d%%1000000)); c=; read -r -s -n 1 -t "$t" c
    if [ -n "$c" ]; then printf '%%s' "$c"; fi
  done
done
stty echo icanon
printf '@@E''ND@@\n'
`

var (
	markCheck = []byte("@@CHECK@@")
	markEnd   = []byte("@@END@@")
	markTick  = []byte("@@M")
)

// markers finds the tick markers in a stream of data that may split them.
type markers struct {
	tail []byte
	last int // the last marker seen; -1 before any
	buf  []byte
}

// feed calls seen with each new marker's number in b.
func (m *markers) feed(b []byte, seen func(n int)) {
	s := b
	if len(m.tail) > 0 {
		m.buf = append(append(m.buf[:0], m.tail...), b[:min(len(b), 24)]...)
		m.scan(m.buf, seen)
	}
	m.scan(s, seen)
	k := min(len(b), 23)
	m.tail = append(m.tail[:0], b[len(b)-k:]...)
}

func (m *markers) scan(s []byte, seen func(n int)) {
	for {
		i := bytes.Index(s, markTick)
		if i < 0 {
			return
		}
		s = s[i+len(markTick):]
		j := bytes.Index(s[:min(len(s), 12)], []byte("@@"))
		if j <= 0 {
			continue
		}
		n, err := strconv.Atoi(string(s[:j]))
		if err == nil && n > m.last {
			m.last = n
			seen(n)
		}
	}
}

// checkSum sums a stream's data from the check marker to the end marker
// (both included), which may be split anywhere.
type checkSum struct {
	state   int // 0 before the check marker, 1 summing, 2 done
	pending []byte
	sum     uint32
	n       int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (c *checkSum) add(b []byte) {
	c.sum = crc32.Update(c.sum, castagnoli, b)
	c.n += int64(len(b))
}

// feed takes the next data; it reports whether the end marker has come.
func (c *checkSum) feed(b []byte) bool {
	for len(b) > 0 && c.state < 2 {
		mark := markCheck
		if c.state == 1 {
			mark = markEnd
		}
		k := len(mark) - 1
		// The pending bytes (at most k) and the new ones.
		joined := b
		if len(c.pending) > 0 {
			joined = append(c.pending, b...) // pending has room only for k bytes: a small copy
		}
		i := bytes.Index(joined, mark)
		switch {
		case i < 0 && c.state == 0:
			c.pending = append(c.pending[:0:0], joined[max(0, len(joined)-k):]...)
			return false
		case i < 0:
			cut := max(0, len(joined)-k)
			c.add(joined[:cut])
			c.pending = append(c.pending[:0:0], joined[cut:]...)
			return false
		case c.state == 0:
			c.state, c.pending = 1, nil
			c.add(mark)
			b = joined[i+len(mark):]
		default:
			c.add(joined[:i+len(mark)])
			c.state, c.pending = 2, nil
		}
	}
	return c.state == 2
}

// broadcastViewer is one viewer's connection and what it saw.
type broadcastViewer struct {
	ws       *websocket.Conn
	joined   time.Duration // from its dial to its subscribe answer
	joinedAt time.Time
	seen     []int64 // unix ns when it saw marker n; 0: not live
	sum      checkSum
	messages int64
	skipped  bool
	evicted  bool
	err      error
}

// broadcast runs the row.
func (rn *runner) broadcast(ctx context.Context, res *Result) error {
	p := rn.o.Plan
	n := p.BroadcastViewers
	if n <= 0 {
		n = DefaultBroadcastViewers
	}
	rate := p.BroadcastRate
	if rate <= 0 {
		rate = DefaultBroadcastRate
	}
	watch := p.BroadcastTime
	if watch <= 0 {
		watch = 20 * time.Second
	}
	burst := p.BroadcastJoin
	if burst <= 0 {
		burst = 10 * time.Second
	}
	d := &BroadcastDetail{RateBytesPerSec: rate, FDLimit: raiseNoFile()}
	b := &Broadcast{Viewers: n}
	if need := 2*n + 256; d.FDLimit < need {
		return fmt.Errorf("%d viewers need about %d file descriptors in this process (a socket each, and as many in the server on loopback): the hard limit is %d (raise it: ulimit -Hn, or limits.conf)",
			n, need, d.FDLimit)
	}

	// A server of the bench's own with a token, so that share links are
	// viewers (the bench's main server has no authentication).
	h := &hostileRun{rn: rn}
	proc := rn.proc
	wsURL, token := rn.wsURL, rn.o.Token
	if rn.o.Server == "" {
		stop, _, err := h.startServer(ctx)
		if err != nil {
			return err
		}
		defer stop()
		proc, wsURL, token = h.proc, h.wsURL, h.token
	}
	holder, err := dial(ctx, wsURL, token, "bench-broadcast-holder", wireMode{})
	if err != nil {
		return err
	}
	defer holder.close()
	uri := ahp.TerminalURI("broadcast-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36))
	if _, err := holder.call(ctx, ahp.MethodCreateTerminal, map[string]any{
		"channel": uri, "claim": map[string]any{"kind": "client", "clientId": holder.id}, "cols": 120, "rows": 40}, nil); err != nil {
		return fmt.Errorf("createTerminal: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := dial(cctx, wsURL, token, "bench-broadcast-dispose", wireMode{}); err == nil {
			_ = c.dispose(cctx, uri)
			c.close()
		}
	}()
	if err := holder.subscribe(ctx, uri); err != nil {
		return err
	}
	if err := rn.syncServer(ctx, holder, uri); err != nil {
		return err
	}
	script := filepath.Join(rn.dir, "broadcast.sh")
	perTick := int(int64(rate) * int64(broadcastTick) / int64(time.Second))
	lines := max(1, perTick/84) // a line is 83 bytes and a CR
	if err := os.WriteFile(script, fmt.Appendf(nil, broadcastScript, broadcastTick.Microseconds()), 0o644); err != nil {
		return err
	}
	var links []string
	for i := 0; i < (n+broadcastPerLink-1)/broadcastPerLink; i++ {
		raw, err := holder.call(ctx, ext.MethodShareCreate, map[string]any{"terminal": uri, "role": "viewer", "label": fmt.Sprintf("audience %d", i+1)}, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", ext.MethodShareCreate, err)
		}
		var info ext.ShareInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return err
		}
		_, tok, ok := strings.Cut(info.URL, "#share=")
		if !ok {
			return fmt.Errorf("%s: no token in %q", ext.MethodShareCreate, info.URL)
		}
		links = append(links, tok)
	}
	d.Links = len(links)

	// The holder reads in a goroutine of its own: markers, echoes, the sum.
	hr := &holderReader{c: holder, echo: make(chan struct{}, 1)}
	hr.reset()
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { defer readers.Done(); hr.run(hctx) }()
	defer readers.Wait()
	defer hcancel()

	// The log with nobody watching: the lone holder's echo.
	run := func(name string) (string, error) {
		dir := filepath.Join(rn.dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := holder.input(ctx, uri, fmt.Sprintf("bash '%s' '%s' %d\r", script, dir, lines)); err != nil {
			return "", err
		}
		// Keys typed before the program reads them would wait for the shell.
		return dir, hr.waitMarker(ctx)
	}
	echoes := max(50, p.EchoSamples/2)
	d.EchoSamples = echoes
	aloneDir, err := run("alone")
	if err != nil {
		return err
	}
	alone, err := hr.echoes(ctx, holder, uri, echoes)
	if err != nil {
		return fmt.Errorf("holder echo, alone: %w", err)
	}
	end := hr.ended.Load()
	if err := os.WriteFile(filepath.Join(aloneDir, "stop"), nil, 0o644); err != nil {
		return err
	}
	if err := hr.waitEnd(ctx, end); err != nil {
		return err
	}
	d.HolderEchoAlone = percentiles(alone)
	rn.logf("broadcast: the lone holder's echo p50 %.3f p99 %.3f ms", d.HolderEchoAlone.P50, d.HolderEchoAlone.P99)

	// The log again; the audience joins in a burst while it runs.
	hr.reset()
	ticks := int((time.Minute + burst + watch) / broadcastTick)
	hr.setTicks(ticks)
	mainDir, err := run("main")
	if err != nil {
		return err
	}
	stopFile := filepath.Join(mainDir, "stop")
	defer os.WriteFile(stopFile, nil, 0o644) //nolint:errcheck // ends the program on an early return
	bench0, _ := process{}.cpu()
	var rssPeak atomic.Int64
	sampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if r, err := proc.rss(); err == nil && r > rssPeak.Load() {
				rssPeak.Store(r)
			}
			select {
			case <-sampling:
				return
			case <-t.C:
			}
		}
	}()
	defer func() { close(sampling); sampler.Wait() }()

	// The audience, in a process of its own when the bench can start one
	// (audience.go): it joins in the burst and reports when all are in.
	t0 := time.Now()
	aud, err := startAudience(ctx, rn.o.RelayCommand, rn.o.Progress, audiencePlan{
		WSURL: wsURL, URI: string(uri), Links: links, PerLink: broadcastPerLink, Viewers: n, Burst: burst, Ticks: ticks})
	if err != nil {
		return err
	}
	defer aud.stop()
	line, err := aud.next(ctx)
	if err != nil {
		return err
	}
	if line.Joined == nil {
		return errors.New("audience: no joined line")
	}
	d.JoinSeconds = line.Joined.Seconds
	d.JoinFirstScreen = percentiles(line.Joined.Firsts)
	rn.logf("broadcast: %d viewers joined in %.1f s, first screen p50 %.0f p99 %.0f ms", len(line.Joined.Firsts), d.JoinSeconds, d.JoinFirstScreen.P50, d.JoinFirstScreen.P99)

	// Everyone is in: the check marker, then the audience watches.
	checkTick := hr.lastMarker()
	cpu1, _ := proc.cpu()
	w0 := time.Now()
	if err := os.WriteFile(filepath.Join(mainDir, "check"), nil, 0o644); err != nil {
		return err
	}
	under, err := hr.echoesFor(ctx, holder, uri, echoes, watch)
	if err != nil {
		// Reported with the rest: what the viewers saw still counts.
		d.Errors = append(d.Errors, "holder echo, watched: "+err.Error())
	}
	if rest := time.Until(w0.Add(watch)); rest > 0 {
		select {
		case <-time.After(rest):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	cpu2, _ := proc.cpu()
	wall := time.Since(w0)
	end = hr.ended.Load()
	if err := os.WriteFile(stopFile, nil, 0o644); err != nil {
		return err
	}
	if err := hr.waitEnd(ctx, end); err != nil {
		return err
	}
	ae := audienceEnd{HolderSeen: hr.seenCopy(), CheckTick: checkTick}
	hr.mu.Lock()
	ae.Sum, ae.Bytes = hr.sum.sum, hr.sum.n
	hr.mu.Unlock()
	if err := aud.enc.Encode(ae); err != nil {
		return fmt.Errorf("audience: %w", err)
	}
	if line, err = aud.next(ctx); err != nil {
		return err
	}
	if line.Done == nil {
		return errors.New("audience: no done line")
	}
	ad := line.Done
	bench1, _ := process{}.cpu()
	d.Seconds = wall.Seconds()
	b.ServerCPUCores = (cpu2 - cpu1) / wall.Seconds()
	// The bench's cores: this process's and the audience's, over the run.
	d.BenchCores = (bench1 - bench0 + ad.CPUSeconds) / time.Since(t0).Seconds()
	b.ServerRSSMiB = float64(rssPeak.Load()) / (1 << 20)
	d.HolderEcho = percentiles(under)
	b.HolderEchoP99Ms, b.HolderEchoP99AloneMs = d.HolderEcho.P99, d.HolderEchoAlone.P99
	b.JoinFirstScreenP99Ms = d.JoinFirstScreen.P99

	b.Evicted, d.Skipped, d.Checked, d.Mismatched, d.Messages = ad.Evicted, ad.Skipped, ad.Checked, ad.Mismatched, ad.Messages
	joinErrs := ad.JoinFailed
	for _, e := range ad.Errors {
		if len(d.Errors) < 8 {
			d.Errors = append(d.Errors, e)
		}
	}
	d.Bytes, d.Envelopes = hr.sum.n, hr.envelopes.Load()
	d.Lag, d.LagBurst = ad.Lag, ad.LagBurst
	b.LagP99Ms = d.Lag.P99
	res.Broadcast, res.BroadcastDetail = b, d
	rn.logf("broadcast: %d viewers at %s/s: lag p50 %.0f p99 %.0f max %.0f ms, %d evicted, %d skipped, server %.2f cores, RSS %.0f MiB, echo p99 %.3f (alone %.3f) ms, %d of %d checked viewers match",
		n, human(int64(rate)), d.Lag.P50, d.Lag.P99, d.Lag.Max, b.Evicted, d.Skipped, b.ServerCPUCores, b.ServerRSSMiB, b.HolderEchoP99Ms, b.HolderEchoP99AloneMs,
		d.Checked-d.Mismatched, d.Checked)
	d.JoinFailed = joinErrs
	if len(d.Errors) > 0 {
		return fmt.Errorf("%d viewers could not join; %s", joinErrs, strings.Join(d.Errors, "; "))
	}
	return nil
}

// join dials viewer i on its link and subscribes (a different client
// address each, as an audience has: the server counts share-link
// connections per address).
func (v *broadcastViewer) join(ctx context.Context, wsURL, link string, i int, uri string, joins *sync.WaitGroup) {
	defer joins.Done()
	t0 := time.Now()
	c, err := dial(ctx, wsURL, link, fmt.Sprintf("bench-viewer-%d", i), wireMode{forwardedFor: fmt.Sprintf("10.%d.%d.%d", 1+i>>16, i>>8&255, i&255)})
	if err != nil {
		v.err = err
		return
	}
	if err := c.subscribe(ctx, uri); err != nil {
		c.close()
		v.err = err
		return
	}
	v.ws, v.joined, v.joinedAt = c.ws, time.Since(t0), time.Now()
}

// watch reads the viewer's messages until the end marker: binary data
// messages by their header and data; of the text frames only a skip notice
// and the close matter.
func (v *broadcastViewer) watch(ctx context.Context) {
	mk := markers{last: -1}
	var buf bytes.Buffer
	for {
		typ, r, err := v.ws.Reader(ctx)
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) && ce.Code == 4001 {
				v.evicted = true
			}
			v.err = err
			return
		}
		frame := buf.Bytes()
		now := time.Now().UnixNano()
		if typ != websocket.MessageBinary {
			if bytes.Contains(frame[:min(len(frame), 64)], []byte(ext.NotifySkipped)) {
				v.skipped = true
			}
			continue
		}
		v.messages++
		if len(frame) < 4 {
			v.err = errors.New("binary message shorter than its header length")
			return
		}
		hl := 4 + int(uint32(frame[0])<<24|uint32(frame[1])<<16|uint32(frame[2])<<8|uint32(frame[3]))
		if hl > len(frame) {
			v.err = errors.New("binary message shorter than its header")
			return
		}
		if _, ok := ahp.DecodeDataFrame(frame[4:hl]); !ok {
			v.err = errors.New("binary message header does not decode")
			return
		}
		data := frame[hl:]
		mk.feed(data, func(n int) {
			if n < len(v.seen) {
				v.seen[n] = now
			}
		})
		if v.sum.feed(data) {
			return
		}
	}
}

func (v *broadcastViewer) close() {
	if v.ws != nil {
		_ = v.ws.CloseNow()
	}
}

// holderReader reads the holder's connection: the markers (when the holder
// saw each), its echoes, and the output's sum.
type holderReader struct {
	c         *client
	echo      chan struct{}
	echoByte  atomic.Int32
	mu        sync.Mutex
	markers   markers
	seen      []int64
	sum       checkSum
	end       *scanner
	ended     atomic.Int64 // end markers seen
	envelopes atomic.Int64
	err       error
}

func (h *holderReader) setTicks(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = make([]int64, n)
}

// reset starts a new run of the program: markers and the sum anew.
func (h *holderReader) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.markers, h.sum, h.seen, h.end = markers{last: -1}, checkSum{}, nil, newScanner(string(markEnd))
}

func (h *holderReader) lastMarker() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.markers.last
}

func (h *holderReader) seenCopy() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

func (h *holderReader) run(ctx context.Context) {
	for {
		frame, err := h.c.read(ctx)
		if err != nil {
			h.mu.Lock()
			h.err = err
			h.mu.Unlock()
			return
		}
		now := time.Now().UnixNano()
		data := h.c.dataOf(frame)
		if data == nil {
			continue
		}
		h.envelopes.Add(1)
		if b := byte(h.echoByte.Load()); b != 0 && bytes.IndexByte(data, b) >= 0 {
			h.echoByte.Store(0)
			h.echo <- struct{}{}
		}
		h.mu.Lock()
		h.markers.feed(data, func(n int) {
			if n < len(h.seen) {
				h.seen[n] = now
			}
		})
		if h.sum.state < 2 {
			h.sum.feed(data)
		}
		if h.end.feed(data) {
			h.ended.Add(1)
		}
		h.mu.Unlock()
	}
}

// waitMarker waits for the program's first marker: it then reads the keys.
func (h *holderReader) waitMarker(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for h.lastMarker() < 0 {
		if time.Now().After(deadline) {
			return errors.New("the build log did not start within 30 s")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// waitEnd waits until the program's end marker has come after was.
func (h *holderReader) waitEnd(ctx context.Context, was int64) error {
	deadline := time.Now().Add(30 * time.Second)
	for h.ended.Load() <= was {
		if time.Now().After(deadline) {
			return errors.New("the build log did not end within 30 s of its stop")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// echoByteAt is the byte typed for echo sample i: capitals the log never
// prints (it prints M only in markers, which are never typed).
func echoByteAt(i int) byte { return "QZXVKJ"[i%6] }

// echoes takes n echo samples of the holder, one after the other.
func (h *holderReader) echoes(ctx context.Context, c *client, uri string, n int) ([]time.Duration, error) {
	return h.echoesFor(ctx, c, uri, n, 0)
}

// echoesFor takes n echo samples spread over span (0: back to back).
func (h *holderReader) echoesFor(ctx context.Context, c *client, uri string, n int, span time.Duration) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	t0 := time.Now()
	for i := range n {
		if span > 0 {
			if wait := time.Until(t0.Add(span * time.Duration(i) / time.Duration(n))); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		b := echoByteAt(i)
		h.echoByte.Store(int32(b))
		s := time.Now()
		if err := c.input(ctx, uri, string(b)); err != nil {
			return nil, err
		}
		select {
		case <-h.echo:
			out = append(out, time.Since(s))
		case <-time.After(10 * time.Second):
			return nil, errors.New("no echo within 10 s")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return out, nil
}
