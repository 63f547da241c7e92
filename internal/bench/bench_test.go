package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/terminals/shellint"
)

// serveEnv makes the test binary a stand-in for `termhost serve` (the
// bench package cannot build the command): with ServeFlags it serves on a
// loopback port and prints the line termhost serve prints.
const serveEnv = "TERMHOST_BENCH_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(serveForTest(os.Args[1:]))
	}
	if os.Getenv(RelayEnv) == "1" {
		os.Exit(RelayMain(os.Stdout))
	}
	if os.Getenv(AudienceEnv) == "1" {
		os.Exit(AudienceMain(os.Stdin, os.Stdout))
	}
	goleak.VerifyTestMain(m)
}

func serveForTest(args []string) int {
	if slices.Contains(args, "--auth=proxy") {
		return serveHostileForTest(args)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	shell, cwd := fs.String("shell", "", ""), fs.String("cwd", "", "")
	integration, compression := fs.String("shell-integration", "on", ""), fs.String("compression", "auto", "")
	scrollback := fs.Int64("scrollback", 1<<20, "")
	for _, ignored := range []string{"listen", "auth", "max-terminals", "state-dir", "log-level"} {
		fs.String(ignored, "", "")
	}
	if err := fs.Parse(args); err != nil || *compression != "on" {
		fmt.Fprintln(os.Stderr, "serve stand-in: bad flags", args)
		return 2
	}
	stopped := make(chan os.Signal, 1)
	signal.Notify(stopped, syscall.SIGTERM)
	u, stop, err := serveLoopback(*shell, *cwd, os.Environ(), *integration == "on", *scrollback)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("termhost is running at %s/ (no authentication: loopback only)\n", u)
	<-stopped
	stop()
	return 0
}

// serveHostileForTest is the stand-in for the `termhost serve` the hostile
// row starts (HostileServeFlags): it prints the login line termhost serve
// prints with a token.
func serveHostileForTest(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	shell, cwd, tokenFile := fs.String("shell", "", ""), fs.String("cwd", "", ""), fs.String("token-file", "", "")
	integration, header := fs.String("shell-integration", "on", ""), fs.String("identity-header", "", "")
	scrollback := fs.Int64("scrollback", 1<<20, "")
	var proxies []string
	fs.Func("trusted-proxy", "", func(s string) error { proxies = append(proxies, s); return nil })
	for _, ignored := range []string{"listen", "auth", "viewers", "max-terminals", "state-dir", "log-level"} {
		fs.String(ignored, "", "")
	}
	err := fs.Parse(args)
	var tok []byte
	if err == nil {
		tok, err = os.ReadFile(*tokenFile)
	}
	if err != nil || *header != HostileIdentityHeader || len(proxies) == 0 || len(tok) == 0 {
		fmt.Fprintln(os.Stderr, "serve stand-in: bad flags", args, err)
		return 2
	}
	stopped := make(chan os.Signal, 1)
	signal.Notify(stopped, syscall.SIGTERM)
	u, stop, err := serveHostileLoopback(*shell, *cwd, os.Environ(), *integration == "on", *scrollback, strings.TrimSpace(string(tok)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("termhost is running. Open this login link to sign in as the owner (…):\n\n    %s/#token=%s\n\n", u, strings.TrimSpace(string(tok)))
	<-stopped
	stop()
	return 0
}

// tinyPlan is QuickPlan cut down so the test is fast even under -race.
var tinyPlan = Plan{Size: 1 << 20, Reps: 1, EchoSamples: 20, IdleCounts: []int{2, 4}, Subscribers: 3,
	FanoutSize: 512 << 10, StartSamples: 2, BoundedSize: 2 << 20, Chunk: 256 << 10,
	HostileN: 2, HostileSamples: 20, HostileTime: 300 * time.Millisecond}

// skipProcessWhenShort leaves the server-process half of a run to make
// test: the in-process half covers the same measurements, and make check's
// inner loop stays short.
func skipProcessWhenShort(t *testing.T, command []string) {
	t.Helper()
	if testing.Short() && command != nil {
		t.Skip("-short: the run against a server process of its own is make test's (the in-process run covers the same steps)")
	}
}

// TestRun runs every measurement of `termhost bench --quick` with small
// sizes against a server process of its own (as termhost bench does) and
// against one in this process (--in-process), so the benchmark cannot rot.
// It checks that each measurement produced a result, not its numbers. The
// hostile and broadcast rows, which start a server of their own, have their
// own tests.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name           string
		command, relay []string
		integration    bool
	}{
		{"server process/integration on", []string{"/usr/bin/env", serveEnv + "=1", os.Args[0]}, []string{os.Args[0]}, true},
		{"in process/integration off", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			skipProcessWhenShort(t, tc.command)
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // generous: CI machines get busy
			defer cancel()
			only := slices.DeleteFunc(slices.Clone(Steps), func(s string) bool { return s == "hostile" || s == "broadcast" })
			res, err := Run(ctx, Options{ServerCommand: tc.command, RelayCommand: tc.relay, ShellIntegration: tc.integration, Plan: tinyPlan,
				Progress: t.Output(), Only: only})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(res.Errors) > 0 {
				t.Fatalf("measurements failed: %v", res.Errors)
			}
			if res.Throughput == nil || res.Echo == nil || res.Startup == nil || res.Fanout == nil || len(res.Idle) != 2 || res.Bounded == nil {
				t.Fatalf("missing measurements: %s", res.JSON())
			}
			tp := res.Throughput
			if tp.RawMBps <= 0 || tp.ServerMBps <= 0 || tp.RelayMBps <= 0 || tp.RelayRatio <= 0 || tp.DataBytes < tp.Bytes || tp.WireBytes <= tp.DataBytes {
				t.Errorf("throughput = %+v", *tp)
			}
			if (tp.RelayCPUPerGiB > 0) != (tc.relay != nil) {
				t.Errorf("relay CPU %.2f s/GiB: want a figure exactly when the relay is a process of its own", tp.RelayCPUPerGiB)
			}
			if r, lo, hi := tp.CPUOverRelay, tp.CPUOverRelayRange[0], tp.CPUOverRelayRange[1]; (r > 0) != (tc.relay != nil) || r < lo || r > hi {
				t.Errorf("server CPU ÷ relay CPU %.2f (rounds %.2f–%.2f): want a median of the rounds exactly when the relay's CPU is known", r, lo, hi)
			}
			// An AHP client gets JSON: the escapes cost wire bytes.
			if j := tp.JSON; j == nil || j.MBps <= 0 || j.DataBytes <= tp.DataBytes || j.WireBytes <= tp.WireBytes {
				t.Errorf("JSON client = %+v, want more bytes than the binary client's %d", j, tp.WireBytes)
			}
			// The bench's server negotiates deflate, and mixed text compresses.
			if c := tp.Compressed; c == nil || !c.Negotiated || c.WireBytes <= 0 || c.WireBytes >= tp.WireBytes {
				t.Errorf("compressed = %+v, want negotiated with fewer wire bytes than %d", c, tp.WireBytes)
			}
			if (res.ServerPID != 0) != (tc.command != nil) || res.Idle[0].InProcess != (tc.command == nil) {
				t.Errorf("server %q pid %d, idle %+v: want a process of its own %v", res.Server, res.ServerPID, res.Idle, tc.command != nil)
			}
			if res.Startup.Integrated != tc.integration {
				t.Errorf("startup integrated = %v, want %v", res.Startup.Integrated, tc.integration)
			}
			if res.Echo.Server.P50 <= 0 || res.Echo.Raw.P50 <= 0 || res.Echo.Peer.P50 <= 0 || res.Fanout.Evicted != 0 {
				t.Errorf("echo = %+v, fanout = %+v", *res.Echo, *res.Fanout)
			}
			// Without Options.TTYD the peer is the relay speaking ttyd's protocol.
			if tp.Peer != relayName || res.Echo.PeerName != relayName {
				t.Errorf("peer %q (throughput), %q (echo): want %q", tp.Peer, res.Echo.PeerName, relayName)
			}
			// The MCP round trip needs the shell integration (run_command).
			wantTargets := 12 // with echo p50 and p99 against the peer
			if tc.relay != nil {
				wantTargets++ // CPU against the relay's process
			}
			if tc.integration {
				wantTargets++
				if m := res.MCP; m == nil || m.Samples == 0 || m.Run.P50 <= 0 || m.BigBytes < tinyPlan.BoundedSize || m.BigText == 0 || int64(m.BigText) >= m.BigBytes {
					t.Errorf("mcp = %+v, want a round trip and %d bytes returned cut", m, tinyPlan.BoundedSize)
				}
			} else if res.MCP != nil {
				t.Errorf("mcp = %+v without shell integration", res.MCP)
			}
			if len(res.Targets) != wantTargets {
				t.Errorf("%d targets, want %d: %+v", len(res.Targets), wantTargets, res.Targets)
			}
			var table bytes.Buffer
			res.WriteTable(&table)
			for _, want := range []string{"throughput", "relay", "CPU s/GiB", "wire bytes per output byte", "an AHP client (JSON", "permessage-deflate", "echo latency", "start-up", "fan-out", "idle RSS", "RSS around", "target"} {
				if !strings.Contains(table.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, table.String())
				}
			}
			var back Result
			if err := json.Unmarshal(res.JSON(), &back); err != nil || bytes.Contains(res.JSON(), []byte("\n")) {
				t.Errorf("JSON line: %v", err)
			}
		})
	}
}

