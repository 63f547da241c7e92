package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
)

// Result is everything one run measured. Times are in milliseconds, rates in
// MB/s (10^6 bytes), memory in bytes.
type Result struct {
	Date             string       `json:"date"`
	Machine          Machine      `json:"machine"`
	Go               string       `json:"go"`
	Server           string       `json:"server"`
	ServerPID        int          `json:"serverPid,omitempty"`
	ShellIntegration bool         `json:"shellIntegration"`
	Scrollback       int64        `json:"scrollback"`
	Plan             Plan         `json:"plan"`
	Throughput       *Throughput  `json:"throughput,omitempty"`
	Echo             *Echo        `json:"echo,omitempty"`
	Startup          *Startup     `json:"startup,omitempty"`
	Fanout           *Fanout      `json:"fanout,omitempty"`
	Idle             []IdleMemory `json:"idle,omitempty"`
	Bounded          *Bounded     `json:"bounded,omitempty"`
	MCP              *MCP         `json:"mcp,omitempty"`
	Hostile          *Hostile     `json:"hostile,omitempty"`
	// Broadcast is the broadcast row's headline; BroadcastDetail the rest.
	Broadcast       *Broadcast       `json:"broadcast,omitempty"`
	BroadcastDetail *BroadcastDetail `json:"broadcastDetail,omitempty"`
	Targets         []Target         `json:"targets"`
	Errors          []string         `json:"errors,omitempty"`
}

// Machine identifies where the run happened.
type Machine struct {
	CPUs  int    `json:"cpus"`
	Model string `json:"model"`
	OS    string `json:"os"`
}

// Throughput of the workload, best of Plan.Reps on each side; CPU per GiB
// is the median of the rounds.
type Throughput struct {
	Bytes      int64   `json:"bytes"` // file bytes catted
	RawMBps    float64 `json:"rawMBps"`
	ServerMBps float64 `json:"serverMBps"`
	Ratio      float64 `json:"ratio"`
	// Peer names the second baseline: ttyd itself (Options.TTYD), or the
	// bench's bare pty → WebSocket relay speaking ttyd's protocol (see
	// relay). RelayMBps is its throughput; RelayRatio it ÷ raw.
	Peer       string  `json:"peer"`
	RelayMBps  float64 `json:"relayMBps"`
	RelayRatio float64 `json:"relayRatio"`
	// RelayCPUPerGiB is the relay process's CPU seconds per GiB, when it
	// ran as a process of its own (Options.RelayCommand); else 0. Every
	// CPU figure is the median over the rounds.
	RelayCPUPerGiB float64 `json:"relayCpuSecondsPerGiB,omitempty"`
	// CPUOverRelay is the median over the rounds of the server's CPU per
	// GiB ÷ the relay's in the same round; CPUOverRelayRange the lowest
	// and highest round. Zero without the relay's CPU.
	CPUOverRelay      float64    `json:"cpuOverRelay,omitempty"`
	CPUOverRelayRange [2]float64 `json:"cpuOverRelayRange,omitzero"`
	// CPUPerGiB is server CPU seconds (user+system) per GiB of output; in
	// process it includes the bench's own frame reader.
	CPUPerGiB float64 `json:"cpuSecondsPerGiB"`
	// RawCPUPerGiB is this process's CPU seconds per GiB while it read the
	// raw pty: the kernel's pty reads, the floor of any server.
	RawCPUPerGiB float64 `json:"rawCpuSecondsPerGiB"`
	Frames       int     `json:"frames"`
	// PtyBytes is what the raw pty delivered (after the tty's \n → \r\n);
	// DataBytes the data in the binary data messages; WireBytes what the
	// client read from its TCP connection (frames with their WebSocket
	// headers).
	PtyBytes    int64   `json:"ptyBytes"`
	DataBytes   int64   `json:"dataBytes"`
	WireBytes   int64   `json:"wireBytes"`
	WirePerByte float64 `json:"wirePerByte"` // WireBytes/PtyBytes
	// JSON is the same workload to an AHP client that did not ask for
	// binary data messages, best of Plan.Reps.
	JSON *JSONClient `json:"json,omitempty"`
	// Compressed is the same workload to a client that offered
	// permessage-deflate, best of Plan.Reps.
	Compressed *Compressed `json:"compressed,omitempty"`
}

