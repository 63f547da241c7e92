package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/bench"
	"github.com/termhost/termhost/internal/envflag"
)

const benchAbout = `termhost bench: measure throughput, CPU per GiB, bytes on the wire (plain and
with permessage-deflate), echo latency, idle memory, fan-out, start-up and
memory bounds of a termhost server against the raw pty, in one run; and the
owner's echo latency while hostile participants attack a server of the
bench's own (--only hostile; N of them per attack: --hostile-n); and a
broadcast to an audience (--only broadcast): --viewers (1000) on viewer
links of one terminal printing a build log at --rate (200000 bytes a second),
joining in a burst, then watching for --duration; their lag behind the
holder, evictions, the server's CPU and RSS, the holder's echo and the
joiners' first screen. It raises this process's open-file limit to the
hard limit (a viewer is a socket here and one in the server).
Throughput, CPU and echo are also measured, in the same rounds, through
ttyd (--ttyd, or ttyd on PATH) with ttyd's own protocol; without ttyd,
through the bench's bare pty → WebSocket relay, a process of its own that
speaks ttyd's protocol with ttyd's design: what any WebSocket server costs
here.

Without --server it starts "termhost serve" as a process of its own on a
loopback port and reads its CPU and RSS from /proc/<pid>; --in-process runs
the server in this process instead (for --cpuprofile and --memprofile; its
figures then include the bench's clients). With --server the server must run
on this machine (its shells read the workload file; CPU and memory come from
/proc/<pid>) and allow 200 terminals.`

