package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"
)

// The broadcast row's audience runs in a process of its own when the bench
// has a RelayCommand (the termhost binary): the viewers' connections, their
// readers and the join burst. In the bench's process, the holder's reader
// would share the Go scheduler with a thousand viewer readers (a goroutine
// the poller wakes waits behind the run queues full of them), and the
// holder's echo would measure the bench, not the server. Without a
// RelayCommand (tests) the same code runs in this process, over pipes.
//
// The parent and the audience speak JSON lines: the parent writes the plan,
// the audience answers "joined" once the burst is over; the parent writes
// "end" (when the holder saw each marker, the holder's sum) once the log
// has ended, and the audience answers "done" with what its viewers saw.

// AudienceEnv set to 1 makes the process the bench starts from
// RelayCommand run the broadcast row's audience: termhost's main calls
// AudienceMain then.
const AudienceEnv = "TERMHOST_BENCH_AUDIENCE"

// audiencePlan is the parent's first line: who joins where, and when.
type audiencePlan struct {
	WSURL   string        `json:"wsURL"`
	URI     string        `json:"uri"`
	Links   []string      `json:"links"` // viewer i joins on Links[i/PerLink]
	PerLink int           `json:"perLink"`
	Viewers int           `json:"viewers"`
	Burst   time.Duration `json:"burst"` // the joins, evenly over it
	Ticks   int           `json:"ticks"` // markers a viewer may see
}

// audienceEnd is the parent's second line, once the log has ended.
type audienceEnd struct {
	HolderSeen []int64 `json:"holderSeen"` // unix ns when the holder saw marker n
	CheckTick  int     `json:"checkTick"`  // the last marker before the check marker
	Sum        uint32  `json:"sum"`        // the holder's sum from the check marker to the end
	Bytes      int64   `json:"bytes"`
}

// audienceLine is a line of the audience: Joined, then Done (or Error).
type audienceLine struct {
	Joined *audienceJoined `json:"joined,omitempty"`
	Done   *audienceDone   `json:"done,omitempty"`
	Error  string          `json:"error,omitempty"`
}

type audienceJoined struct {
	Seconds float64         `json:"seconds"` // first dial to last join
	Firsts  []time.Duration `json:"firsts"`  // each joined viewer's first screen
}

type audienceDone struct {
	Lag        Latency  `json:"lag"`      // markers after the check
	LagBurst   Latency  `json:"lagBurst"` // markers before it, of those already in
	Evicted    int      `json:"evicted"`
	Skipped    int      `json:"skipped"`
	Checked    int      `json:"checked"`
	Mismatched int      `json:"mismatched"`
	Messages   int64    `json:"messages"`
	JoinFailed int      `json:"joinFailed"`
	Errors     []string `json:"errors,omitempty"`
	CPUSeconds float64  `json:"cpuSeconds"` // the audience process's, when it is one
}

// AudienceMain runs the broadcast row's audience, a process of its own:
// the plan and the end on stdin, the figures on stdout (see audiencePlan).
func AudienceMain(stdin io.Reader, stdout io.Writer) int {
	raiseNoFile()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := runAudience(ctx, stdin, stdout, true); err != nil {
		fmt.Fprintln(os.Stderr, "bench audience:", err)
		return 1
	}
	return 0
}