// TestHostile runs the hostile row with N = 2 against a server process of
// its own (the stand-in checks the flags it gets) and one in this process,
// and checks that every attack ran, with figures on both sides and the
// server's RSS; not what the figures are.
func TestHostile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command []string
	}{
		{"server process", []string{"/usr/bin/env", serveEnv + "=1", os.Args[0]}},
		{"in process", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			skipProcessWhenShort(t, tc.command)
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			res, err := Run(ctx, Options{ServerCommand: tc.command, ShellIntegration: true, Plan: tinyPlan, Progress: t.Output(), Only: []string{"hostile"}})
			if err != nil || len(res.Errors) > 0 {
				t.Fatalf("Run: %v %v", err, res.Errors)
			}
			h := res.Hostile
			if h == nil || h.Participants != tinyPlan.HostileN || h.InProcess != (tc.command == nil) || res.Echo != nil || res.Idle != nil {
				t.Fatalf("steps run: %s", res.JSON())
			}
			var names []string
			for _, a := range h.Attacks {
				names = append(names, a.Name)
				if a.Skipped != "" || a.Error != "" || a.What == "" {
					t.Errorf("%s: skipped %q, error %q, what %q", a.Name, a.Skipped, a.Error, a.What)
				}
				if a.QuietSamples < 1 || a.AttackedSamples < 1 || a.QuietSamples > tinyPlan.HostileSamples || a.AttackedSamples > tinyPlan.HostileSamples {
					t.Errorf("%s: %d quiet and %d attacked samples, want 1 to %d each", a.Name, a.QuietSamples, a.AttackedSamples, tinyPlan.HostileSamples)
				}
				if a.Quiet.P50 <= 0 || a.Quiet.P99 < a.Quiet.P50 || a.Attacked.P50 <= 0 || a.Attacked.P99 < a.Attacked.P50 || a.RatioP50 <= 0 || a.RatioP99 <= 0 {
					t.Errorf("%s: echo quiet %+v, attacked %+v, ratios %.2f %.2f", a.Name, a.Quiet, a.Attacked, a.RatioP50, a.RatioP99)
				}
				// Every attacker did something; the RSS is the server's.
				if a.Ops < 1 || a.RSSBefore <= 0 || a.RSSPeak <= 0 {
					t.Errorf("%s: %d operations, RSS %d before, peak %d", a.Name, a.Ops, a.RSSBefore, a.RSSPeak)
				}
			}
			if !slices.Equal(names, Attacks) {
				t.Errorf("attacks %v, want %v", names, Attacks)
			}
			var table bytes.Buffer
			res.WriteTable(&table)
			for _, want := range append([]string{"hostile participants, N = 2", "quiet", "under attack"}, Attacks...) {
				if !strings.Contains(table.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, table.String())
				}
			}
			var back Result
			if err := json.Unmarshal(res.JSON(), &back); err != nil || back.Hostile == nil || len(back.Hostile.Attacks) != len(Attacks) {
				t.Errorf("JSON line: %v, %+v", err, back.Hostile)
			}
		})
	}
}

