package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/testenv"
)

// TestBroadcast runs the broadcast row with a handful of viewers against a
// server in this process, the audience in a process of its own as termhost
// bench runs it (this test binary, with AudienceEnv), and checks that
// every viewer got every byte of the log in order (the sums) and nobody
// was evicted: not its figures.
func TestBroadcast(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	plan := tinyPlan
	plan.BroadcastViewers, plan.BroadcastJoin, plan.BroadcastTime = 5, 500*time.Millisecond, time.Second
	res, err := Run(ctx, Options{RelayCommand: []string{os.Args[0]}, ShellIntegration: true, Plan: plan, Progress: t.Output(), Only: []string{"broadcast"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkBroadcast(t, res, plan.BroadcastViewers)
}

// TestBroadcastHundred runs the broadcast row with 100 viewers against a
// server process of its own, as termhost bench does (the audience in this
// process): none evicted, every viewer's sum of the log the holder's. The
// figures are the benchmark's.
func TestBroadcastHundred(t *testing.T) {
	testenv.Volume(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	plan := tinyPlan
	plan.BroadcastViewers, plan.BroadcastJoin, plan.BroadcastTime = 100, 3*time.Second, 5*time.Second
	res, err := Run(ctx, Options{ServerCommand: []string{"/usr/bin/env", serveEnv + "=1", os.Args[0]}, ShellIntegration: true, Plan: plan,
		Progress: t.Output(), Only: []string{"broadcast"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkBroadcast(t, res, plan.BroadcastViewers)
}

func checkBroadcast(t *testing.T, res *Result, viewers int) {
	t.Helper()
	if len(res.Errors) > 0 {
		t.Fatalf("measurements failed: %v", res.Errors)
	}
	b, d := res.Broadcast, res.BroadcastDetail
	if b == nil || d == nil {
		t.Fatalf("no broadcast row: %s", res.JSON())
	}
	if b.Viewers != viewers || b.Evicted != 0 || d.Checked != viewers || d.Mismatched != 0 || d.Bytes == 0 {
		t.Fatalf("broadcast = %+v, detail %+v: want %d viewers, none evicted, every one's sum the holder's", *b, *d, viewers)
	}
	if b.ServerRSSMiB <= 0 || b.HolderEchoP99Ms <= 0 || b.HolderEchoP99AloneMs <= 0 || b.JoinFirstScreenP99Ms <= 0 || d.Lag.Max <= 0 && d.Lag.P50 < 0 {
		t.Fatalf("broadcast = %+v: missing figures", *b)
	}
}
