package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/termhost/termhost/terminals/shellint"
)

// catRaw puts the pty in raw mode without echo, prints a marker and runs cat.
const catRaw = "stty raw -echo; printf '%%s%%s\\n' %s %s; cat\r"

// echo: one byte at a time into `cat` on a raw-mode pty, each sent when the
// previous one came back. Raw, peer (ttyd, or the relay speaking its
// protocol) and server samples alternate, so a burst of noise on the
// machine hits every side alike.
func (rn *runner) echo(ctx context.Context, res *Result) error {
	n := rn.o.Plan.EchoSamples
	warm := min(20, n/5)
	ec := &Echo{Samples: n}

	r, err := startRaw(rn.raw)
	if err != nil {
		return err
	}
	defer r.close()
	if err := r.sync(20 * time.Second); err != nil {
		return err
	}
	m := newMarker()
	if err := r.write(fmt.Sprintf(catRaw, m.a, m.b)); err != nil {
		return err
	}
	if _, err := r.readUntil(newScanner(m.text()), time.Now().Add(20*time.Second)); err != nil {
		return err
	}

	peer, err := rn.startPeer(ctx)
	if err != nil {
		return err
	}
	defer peer.stop()
	pc, err := peer.dial(ctx)
	if err != nil {
		return err
	}
	defer pc.close()
	m = newMarker()
	if err := pc.input(ctx, fmt.Sprintf(catRaw, m.a, m.b)); err != nil {
		return err
	}
	if err := pc.until(ctx, newScanner(m.text())); err != nil {
		return err
	}
	ec.PeerName = peer.name

	c, uri, err := rn.newTerminal(ctx, "echo")
	if err != nil {
		return err
	}
	defer rn.closeTerminal(c, uri)
	m = newMarker()
	if err := c.input(ctx, uri, fmt.Sprintf(catRaw, m.a, m.b)); err != nil {
		return err
	}
	if err := c.readUntil(ctx, newScanner(m.text()), nil); err != nil {
		return err
	}

	var raw, peerEl, srv []time.Duration
	for i := 0; i < n+warm; i++ {
		b := byte('a' + i%26)
		t0 := time.Now()
		if err := r.echo(b, time.Now().Add(10*time.Second)); err != nil {
			return fmt.Errorf("raw echo: %w", err)
		}
		rawEl := time.Since(t0)

		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		t0 = time.Now()
		err := pc.echo(pctx, b)
		pEl := time.Since(t0)
		cancel()
		if err != nil {
			return fmt.Errorf("%s echo: %w", peer.name, err)
		}

		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		t0 = time.Now()
		err = c.input(sctx, uri, string(b))
		for err == nil {
			var frame []byte
			if frame, err = c.read(sctx); err == nil {
				if d := c.dataOf(frame); d != nil && slices.Contains(d, b) {
					break
				}
			}
		}
		srvEl := time.Since(t0)
		cancel()
		if err != nil {
			return fmt.Errorf("server echo: %w", err)
		}
		if i >= warm {
			raw, peerEl, srv = append(raw, rawEl), append(peerEl, pEl), append(srv, srvEl)
		}
	}
	ec.Raw, ec.Server = percentiles(raw), percentiles(srv)
	ec.DeltaP50, ec.DeltaP99 = ec.Server.P50-ec.Raw.P50, ec.Server.P99-ec.Raw.P99
	ec.Peer = percentiles(peerEl)
	ec.PeerDeltaP50, ec.PeerDeltaP99 = ec.Server.P50-ec.Peer.P50, ec.Server.P99-ec.Peer.P99
	rn.logf("echo: raw p50 %.3f p99 %.3f ms, %s p50 %.3f p99 %.3f ms, server p50 %.3f p99 %.3f ms", ec.Raw.P50, ec.Raw.P99,
		peer.name, ec.Peer.P50, ec.Peer.P99, ec.Server.P50, ec.Server.P99)
	res.Echo = ec
	return nil
}