// TestOnly: --only runs the named steps and no others.
func TestOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Plan: tinyPlan, Only: []string{"idle", "echo"}, Progress: t.Output()})
	if err != nil || len(res.Errors) > 0 {
		t.Fatalf("Run: %v %v", err, res.Errors)
	}
	if len(res.Idle) != 2 || res.Echo == nil || res.Throughput != nil || res.Startup != nil || res.Fanout != nil || res.Bounded != nil || res.MCP != nil {
		t.Fatalf("steps run: %s", res.JSON())
	}
}

// TestDataOf: the frame scanner finds exactly the data string of the
// server's terminal/data envelopes (whatever their escapes) and nothing in
// other frames.
func TestDataOf(t *testing.T) {
	for _, data := range []string{"", "plain", "\x1b[1m\"q\"\\ \r\n ü", `"},"serverSeq":1`} {
		for _, origin := range []*ahp.Origin{nil, {ClientID: "c", ClientSeq: 3}} {
			frame, err := ahp.EncodeEnvelope(ahp.Envelope{Channel: "ahp-terminal:/x", ServerSeq: 77, Origin: origin,
				Action: ahp.Action{Type: ahp.TerminalData, Data: data}}, ahp.Current)
			if err != nil {
				t.Fatal(err)
			}
			want := ahp.AppendString(nil, data)
			if got := dataOf(frame); !bytes.Equal(got, want[1:len(want)-1]) {
				t.Errorf("dataOf(%s) = %q, want %q", frame, got, want[1:len(want)-1])
			}
		}
	}
	input, _ := ahp.EncodeEnvelope(ahp.Envelope{Channel: "ahp-terminal:/x", Action: ahp.Action{Type: ahp.TerminalInput, Data: "x"}}, ahp.Current)
	for _, frame := range [][]byte{input, []byte(`{"jsonrpc":"2.0","id":1,"result":null}`)} {
		if got := dataOf(frame); got != nil {
			t.Errorf("dataOf(%s) = %q, want nil", frame, got)
		}
	}
}