// JSONClient is a throughput run to a client that gets JSON text frames.
type JSONClient struct {
	MBps           float64 `json:"mbps"`
	CPUPerGiB      float64 `json:"cpuSecondsPerGiB"`
	WireBytes      int64   `json:"wireBytes"`
	DataBytes      int64   `json:"dataBytes"` // the JSON-escaped data strings
	WirePerByte    float64 `json:"wirePerByte"`
	EscapeOverhead float64 `json:"escapeOverhead"` // DataBytes/PtyBytes - 1
	// CPUOverRelay is the median over the rounds of this client's CPU per
	// GiB ÷ the peer's in the same round (0 without the peer's CPU).
	CPUOverRelay float64 `json:"cpuOverRelay,omitempty"`
}

// Compressed is a throughput run with permessage-deflate.
type Compressed struct {
	Negotiated  bool    `json:"negotiated"` // false: the server declined (--compression off, or auto on loopback)
	MBps        float64 `json:"mbps"`
	CPUPerGiB   float64 `json:"cpuSecondsPerGiB"`
	WireBytes   int64   `json:"wireBytes"`
	WirePerByte float64 `json:"wirePerByte"`
}

// Latency percentiles in ms.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Echo is keystroke echo latency through `cat` on a raw-mode pty: the raw
// pty, the peer (ttyd, or the relay speaking its protocol) and the server,
// alternating. Deltas are the server's over raw; PeerDelta* over the peer.
type Echo struct {
	Samples      int     `json:"samples"`
	Raw          Latency `json:"raw"`
	Server       Latency `json:"server"`
	DeltaP50     float64 `json:"deltaP50"`
	DeltaP99     float64 `json:"deltaP99"`
	PeerName     string  `json:"peerName,omitempty"`
	Peer         Latency `json:"peer,omitzero"`
	PeerDeltaP50 float64 `json:"peerDeltaP50,omitempty"`
	PeerDeltaP99 float64 `json:"peerDeltaP99,omitempty"`
}

// Startup is createTerminal (or spawn) to the first output byte, p50 in ms.
// With Integrated, the raw side spawned the same injected shell and timed
// its first byte after stripping (as the server does); PlainP50 is the
// shell without the integration script (what ttyd runs), the target's base.
type Startup struct {
	Samples    int     `json:"samples"`
	RawP50     float64 `json:"rawP50"`
	ServerP50  float64 `json:"serverP50"`
	Delta      float64 `json:"delta"`
	Integrated bool    `json:"integrated"`
	PlainP50   float64 `json:"plainP50"`
}

// Fanout compares the slowest of N subscribers with a lone one.
type Fanout struct {
	Subscribers int     `json:"subscribers"`
	Bytes       int64   `json:"bytes"`
	SingleMBps  float64 `json:"singleMBps"`
	SlowestMBps float64 `json:"slowestMBps"`
	Ratio       float64 `json:"ratio"`
	Evicted     int     `json:"evicted"`
	// Skipped viewers fell behind and skipped ahead to the screen, leaving
	// out SkippedBytes of output in all: the slowest's rate is then the
	// rate at which it reached the live screen.
	Skipped      int   `json:"skipped"`
	SkippedBytes int64 `json:"skippedBytes"`
}

// IdleMemory is server RSS per idle terminal with one WebSocket each
// (shells excluded), from /proc/<pid>/status; the bench forces no GC.
type IdleMemory struct {
	Terminals int `json:"terminals"`
	// RSSPerTerminal is measured at rest (Plan.RestWait after the last tab
	// opened), from the server at rest with one tab; OpenedRSSPerTerminal
	// 300 ms after the last prompt, from the same base.
	RSSPerTerminal       float64 `json:"rssPerTerminal"`
	OpenedRSSPerTerminal float64 `json:"openedRssPerTerminal"`
	// InProcess: the server ran in the bench's process, whose RSS also
	// holds the bench's clients.
	InProcess bool `json:"inProcess"`
}