// Bench is "termhost bench": it measures a server against the raw
// pty (see package bench). Started by a bench with bench.RelayEnv set, it is
// that bench's bare relay, a process of its own; with bench.AudienceEnv, its
// broadcast row's audience.
func Bench(args []string) int {
	if os.Getenv(bench.RelayEnv) == "1" {
		return bench.RelayMain(os.Stdout)
	}
	if os.Getenv(bench.AudienceEnv) == "1" { // the broadcast row's audience
		return bench.AudienceMain(os.Stdin, os.Stdout)
	}
	var (
		server, token, integration string
		pid, hostileN, viewers     int
		rate                       = envflag.Size(bench.DefaultBroadcastRate)
		duration                   time.Duration
		size                       = envflag.Size(64 << 20)
		scrollback                 = envflag.Size(1 << 20)
		jsonOnly, quick, inProcess bool
		cpuProfile, memProfile     string
		ttyd                       string
		serveFlags, only           envflag.List
	)
	fs := envflag.New("bench", "TERMHOST_")
	fs.StringVar(&server, "server", "", "measure the server at this URL instead of one in this process")
	fs.StringVar(&token, "token", "", "owner token for --server (default: the token file of a server on this machine)")
	fs.IntVar(&pid, "pid", 0, "process id of --server, for its CPU and memory (0: find it by its port)")
	fs.StringVar(&integration, "shell-integration", "on", "in-process server: inject shell integration, on or off")
	fs.Var(&size, "size", "throughput payload, a `size` such as 64MiB")
	fs.Var(&scrollback, "scrollback", "scrollback of the server's terminals, for the memory bound (a `size`)")
	fs.Var(&serveFlags, "serve-flag", "a `flag` for the termhost serve the bench starts (repeatable), e.g. --serve-flag=--record-all")
	fs.Var(&only, "only", "run only these `steps` (comma-separated: "+strings.Join(bench.Steps, ", ")+")")
	fs.IntVar(&hostileN, "hostile-n", 0, "hostile participants per attack in the hostile step (0: the plan's, 8 in the full run)")
	fs.StringVar(&ttyd, "ttyd", "", "measure throughput, CPU and echo against the ttyd executable at `PATH` too (default: ttyd on PATH; without it, the bench's relay speaking ttyd's protocol)")
	fs.IntVar(&viewers, "viewers", 0, "viewers of the broadcast step (0: the plan's, 1000 in the full run)")
	fs.Var(&rate, "rate", "the broadcast step's build log rate in bytes a second, a `size` such as 200000 or 195KiB")
	fs.DurationVar(&duration, "duration", 0, "how long the broadcast step's audience watches after joining (0: the plan's, 20s in the full run)")
	fs.BoolVar(&jsonOnly, "json", false, "print only the JSON line")
	fs.BoolVar(&quick, "quick", false, "a fast smoke run with small sizes")
	fs.BoolVar(&inProcess, "in-process", false, "run the server in this process (implied by --cpuprofile and --memprofile)")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of this process (the in-process server) to `FILE`")
	fs.StringVar(&memProfile, "memprofile", "", "write an allocation profile of this process (the in-process server) to `FILE`")
	if code, ok := envflag.ParseCommand(fs, args, os.LookupEnv, os.Stdout, os.Stderr, benchAbout); !ok {
		return code
	}
	if integration != "on" && integration != "off" {
		fmt.Fprintln(os.Stderr, "termhost bench: --shell-integration must be on or off")
		return exitUsage
	}
	for _, s := range only {
		if !slices.Contains(bench.Steps, s) {
			fmt.Fprintf(os.Stderr, "termhost bench: --only: no step %q (steps: %s)\n", s, strings.Join(bench.Steps, ", "))
			return exitUsage
		}
	}
	if hostileN < 0 || hostileN > 60 {
		fmt.Fprintln(os.Stderr, "termhost bench: --hostile-n must be 0 to 60 (a share link may hold 64 connections)")
		return exitUsage
	}
	if server != "" && token == "" {
		token = localToken()
	}
	var serverCommand, relayCommand []string
	if server == "" && !inProcess && cpuProfile == "" && memProfile == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(os.Stderr, "termhost bench: this executable, to start termhost serve: %v (or use --in-process)\n", err)
			return exitFail
		}
		serverCommand = append([]string{exe, "serve"}, serveFlags...)
		relayCommand = []string{exe, "bench"} // with bench.RelayEnv: the bare relay; with bench.AudienceEnv: the audience
	}
	if ttyd == "" {
		ttyd, _ = exec.LookPath("ttyd")
	} else if _, err := exec.LookPath(ttyd); err != nil {
		fmt.Fprintf(os.Stderr, "termhost bench: --ttyd: %v\n", err)
		return exitUsage
	}
	plan := bench.FullPlan(int64(size))
	if quick {
		plan = bench.QuickPlan(int64(size))
	}
	if hostileN > 0 {
		plan.HostileN = hostileN
	}
	if viewers < 0 || int64(rate) <= 0 || duration < 0 {
		fmt.Fprintln(os.Stderr, "termhost bench: --viewers and --duration must not be negative, --rate must be positive")
		return exitUsage
	}
	if viewers > 0 {
		plan.BroadcastViewers = viewers
	}
	plan.BroadcastRate = int(rate)
	if duration > 0 {
		plan.BroadcastTime = duration
	}
	var progress io.Writer = os.Stderr
	if jsonOnly {
		progress = nil
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "termhost bench: --cpuprofile: %v\n", err)
			return 2
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	if memProfile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			if f, err := os.Create(memProfile); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Run(ctx, bench.Options{Server: server, Token: token, PID: pid, ServerCommand: serverCommand, RelayCommand: relayCommand, TTYD: ttyd, ShellIntegration: integration == "on",
		Scrollback: int64(scrollback), Plan: plan, Progress: progress, Only: only})
	if err != nil && res == nil {
		fmt.Fprintf(os.Stderr, "termhost bench: %v\n", err)
		return 1
	}
	if !jsonOnly {
		res.WriteTable(os.Stdout)
		fmt.Println()
	}
	fmt.Printf("%s\n", res.JSON())
	if err != nil {
		fmt.Fprintf(os.Stderr, "termhost bench: %v\n", err)
		return 1
	}
	return 0
}

// localToken is the token of a server on this machine, or "".
func localToken() string {
	path, err := client.LocalTokenPath(os.Getenv)
	if err != nil {
		return ""
	}
	tok, _ := client.ReadToken(path)
	return tok
}