// TestScanner: a marker is found however the stream is cut.
func TestScanner(t *testing.T) {
	stream := "xxxx THBEND0123 yyyy"
	for cut1 := 0; cut1 <= len(stream); cut1++ {
		for cut2 := cut1; cut2 <= len(stream); cut2++ {
			sc := newScanner("THBEND0123")
			found := false
			for _, chunk := range []string{stream[:cut1], stream[cut1:cut2], stream[cut2:]} {
				if chunk != "" && sc.feed([]byte(chunk)) {
					found = true
				}
			}
			if !found {
				t.Fatalf("marker not found with cuts %d, %d", cut1, cut2)
			}
		}
	}
	if newScanner("THBEND0123").feed([]byte("THBEND012")) {
		t.Error("found a marker that is not there")
	}
}

// TestMixedText: the workload is valid UTF-8 in whole lines, with colours.
func TestMixedText(t *testing.T) {
	b := MixedText(64 << 10)
	if !utf8.Valid(b) || b[len(b)-1] != '\n' || !bytes.Contains(b, []byte("\x1b[")) || len(b) > 64<<10 {
		t.Errorf("MixedText: %d bytes, valid %v", len(b), utf8.Valid(b))
	}
}

// BenchmarkScanner runs pty output (64 KiB reads of mixed text) through the
// shell-integration Processor (UTF-8 decoder, escape scanner, interpreter)
// and, as the baseline in the same run, the least any pass must do: check
// UTF-8, find every ESC and copy the bytes out. "x-baseline" is the
// Processor's speed relative to it (below 1: slower).
func BenchmarkScanner(b *testing.B) {
	text := MixedText(64 << 10)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	p := shellint.NewProcessor(shellint.Options{Mode: shellint.Lenient})
	sink := 0
	emit := func(ev shellint.Event) { sink += len(ev.Text) }
	start := time.Now()
	for b.Loop() {
		p.Write(text, emit)
	}
	proc := time.Since(start)
	b.StopTimer()
	n := 0
	start = time.Now()
	for ; n < b.N && (n < 10 || time.Since(start) < 200*time.Millisecond); n++ {
		sink += baselinePass(text)
	}
	base := time.Since(start) / time.Duration(n) * time.Duration(b.N)
	b.ReportMetric(float64(base)/float64(proc), "x-baseline")
}

var baselineSink string

func baselinePass(text []byte) int {
	n := 0
	if utf8.Valid(text) {
		for i := 0; ; {
			j := bytes.IndexByte(text[i:], 0x1b)
			if j < 0 {
				break
			}
			n++
			i += j + 1
		}
	}
	baselineSink = string(text)
	return n
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{9, 1, 1, 1, 9}, 1}, // one disturbed round does not move it
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestSwarm: an attack is going once every attacker it started did its
// first operation or gave up, however early the first ones do; its
// context ends them all.
func TestSwarm(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := newSwarm()
	release := make(chan struct{})
	s.goAttack(ctx, func(ctx context.Context, op func()) error { op(); op(); <-ctx.Done(); return nil })
	s.goAttack(ctx, func(ctx context.Context, op func()) error {
		<-release
		return fmt.Errorf("gave up")
	})
	s.goAttack(ctx, func(ctx context.Context, op func()) error {
		<-release
		op()
		<-ctx.Done()
		return ctx.Err() // after the end: not an error
	})
	s.launched()
	// Two of three wait for release: not ready, whatever the first did.
	poll.Until(t, 10*time.Second, "the first attacker's operations", func() bool { return s.ops.Load() == 2 })
	select {
	case <-s.ready:
		t.Fatal("ready before every attacker settled")
	default:
	}
	close(release)
	<-s.ready
	cancel()
	s.wg.Wait()
	if s.ops.Load() != 3 || len(s.errs) != 1 || s.errs[0] != "gave up" {
		t.Errorf("ops %d, errors %q", s.ops.Load(), s.errs)
	}
}
