package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	ahpclient "github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/agent"
)

// MCP is an agent's round trip through termhost mcp's tools (package
// agent, in this process, over the SDK's in-memory transport: what stdio
// adds is a pipe): run_command of `true`, against the shell's own time as
// shell integration reports it, and a 10 MB output (less in small plans) returned cut.
type MCP struct {
	Samples  int     `json:"samples"`
	Run      Latency `json:"runTrue"`   // the tool call, ms
	ShellP50 float64 `json:"shellP50"`  // the command's durationMs, ms
	OverP50  float64 `json:"overP50"`   // p50 of (tool call − durationMs)
	OverP99  float64 `json:"overP99"`   // p99 of the same
	BigBytes int64   `json:"bigBytes"`  // output of the big run
	BigMs    float64 `json:"bigMs"`     // its tool call
	BigText  int     `json:"bigText"`   // characters returned (head + tail)
	BigOver  float64 `json:"bigOverMs"` // its tool call − durationMs
	// Memory around the big run, sampled every 20 ms during its call: the
	// server's RSS, and the Go heap of this process, where the agent's
	// tools run (with the bench's own idle clients).
	ServerRSSBefore int64 `json:"serverRssBefore"`
	ServerRSSPeak   int64 `json:"serverRssPeak"`
	AgentHeapBefore int64 `json:"agentHeapBefore"`
	AgentHeapPeak   int64 `json:"agentHeapPeak"`
}

// TargetMCPOverP50 is the goal for run_command through termhost mcp: ms over
// the shell's own time.
const TargetMCPOverP50 = 30.0

// bigOutput is the command of the big run: size bytes of lines.
func bigOutput(size int64) string {
	return fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c %d", size)
}

func (rn *runner) mcp(ctx context.Context, res *Result) error {
	base, err := ahpclient.ParseServer(rn.base)
	if err != nil {
		return err
	}
	ag := agent.New(agent.Config{Base: base, Dial: func(ctx context.Context, opts ahpclient.Options) (*ahpclient.Client, error) {
		opts.Token = rn.o.Token
		return ahpclient.Dial(ctx, rn.base, opts)
	}})
	defer ag.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := ag.Server().Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "termhost-bench"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer func() { _ = cs.Close(); _ = ss.Wait() }()
	call := func(name string, args map[string]any, out any) (time.Duration, error) {
		t0 := time.Now()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		d := time.Since(t0)
		if err != nil {
			return d, err
		}
		if r.IsError {
			return d, fmt.Errorf("%s: %v", name, r.Content)
		}
		raw, _ := json.Marshal(r.StructuredContent)
		return d, json.Unmarshal(raw, out)
	}
	var opened struct {
		ID               string
		ShellIntegration bool
	}
	if _, err := call("open_terminal", map[string]any{"name": "bench-mcp"}, &opened); err != nil {
		return err
	}
	defer func() {
		_, _ = call("close_terminal", map[string]any{"terminal": opened.ID}, &struct{}{})
	}()
	if !opened.ShellIntegration {
		rn.logf("mcp: skipped: run_command needs the shell integration, and this server's shells have none")
		return nil
	}
	n := max(10, rn.o.Plan.EchoSamples/5)
	big := min(10_000_000, rn.o.Plan.BoundedSize)
	rn.logf("mcp: %d × run_command true, then %s of output", n, human(big))
	var calls, shell, over []time.Duration
	for range n {
		var r agent.Result
		d, err := call("run_command", map[string]any{"terminal": opened.ID, "command": "true"}, &r)
		if err != nil {
			return err
		}
		sh := time.Duration(r.DurationMs) * time.Millisecond
		calls, shell, over = append(calls, d), append(shell, sh), append(over, d-sh)
	}
	m := &MCP{Samples: n, Run: percentiles(calls), ShellP50: percentiles(shell).P50, OverP50: percentiles(over).P50, OverP99: percentiles(over).P99}
	var r agent.Result
	peaks := rn.samplePeaks(m)
	d, err := call("run_command", map[string]any{"terminal": opened.ID, "command": bigOutput(big), "timeoutSeconds": 300}, &r)
	peaks()
	if err != nil {
		return err
	}
	m.BigBytes, m.BigMs, m.BigText, m.BigOver = r.OutputBytes, ms(d), len(r.Output), ms(d)-float64(r.DurationMs)
	res.MCP = m
	return nil
}

// samplePeaks records the server's RSS and this process's heap in m now,
// then samples their peaks every 20 ms until the returned stop is called.
func (rn *runner) samplePeaks(m *MCP) (stop func()) {
	heap := func() int64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapInuse)
	}
	sample := func() {
		if rss, err := rn.proc.rss(); err == nil {
			m.ServerRSSPeak = max(m.ServerRSSPeak, rss)
		}
		m.AgentHeapPeak = max(m.AgentHeapPeak, heap())
	}
	m.ServerRSSBefore, _ = rn.proc.rss()
	m.AgentHeapBefore = heap()
	return sampling(sample)
}