// Bounded is server RSS around Bytes of output through one terminal.
type Bounded struct {
	Bytes    int64 `json:"bytes"`
	StartRSS int64 `json:"startRss"`
	EndRSS   int64 `json:"endRss"`
	MaxRSS   int64 `json:"maxRss"`
	Limit    int64 `json:"limit"` // start + 2×scrollback + 16 MiB
}

// Target is one performance goal, met or missed.
type Target struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Met  bool   `json:"met"`
}

func (r *Result) evaluate() []Target {
	var t []Target
	add := func(name, want, got string, met bool) { t = append(t, Target{name, want, got, met}) }
	if tp := r.Throughput; tp != nil {
		add("throughput", fmt.Sprintf("≥ %.0f %% of raw", TargetThroughput*100),
			fmt.Sprintf("%.0f %% (%.0f vs %.0f MB/s; a bare relay %.0f %%)", tp.Ratio*100, tp.ServerMBps, tp.RawMBps, tp.RelayRatio*100),
			tp.Ratio >= TargetThroughput)
		cpu := tp.CPUPerGiB / tp.RawCPUPerGiB
		add("server CPU s/GiB", fmt.Sprintf("≤ %.1f× raw reader (ttyd stand-in)", TargetCPU),
			fmt.Sprintf("%.2f× (%.1f vs %.1f s)", cpu, tp.CPUPerGiB, tp.RawCPUPerGiB), cpu <= TargetCPU)
		if tp.CPUOverRelay > 0 {
			got := fmt.Sprintf("%.2f× (median of the rounds' ratios, %.2f–%.2f; medians %.1f vs %.1f s)", tp.CPUOverRelay,
				tp.CPUOverRelayRange[0], tp.CPUOverRelayRange[1], tp.CPUPerGiB, tp.RelayCPUPerGiB)
			if j := tp.JSON; j != nil && j.CPUOverRelay > 0 {
				got += fmt.Sprintf("; JSON client %.2f×", j.CPUOverRelay)
			}
			add("server CPU s/GiB vs "+tp.Peer, fmt.Sprintf("≤ %.1f× its process's", TargetCPUOverRelay), got, tp.CPUOverRelay <= TargetCPUOverRelay)
		}
		got := fmt.Sprintf("%.3f (termhost's clients, binary)", tp.WirePerByte)
		if j := tp.JSON; j != nil {
			got += fmt.Sprintf("; AHP clients %.3f (JSON)", j.WirePerByte)
		}
		add("wire bytes per output byte", fmt.Sprintf("≤ %.2f uncompressed", TargetWire), got, tp.WirePerByte <= TargetWire)
		if c := tp.Compressed; c != nil {
			got := fmt.Sprintf("%.3f (%.0f %% of uncompressed)", c.WirePerByte, 100*c.WirePerByte/tp.WirePerByte)
			if !c.Negotiated {
				got = "not negotiated by the server"
			}
			add("wire bytes per output byte, deflate", fmt.Sprintf("≤ %.0f %% of uncompressed", TargetWireRatio*100), got,
				c.Negotiated && c.WirePerByte <= TargetWireRatio*tp.WirePerByte)
		}
	}
	if ec := r.Echo; ec != nil {
		add("echo p50", fmt.Sprintf("≤ raw + %.1f ms (ttyd stand-in)", TargetEchoP50),
			fmt.Sprintf("%+.3f ms (%.3f vs %.3f)", ec.DeltaP50, ec.Server.P50, ec.Raw.P50), ec.DeltaP50 <= TargetEchoP50)
		add("echo p99", fmt.Sprintf("≤ raw + %.1f ms (ttyd stand-in)", TargetEchoP99),
			fmt.Sprintf("%+.3f ms (%.3f vs %.3f)", ec.DeltaP99, ec.Server.P99, ec.Raw.P99), ec.DeltaP99 <= TargetEchoP99)
		if ec.PeerName != "" {
			add("echo p50 vs "+ec.PeerName, fmt.Sprintf("≤ its + %.2f ms", TargetEchoOverPeerP50),
				fmt.Sprintf("%+.3f ms (%.3f vs %.3f)", ec.PeerDeltaP50, ec.Server.P50, ec.Peer.P50), ec.PeerDeltaP50 <= TargetEchoOverPeerP50)
			add("echo p99 vs "+ec.PeerName, fmt.Sprintf("≤ its + %.2f ms", TargetEchoOverPeerP99),
				fmt.Sprintf("%+.3f ms (%.3f vs %.3f)", ec.PeerDeltaP99, ec.Server.P99, ec.Peer.P99), ec.PeerDeltaP99 <= TargetEchoOverPeerP99)
		}
	}
	if st := r.Startup; st != nil {
		d := st.ServerP50 - st.PlainP50
		add("start-up p50, integration "+onOff(r.ShellIntegration), fmt.Sprintf("≤ plain raw shell + %.0f ms (ttyd + 1 ms)", TargetStartP50),
			fmt.Sprintf("%+.1f ms (%.1f vs %.1f)", d, st.ServerP50, st.PlainP50), d <= TargetStartP50)
	}
	if len(r.Idle) > 0 {
		worst := 0.0
		for _, im := range r.Idle {
			worst = max(worst, im.RSSPerTerminal)
		}
		add("idle RSS, 1 WebSocket/terminal", fmt.Sprintf("≤ %d KiB/terminal at rest", TargetIdle>>10),
			fmt.Sprintf("%.1f KiB/terminal (worst)", worst/1024), worst <= TargetIdle)
	}
	if fo := r.Fanout; fo != nil {
		got := fmt.Sprintf("%.0f %% (%.0f vs %.0f MB/s)", fo.Ratio*100, fo.SlowestMBps, fo.SingleMBps)
		switch {
		case fo.Evicted > 0:
			got = fmt.Sprintf("%d of %d evicted", fo.Evicted, fo.Subscribers)
		case fo.Skipped > 0:
			got += fmt.Sprintf(", %d of %d skipped ahead", fo.Skipped, fo.Subscribers)
		}
		add(fmt.Sprintf("fan-out ×%d decoding viewers", fo.Subscribers), fmt.Sprintf("slowest ≥ %.0f %% of single", TargetFanout*100), got,
			fo.Evicted == 0 && fo.Ratio >= TargetFanout)
	}
	if b := r.Bounded; b != nil {
		add(fmt.Sprintf("RSS after %s", human(b.Bytes)), "≤ start + 2×scrollback + 16 MiB",
			fmt.Sprintf("%s (limit %s, max %s)", human(b.EndRSS), human(b.Limit), human(b.MaxRSS)), b.EndRSS <= b.Limit)
	}
	if b, d := r.Broadcast, r.BroadcastDetail; b != nil && d != nil {
		v := fmt.Sprintf("%d viewers at %s/s: ", b.Viewers, human(int64(d.RateBytesPerSec)))
		add(v+"lag p99", fmt.Sprintf("≤ %.0f ms, none evicted", TargetBroadcastLagP99),
			fmt.Sprintf("%.0f ms, %d evicted, %d of %d got every byte", b.LagP99Ms, b.Evicted, d.Checked-d.Mismatched, b.Viewers),
			b.LagP99Ms <= TargetBroadcastLagP99 && b.Evicted == 0 && d.Checked == b.Viewers && d.Mismatched == 0)
		add(v+"server CPU", fmt.Sprintf("≤ %.0f core", TargetBroadcastCPU), fmt.Sprintf("%.2f cores", b.ServerCPUCores), b.ServerCPUCores <= TargetBroadcastCPU)
		add(v+"server RSS", fmt.Sprintf("≤ %.0f MiB", TargetBroadcastRSS), fmt.Sprintf("%.0f MiB (peak)", b.ServerRSSMiB), b.ServerRSSMiB <= TargetBroadcastRSS)
		add(v+"holder's echo p99", fmt.Sprintf("≤ the lone holder's + %.0f ms", TargetBroadcastEchoOver),
			fmt.Sprintf("%.3f vs %.3f ms", b.HolderEchoP99Ms, b.HolderEchoP99AloneMs), b.HolderEchoP99Ms <= b.HolderEchoP99AloneMs+TargetBroadcastEchoOver)
		add(v+"join burst, first screen p99", fmt.Sprintf("≤ %.0f ms (%d joins in %.0f s)", TargetBroadcastJoinP99, b.Viewers, d.JoinSeconds),
			fmt.Sprintf("%.0f ms", b.JoinFirstScreenP99Ms), b.JoinFirstScreenP99Ms <= TargetBroadcastJoinP99)
	}
	if m := r.MCP; m != nil {
		add("MCP run_command true p50 over the shell", fmt.Sprintf("≤ %.0f ms", TargetMCPOverP50), fmt.Sprintf("%.1f ms", m.OverP50), m.OverP50 <= TargetMCPOverP50)
	}
	return t
}

