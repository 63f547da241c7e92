package agent_test

import (
	"fmt"
	"strings"
	"testing"
)

// seqLines is what seq -f 'line %06g' 1 n prints, as text.
func seqLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %06d\n", i)
	}
	return b.String()
}

// readPages reads a terminal's output from since on with read_terminal
// (mode output) a page at a time until no more follows, checking that each
// result's texts stay within maxBytes (0: the default, 16384), and returns
// the pages' texts one after the other.
func (r *rig) readPages(t *testing.T, id string, since int64, maxBytes int) string {
	t.Helper()
	limit := 16384
	args := map[string]any{"terminal": id, "mode": "output"}
	if maxBytes > 0 {
		limit = maxBytes
		args["maxBytes"] = maxBytes
	}
	var all strings.Builder
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("more than 1000 pages from %d", since)
		}
		args["since"] = since
		out, text := r.ok(t, "read_terminal", args)
		page := out["text"].(string)
		if len(page) > limit || len(text) > limit {
			t.Fatalf("page at %d: text %d bytes, result text %d bytes, want at most %d", since, len(page), len(text), limit)
		}
		all.WriteString(page)
		next := int64(num(out["cursor"]))
		if out["truncated"] != true {
			return all.String()
		}
		if next <= since || num(out["remainingBytes"]) <= 0 || !strings.Contains(text, fmt.Sprintf("since %d reads on", next)) {
			t.Fatalf("page at %d: cursor %d, remaining %v, text ends %q", since, next, out["remainingBytes"], tail(text))
		}
		since = next
	}
}

// TestLongOutputInPages: a real shell prints 39 KB (seq, 3000 lines),
// more than twice a result's default size. (Each page goes through the
// emulator, whose scrolling the race detector makes ten times slower:
// 12000 lines took a minute of make test.)
// Every result's text stays within maxBytes (read_terminal since 0
// returned all of it, 109 KB in an agent's session), says it was cut and
// where to read on; the pages read from there, one after the other, are
// the whole output byte for byte, whatever the page size, and so are the
// head run_command shows and the pages from where it left off.
func TestLongOutputInPages(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	const lines = 3000
	command := fmt.Sprintf("seq -f 'line %%06g' 1 %d", lines)
	want := seqLines(lines)
	lastLine := fmt.Sprintf("line %06d", lines)
	run, runText := r.ok(t, "run_command", map[string]any{"terminal": id, "command": command})
	if run["status"] != "finished" || run["truncated"] != true || len(runText) > 16384 || len(run["output"].(string)) > 16384 {
		t.Fatalf("run_command: status %v, truncated %v, text %d bytes, output %d bytes", run["status"], run["truncated"], len(runText), len(run["output"].(string)))
	}
	omittedFrom := int64(num(run["omittedFrom"]))
	if !strings.Contains(runText, fmt.Sprintf("bytes omitted: read_terminal with mode output and since %d reads them", omittedFrom)) {
		t.Fatalf("run_command's text does not say where to read on: %.300q", runText[strings.Index(runText, "[…"):])
	}

	t.Run("since 0", func(t *testing.T) {
		out, text := r.ok(t, "read_terminal", map[string]any{"terminal": id, "mode": "output", "since": 0})
		if out["truncated"] != true || len(text) > 16384 || !strings.Contains(text, "more bytes of output follow") {
			t.Fatalf("read since 0: truncated %v, %d bytes of text", out["truncated"], len(text))
		}
		var got []string
		for _, size := range []int{0, 2048, 100000} {
			all := r.readPages(t, id, 0, size)
			// From the shell's start: the prompt and the command line, the
			// whole output, and the next prompt.
			before, after, ok := strings.Cut(all, want)
			prompt := strings.TrimSpace(after)
			if !ok || !strings.HasSuffix(before, command+"\n") || strings.Contains(after, "line ") || !strings.HasSuffix(prompt, "#") && !strings.HasSuffix(prompt, "$") {
				t.Fatalf("pages of %d bytes: the output is not whole in them: %d bytes, before it %q, after it %q", size, len(all), tail(before), tail(after))
			}
			got = append(got, all)
		}
		if got[0] != got[1] || got[1] != got[2] {
			t.Fatalf("pages of different sizes join into different texts: %d, %d and %d bytes", len(got[0]), len(got[1]), len(got[2]))
		}
	})
	t.Run("from the command's output start", func(t *testing.T) {
		if all := r.readPages(t, id, int64(num(run["outputStart"])), 0); !strings.HasPrefix(all, want) {
			t.Fatalf("pages from outputStart %v: %d bytes starting %.100q", run["outputStart"], len(all), all)
		}
	})
	t.Run("run_command's head, then from where it left off", func(t *testing.T) {
		head, _, _ := strings.Cut(run["output"].(string), "\n[… ")
		if all := head + "\n" + r.readPages(t, id, omittedFrom, 0); !strings.HasPrefix(all, want) {
			t.Fatalf("head and pages from omittedFrom %d: %d bytes", omittedFrom, len(all))
		}
	})
	t.Run("wait_for", func(t *testing.T) {
		out, text := r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": lastLine, "since": 0, "maxBytes": 4096})
		if out["status"] != "matched" || out["truncated"] != true || len(text) > 4096 || len(out["output"].(string)) > 4096 ||
			!strings.Contains(out["output"].(string), lastLine) || !strings.Contains(text, "read_terminal with mode output and since 0 reads all of it") {
			t.Fatalf("wait_for: status %v, truncated %v, text %d bytes %q, output %d bytes", out["status"], out["truncated"], len(text), tail(text), len(out["output"].(string)))
		}
	})
}