// startup: createTerminal to the first prompt byte vs spawning the same shell
// in a raw pty to its first byte. With shell integration (on a server this
// run started, whose injection is known) the raw side runs the injected shell too and
// strips its output with the same shellint.Processor, so both sides time the
// first visible byte; plain bash is reported beside it.
func (rn *runner) startup(ctx context.Context, res *Result) error {
	n := rn.o.Plan.StartSamples
	c, err := rn.dial(ctx, "bench-startup")
	if err != nil {
		return err
	}
	defer c.close()
	same := func() (time.Duration, error) { return rawFirstByte(rn.raw, nil) }
	integrated := false
	if rn.started && rn.o.ShellIntegration {
		inj, err := shellint.Inject(rn.dir, rn.raw.argv[0], nil, rn.raw.env)
		if err == nil && inj.Nonce != "" {
			_ = os.Remove(inj.NonceFile)
			integrated = true
			// A nonce of its own each time, as the server gives each shell:
			// the script empties the file it reads.
			same = func() (time.Duration, error) {
				inj, err := shellint.Inject(rn.dir, rn.raw.argv[0], nil, rn.raw.env)
				if err != nil {
					return 0, err
				}
				defer os.Remove(inj.NonceFile)
				spec := shellSpec{argv: inj.Argv, env: inj.Env, dir: rn.dir}
				return rawFirstByte(spec, shellint.NewProcessor(shellint.Options{Nonce: inj.Nonce, Mode: inj.Mode}))
			}
		}
	}
	var raw, plain, srv []time.Duration
	for i := 0; i < n; i++ {
		d, err := same()
		if err != nil {
			return err
		}
		raw = append(raw, d)
		if integrated {
			if d, err = rawFirstByte(rn.raw, nil); err != nil {
				return err
			}
			plain = append(plain, d)
		}

		d, uri, err := rn.firstPrompt(ctx, c, i)
		if err == nil {
			// A shell that is still starting up may sit on SIGHUP: let it
			// reach its prompt before disposing.
			err = rn.syncServer(ctx, c, uri)
		}
		if uri != "" {
			_ = c.dispose(ctx, uri)
		}
		if err != nil {
			return err
		}
		srv = append(srv, d)
	}
	st := &Startup{Samples: n, RawP50: percentiles(raw).P50, ServerP50: percentiles(srv).P50, Integrated: integrated}
	st.Delta = st.ServerP50 - st.RawP50
	st.PlainP50 = st.RawP50
	if integrated {
		st.PlainP50 = percentiles(plain).P50
	}
	rn.logf("startup: raw p50 %.1f ms, server p50 %.1f ms (integration %s)", st.RawP50, st.ServerP50, onOff(integrated))
	res.Startup = st
	return nil
}

// rawFirstByte spawns a shell in a pty and times its first output byte, or
// with a Processor its first byte of data after stripping.
func rawFirstByte(spec shellSpec, proc *shellint.Processor) (time.Duration, error) {
	t0 := time.Now()
	r, err := startRaw(spec)
	if err != nil {
		return 0, err
	}
	defer r.close()
	_ = r.f.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		n, err := r.f.Read(r.buf)
		if n > 0 {
			if proc == nil {
				return time.Since(t0), nil
			}
			seen := false
			proc.Write(r.buf[:n], func(ev shellint.Event) { seen = seen || (ev.Kind == shellint.Data && ev.Text != "") })
			if seen {
				return time.Since(t0), nil
			}
		}
		if err != nil {
			return 0, fmt.Errorf("raw first byte: %w", err)
		}
	}
}

// firstPrompt creates a terminal and subscribes in one go (pipelined), and
// times until its first output: in the snapshot or in a terminal/data.
func (rn *runner) firstPrompt(ctx context.Context, c *client, i int) (time.Duration, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	uri := fmt.Sprintf("ahp-terminal:/start-%d-%d", time.Now().UnixNano()%1e6, i)
	t0 := time.Now()
	create, err := c.request(ctx, "createTerminal", map[string]any{"channel": uri,
		"claim": map[string]any{"kind": "client", "clientId": c.id}, "cols": 120, "rows": 40})
	if err != nil {
		return 0, "", err
	}
	sub, err := c.request(ctx, "subscribe", map[string]any{"channel": uri})
	if err != nil {
		return 0, "", err
	}
	if _, err := c.await(ctx, create, nil); err != nil {
		return 0, "", fmt.Errorf("createTerminal: %w", err)
	}
	var seen bool
	result, err := c.await(ctx, sub, func(frame []byte) { seen = seen || c.dataOf(frame) != nil })
	if err != nil {
		return 0, uri, fmt.Errorf("subscribe: %w", err)
	}
	if seen || snapshotHasText(result) {
		return time.Since(t0), uri, nil
	}
	for {
		frame, err := c.read(ctx)
		if err != nil {
			return 0, uri, err
		}
		if d := c.dataOf(frame); len(d) > 0 {
			return time.Since(t0), uri, nil
		}
	}
}