// Met reports whether every target was met and every measurement ran.
func (r *Result) Met() bool {
	for _, t := range r.Targets {
		if !t.Met {
			return false
		}
	}
	return len(r.Errors) == 0
}

// JSON is the result as one line of JSON.
func (r *Result) JSON() []byte {
	b, _ := json.Marshal(r)
	return b
}

// WriteTable prints the measurements and the targets.
func (r *Result) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	setting := "shell integration " + onOff(r.ShellIntegration)
	if strings.HasPrefix(r.Server, "http") { // --server: a server this run did not start
		setting = "the server's shell and settings"
	}
	fmt.Fprintf(tw, "termhost bench\t%s, %d × %s, %s, %s\n", r.Server, r.Machine.CPUs, r.Machine.Model, r.Go, setting)
	fmt.Fprintf(tw, "measure\traw pty\ttermhost\tratio / delta\n")
	if tp := r.Throughput; tp != nil {
		fmt.Fprintf(tw, "throughput (%s mixed text)\t%.0f MB/s\t%.0f MB/s\t%.2f×\n", human(tp.Bytes), tp.RawMBps, tp.ServerMBps, tp.Ratio)
		where := "in this process"
		if tp.RelayCPUPerGiB > 0 {
			where = "a process of its own"
		}
		fmt.Fprintf(tw, "  %s, %s\t%.0f MB/s\t%.0f MB/s\t%.2f×\n", tp.Peer, where, tp.RawMBps, tp.RelayMBps, tp.RelayRatio)
		who := "server"
		if r.Server == "in-process" {
			who = "server + bench clients"
		}
		fmt.Fprintf(tw, "  CPU s/GiB (raw reader; %s)\t%.2f s\t%.2f s\t%.2f×\n", who, tp.RawCPUPerGiB, tp.CPUPerGiB, tp.CPUPerGiB/tp.RawCPUPerGiB)
		if tp.RelayCPUPerGiB > 0 {
			fmt.Fprintf(tw, "  CPU s/GiB (%s's process; server; median of the rounds' ratios)\t%.2f s\t%.2f s\t%.2f×\n", tp.Peer, tp.RelayCPUPerGiB, tp.CPUPerGiB, tp.CPUOverRelay)
		}
		fmt.Fprintf(tw, "  wire bytes per output byte (binary data messages)\t%s\t%s\t%.3f (%d frames)\n",
			human(tp.PtyBytes), human(tp.WireBytes), tp.WirePerByte, tp.Frames)
		if j := tp.JSON; j != nil {
			fmt.Fprintf(tw, "  an AHP client (JSON text frames): throughput\t%.0f MB/s\t%.0f MB/s\t%.2f×\n", tp.RawMBps, j.MBps, j.MBps/tp.RawMBps)
			fmt.Fprintf(tw, "  an AHP client (JSON text frames): CPU s/GiB\t%.2f s\t%.2f s\t%.2f×\n", tp.RawCPUPerGiB, j.CPUPerGiB, j.CPUPerGiB/tp.RawCPUPerGiB)
			if j.CPUOverRelay > 0 {
				fmt.Fprintf(tw, "  an AHP client (JSON text frames): CPU s/GiB over %s's\t%.2f s\t%.2f s\t%.2f×\n", tp.Peer, tp.RelayCPUPerGiB, j.CPUPerGiB, j.CPUOverRelay)
			}
			fmt.Fprintf(tw, "  an AHP client (JSON escaping %+.1f %%): wire bytes per output byte\t%s\t%s\t%.3f\n",
				j.EscapeOverhead*100, human(tp.PtyBytes), human(j.WireBytes), j.WirePerByte)
		}
		if c := tp.Compressed; c != nil && c.Negotiated {
			fmt.Fprintf(tw, "  with permessage-deflate: throughput\t%.0f MB/s\t%.0f MB/s\t%.2f×\n", tp.RawMBps, c.MBps, c.MBps/tp.RawMBps)
			fmt.Fprintf(tw, "  with permessage-deflate: CPU s/GiB\t%.2f s\t%.2f s\t%.2f×\n", tp.RawCPUPerGiB, c.CPUPerGiB, c.CPUPerGiB/tp.RawCPUPerGiB)
			fmt.Fprintf(tw, "  with permessage-deflate: wire bytes per output byte\t%s\t%s\t%.3f\n", human(tp.PtyBytes), human(c.WireBytes), c.WirePerByte)
		} else if c != nil {
			fmt.Fprintf(tw, "  with permessage-deflate\t\tnot negotiated\t\n")
		}
	}
	if ec := r.Echo; ec != nil {
		fmt.Fprintf(tw, "echo latency p50/p90/p99/max (%d)\t%.3f/%.3f/%.3f/%.3f ms\t%.3f/%.3f/%.3f/%.3f ms\tp50 %+.3f, p99 %+.3f ms\n", ec.Samples,
			ec.Raw.P50, ec.Raw.P90, ec.Raw.P99, ec.Raw.Max, ec.Server.P50, ec.Server.P90, ec.Server.P99, ec.Server.Max, ec.DeltaP50, ec.DeltaP99)
		if ec.PeerName != "" {
			fmt.Fprintf(tw, "  echo through %s, p50/p90/p99/max\t%.3f/%.3f/%.3f/%.3f ms\t%.3f/%.3f/%.3f/%.3f ms\tp50 %+.3f, p99 %+.3f ms\n", ec.PeerName,
				ec.Peer.P50, ec.Peer.P90, ec.Peer.P99, ec.Peer.Max, ec.Server.P50, ec.Server.P90, ec.Server.P99, ec.Server.Max, ec.PeerDeltaP50, ec.PeerDeltaP99)
		}
	}
	if st := r.Startup; st != nil {
		if st.Integrated {
			fmt.Fprintf(tw, "start-up to first prompt byte p50, integrated (%d)\t%.1f ms\t%.1f ms\t%+.1f ms\n", st.Samples, st.RawP50, st.ServerP50, st.Delta)
		}
		fmt.Fprintf(tw, "start-up to first byte p50, plain raw shell (%d)\t%.1f ms\t%.1f ms\t%+.1f ms\n", st.Samples, st.PlainP50, st.ServerP50, st.ServerP50-st.PlainP50)
	}
	if fo := r.Fanout; fo != nil {
		fmt.Fprintf(tw, "fan-out %s: 1 vs slowest of %d decoding viewers\t\t%.0f / %.0f MB/s\t%.2f× (%d evicted, %d skipped ahead %s)\n", human(fo.Bytes), fo.Subscribers,
			fo.SingleMBps, fo.SlowestMBps, fo.Ratio, fo.Evicted, fo.Skipped, human(fo.SkippedBytes))
	}
	for _, im := range r.Idle {
		note := fmt.Sprintf("at rest; %.1f just after they opened", im.OpenedRSSPerTerminal/1024)
		if im.InProcess {
			note += " (in process: includes the bench's clients)"
		}
		fmt.Fprintf(tw, "idle RSS, %d terminals, 1 WebSocket each\t\t%.1f KiB/terminal\t%s\n", im.Terminals, im.RSSPerTerminal/1024, note)
	}
	if b := r.Bounded; b != nil {
		fmt.Fprintf(tw, "RSS around %s through 1 terminal\t%s start\t%s end (max %s)\tlimit %s\n", human(b.Bytes), human(b.StartRSS),
			human(b.EndRSS), human(b.MaxRSS), human(b.Limit))
	}
	if m := r.MCP; m != nil {
		fmt.Fprintf(tw, "MCP run_command true p50/p99 (%d; shell's own time p50 %.1f ms)\t\t%.1f/%.1f ms\tp50 %+.1f, p99 %+.1f ms over the shell\n",
			m.Samples, m.ShellP50, m.Run.P50, m.Run.P99, m.OverP50, m.OverP99)
		fmt.Fprintf(tw, "MCP run_command of %s output, cut to %d characters\t\t%.0f ms\t%+.0f ms over the shell\n", human(m.BigBytes), m.BigText, m.BigMs, m.BigOver)
		fmt.Fprintf(tw, "MCP %s output: server RSS, agent heap\t%s, %s before\t%s, %s peak\t\n", human(m.BigBytes),
			human(m.ServerRSSBefore), human(m.AgentHeapBefore), human(m.ServerRSSPeak), human(m.AgentHeapPeak))
	}
	if h := r.Hostile; h != nil {
		h.writeTable(tw)
	}
	if b, d := r.Broadcast, r.BroadcastDetail; b != nil && d != nil {
		fmt.Fprintf(tw, "broadcast: %d viewers (%d links) of a %s/s build log, %.0f s watched\t\tlag p50/p99/max %.0f/%.0f/%.0f ms\t%d evicted, %d skipped ahead, %d of %d checked got every byte (%s)\n",
			b.Viewers, d.Links, human(int64(d.RateBytesPerSec)), d.Seconds, d.Lag.P50, d.Lag.P99, d.Lag.Max, b.Evicted, d.Skipped, d.Checked-d.Mismatched, d.Checked, human(d.Bytes))
		fmt.Fprintf(tw, "  join burst: %d joins in %.1f s, first screen p50/p99/max\t\t%.0f/%.0f/%.0f ms\tlag of those in meanwhile p99 %.0f ms\n",
			b.Viewers, d.JoinSeconds, d.JoinFirstScreen.P50, d.JoinFirstScreen.P99, d.JoinFirstScreen.Max, d.LagBurst.P99)
		fmt.Fprintf(tw, "  server while watched: CPU, peak RSS\t\t%.2f cores, %.0f MiB\tthe bench's processes %.2f cores; %d messages to viewers for %d envelopes each\n",
			b.ServerCPUCores, b.ServerRSSMiB, d.BenchCores, d.Messages, d.Envelopes)
		fmt.Fprintf(tw, "  holder's echo p50/p99 (%d), alone vs watched\t%.3f/%.3f ms\t%.3f/%.3f ms\tp99 %+.3f ms\n",
			d.EchoSamples, d.HolderEchoAlone.P50, d.HolderEchoAlone.P99, d.HolderEcho.P50, d.HolderEcho.P99, b.HolderEchoP99Ms-b.HolderEchoP99AloneMs)
	}
	fmt.Fprintf(tw, "\ntarget\twant\tgot\t\n")
	for _, t := range r.Targets {
		mark := "met"
		if !t.Met {
			mark = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Want, t.Got, mark)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(tw, "error\t%s\t\t\n", e)
	}
	_ = tw.Flush()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Model: "unknown"}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// snapshotHasText reports whether a subscribe result's terminal content has
// any text.
func snapshotHasText(result json.RawMessage) bool {
	var r struct {
		Snapshot struct {
			State struct {
				Content []struct {
					Value  string `json:"value"`
					Output string `json:"output"`
				} `json:"content"`
			} `json:"state"`
		} `json:"snapshot"`
	}
	if json.Unmarshal(result, &r) != nil {
		return false
	}
	for _, p := range r.Snapshot.State.Content {
		if p.Value != "" || p.Output != "" {
			return true
		}
	}
	return false
}