// runAudience is the audience: it reads the plan, joins the viewers,
// reports, waits for the end and reports what they saw. ownCPU adds the
// process's CPU time (it is a process of its own).
func runAudience(ctx context.Context, stdin io.Reader, stdout io.Writer, ownCPU bool) error {
	in := json.NewDecoder(bufio.NewReader(stdin))
	enc := json.NewEncoder(stdout)
	var p audiencePlan
	if err := in.Decode(&p); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	vctx, vcancel := context.WithCancel(ctx)
	defer vcancel()
	viewers := make([]*broadcastViewer, p.Viewers)
	var joins, watching sync.WaitGroup
	defer func() {
		vcancel()
		watching.Wait()
		for _, v := range viewers {
			if v != nil {
				v.close()
			}
		}
	}()
	t0 := time.Now()
	for i := range p.Viewers {
		// Evenly over the burst.
		if wait := time.Until(t0.Add(p.Burst * time.Duration(i) / time.Duration(p.Viewers))); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		v := &broadcastViewer{seen: make([]int64, p.Ticks)}
		viewers[i] = v
		joins.Add(1)
		watching.Add(1)
		go func() {
			defer watching.Done()
			v.join(vctx, p.WSURL, p.Links[i/p.PerLink], i, p.URI, &joins)
			if v.err == nil {
				v.watch(vctx)
			}
		}()
	}
	joins.Wait()
	j := &audienceJoined{Seconds: time.Since(t0).Seconds()}
	for _, v := range viewers {
		if v.joined > 0 { // set before joins.Done; v.err is the reader's now
			j.Firsts = append(j.Firsts, v.joined)
		}
	}
	if err := enc.Encode(audienceLine{Joined: j}); err != nil {
		return err
	}

	var end audienceEnd
	if err := in.Decode(&end); err != nil {
		return fmt.Errorf("end: %w", err)
	}
	// The viewers read to the end marker (or fail); give them a bound.
	done := make(chan struct{})
	go func() { watching.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		vcancel()
		<-done
	}
	d := &audienceDone{}
	var lags, burstLags []time.Duration
	for _, v := range viewers {
		v.close()
		if v.joined == 0 && v.err != nil && !v.evicted {
			d.JoinFailed++
			if len(d.Errors) < 8 {
				d.Errors = append(d.Errors, "join: "+v.err.Error())
			}
			continue
		}
		switch {
		case v.evicted:
			d.Evicted++
			continue
		case v.err != nil:
			if len(d.Errors) < 8 {
				d.Errors = append(d.Errors, v.err.Error())
			}
			continue
		}
		d.Messages += v.messages
		if v.skipped {
			d.Skipped++
		}
		for k, at := range v.seen {
			if at == 0 || k >= len(end.HolderSeen) || end.HolderSeen[k] == 0 {
				continue
			}
			lag := time.Duration(max(0, at-end.HolderSeen[k]))
			if k > end.CheckTick {
				lags = append(lags, lag)
			} else {
				burstLags = append(burstLags, lag)
			}
		}
		if v.sum.state == 2 {
			d.Checked++
			if v.sum.sum != end.Sum || v.sum.n != end.Bytes {
				d.Mismatched++
			}
		}
	}
	d.Lag, d.LagBurst = percentiles(lags), percentiles(burstLags)
	if ownCPU {
		d.CPUSeconds, _ = process{}.cpu()
	}
	return enc.Encode(audienceLine{Done: d})
}

// audience is the parent's side: the audience's stdin and its lines.
type audience struct {
	enc   *json.Encoder
	lines *json.Decoder
	stop  func() // ends the audience and waits for it (once; later calls wait)
	proc  *process
}

// startAudience starts the audience: a process of its own from command
// (with AudienceEnv), or, without one, a goroutine of this process.
func startAudience(ctx context.Context, command []string, stderr io.Writer, p audiencePlan) (*audience, error) {
	a := &audience{}
	if len(command) == 0 {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		actx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() {
			err := runAudience(actx, inR, outW, false)
			if err != nil {
				_ = json.NewEncoder(outW).Encode(audienceLine{Error: err.Error()})
			}
			_ = outW.Close()
			_ = inR.CloseWithError(errors.New("audience ended"))
		})
		a.enc, a.lines = json.NewEncoder(inW), json.NewDecoder(outR)
		a.stop = sync.OnceFunc(func() {
			_ = inW.Close()
			cancel()
			_ = outR.Close() // a write of the audience's fails
			wg.Wait()
		})
	} else {
		cmd := exec.Command(command[0], command[1:]...)
		cmd.Env = append(slices.Clone(os.Environ()), AudienceEnv+"=1")
		cmd.Stderr = stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("audience: start %s: %w", command[0], err)
		}
		a.proc = &process{pid: cmd.Process.Pid}
		a.enc, a.lines = json.NewEncoder(in), json.NewDecoder(bufio.NewReader(out))
		a.stop = sync.OnceFunc(func() {
			_ = in.Close() // the audience ends at the end of its input
			exited := make(chan struct{})
			go func() { _, _ = io.Copy(io.Discard, out); _ = cmd.Wait(); close(exited) }()
			select {
			case <-exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
	if err := a.enc.Encode(p); err != nil {
		a.stop()
		return nil, fmt.Errorf("audience: %w", err)
	}
	return a, nil
}

// next reads the audience's next line, bounded by ctx.
func (a *audience) next(ctx context.Context) (audienceLine, error) {
	got := make(chan audienceLine, 1)
	failed := make(chan error, 1)
	go func() {
		var l audienceLine
		if err := a.lines.Decode(&l); err != nil {
			failed <- fmt.Errorf("audience: %w", err)
			return
		}
		got <- l
	}()
	select {
	case l := <-got:
		if l.Error != "" {
			return l, errors.New("audience: " + l.Error)
		}
		return l, nil
	case err := <-failed:
		return audienceLine{}, err
	case <-ctx.Done():
		a.stop() // ends the read above
		return audienceLine{}, ctx.Err()
	}
}
