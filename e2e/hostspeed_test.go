//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/ahptest"
)

// Opening the workbench across many hosts (README "Many boxes"): how soon
// the side bar, each host's terminals and a focused prompt show, with one
// host of 20 terminals, five hosts of 20, and five plus one host that never
// answers. The figures are logged (docs/BENCHMARKS.md "Many hosts: opening
// the workbench"); the test asserts only the order of things.

// speedTerminals is how many terminals each host runs.
const speedTerminals = 20

// speedRuns is how many times each layout's page is loaded (fresh browser
// context each time); the figures are their medians. Once in make test,
// where only the order is checked; TERMHOST_SPEED_RUNS=3 when measuring.
var speedRuns = func() int {
	if n, err := strconv.Atoi(os.Getenv("TERMHOST_SPEED_RUNS")); err == nil && n > 0 {
		return n
	}
	return 1
}()

// speedProbe is added to every document of the measured tab before the
// app's scripts. It notes, when the app marks its side bar, which mark came
// just before (the side bar is drawn in the same task as the host answer
// it waited for) and how many rows it drew; when the app marks the focused
// prompt, each host group's state; and it marks e2e:rows when the side bar
// first holds want rows, e2e:home-connected when the home host's group
// first says connected. Each WebSocket notes when the page made it, when it
// opened and when its first message came (for another host: the answer to
// initialize, its list), so that the wait for a host is told apart from the
// page's own work.
const speedProbe = `(() => {
	const want = %d;
	const mark = performance.mark.bind(performance);
	const rows = () => document.querySelectorAll('#sidebar .terminal-item').length;
	const groups = () => Object.fromEntries([...document.querySelectorAll('.host-group')].map((g) => [g.dataset.host || '(home)', g.dataset.status]));
	const probe = (window.__speed = { marks: [], longTasks: [], sockets: [] });
	const now = () => Math.round(performance.now());
	window.WebSocket = class extends window.WebSocket {
		constructor(url, ...rest) {
			super(url, ...rest);
			const s = { host: new URL(url, location.href).host, made: now(), open: -1, first: -1 };
			probe.sockets.push(s);
			this.addEventListener('open', () => { s.open = now(); }, { once: true });
			this.addEventListener('message', () => { s.first = now(); }, { once: true });
		}
	};
	try {
		new PerformanceObserver((l) => { for (const e of l.getEntries()) probe.longTasks.push([Math.round(e.startTime), Math.round(e.duration)]); }).observe({ type: 'longtask', buffered: true });
	} catch {}
	performance.mark = function (name, ...rest) {
		if (name === 'termhost:sidebar') {
			probe.beforeSidebar = probe.marks[probe.marks.length - 1] ?? '';
			probe.rootsAtSidebar = probe.marks.filter((m) => m.startsWith('termhost:root'));
			probe.rowsAtSidebar = rows();
		}
		if (name === 'termhost:prompt') probe.groupsAtPrompt = groups();
		probe.marks.push(name);
		return mark(name, ...rest);
	};
	const once = (name) => performance.getEntriesByName(name).length === 0 && mark(name);
	const seen = new MutationObserver(() => {
		if (document.querySelector('.host-group[data-host=""]')?.dataset.status === 'connected') once('e2e:home-connected');
		if (rows() >= want) once('e2e:rows');
	});
	seen.observe(document, { childList: true, subtree: true });
})()`

// speedProbeResult is what speedProbe noted.
type speedProbeResult struct {
	Marks          []string          `json:"marks"`
	BeforeSidebar  string            `json:"beforeSidebar"`
	RootsAtSidebar []string          `json:"rootsAtSidebar"`
	RowsAtSidebar  int               `json:"rowsAtSidebar"`
	GroupsAtPrompt map[string]string `json:"groupsAtPrompt"`
	LongTasks      [][2]float64      `json:"longTasks"`
	Sockets        []speedSocket     `json:"sockets"`
}

// speedSocket is one WebSocket of the page: its host:port and when (ms
// since navigation) it was made, opened and got its first message (-1:
// not yet).
type speedSocket struct {
	Host  string  `json:"host"`
	Made  float64 `json:"made"`
	Open  float64 `json:"open"`
	First float64 `json:"first"`
}

// speedHost is one `termhost serve` of the test: its name, address and the
// extra flags it runs with.
type speedHost struct {
	name, addr string
	args       []string
}

// startSpeedHosts starts every host at once (each process its own port,
// origin, home and state directory, no authentication: loopback only) and
// waits until all of them listen.
func startSpeedHosts(t *testing.T, bin string, hosts []speedHost) {
	t.Helper()
	procs := make([]*hostProc, len(hosts))
	for i, sh := range hosts {
		home := t.TempDir()
		h := &hostProc{t: t, name: sh.name, bin: bin, addr: sh.addr,
			args: append([]string{"serve", "--listen", sh.addr, "--shell", "/bin/bash", "--state-dir", filepath.Join(home, "state"), "--log-level", "info",
				"--auth", "none", "--host-name", sh.name}, sh.args...),
			env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", `PS1=\w $ `, "HISTFILE=/dev/null"}}
		h.launch()
		procs[i] = h
		t.Cleanup(func() {
			h.stop(syscall.SIGTERM)
			if t.Failed() {
				t.Logf("%s log:\n%s", h.name, h.log())
			}
		})
	}
	for _, h := range procs {
		h.waitListening()
	}
}

// createSpeedTerminals creates speedTerminals terminals (s01…s20) on every
// host over AHP, the requests of all hosts sent before any answer is read.
// The connections stay open until the test ends.
func createSpeedTerminals(t *testing.T, addrs []string) {
	t.Helper()
	type sent struct {
		c   *ahptest.Client
		ids []string
	}
	var all []sent
	for i, addr := range addrs {
		c := ahptest.MustDial(t, "ws://"+addr+"/ws", ahptest.Options{})
		clientID := "speed-" + strconv.Itoa(i)
		c.Initialize("1.0.0", clientID)
		s := sent{c: c}
		for n := 1; n <= speedTerminals; n++ {
			id, err := c.Send(ahp.MethodCreateTerminal, map[string]any{"channel": ahp.TerminalURI(fmt.Sprintf("s%02d", n)),
				"claim": map[string]any{"kind": "client", "clientId": clientID}, "name": fmt.Sprintf("shell %d", n)})
			if err != nil {
				t.Fatalf("%s: %v", addr, err)
			}
			s.ids = append(s.ids, id)
		}
		all = append(all, s)
	}
	for i, s := range all {
		for _, id := range s.ids {
			if _, err := s.c.Response(json.RawMessage(id)); err != nil {
				t.Fatalf("createTerminal on %s: %d %s", addrs[i], err.Code, err.Message)
			}
		}
	}
}

// speedRun is one page load's figures (ms since navigation; -1: none).
type speedRun map[string]float64

// TestHostsOpenAsFastAsOne: the workbench with five hosts of 20 terminals
// opens as one host of 20 does: the side bar is drawn as the home host
// answers (never waiting for the others), the other hosts' terminals fill
// in as they answer, and a host that never answers does not hold up the
// focused prompt.
func TestHostsOpenAsFastAsOne(t *testing.T) {
	bin := buildTermhost(t)
	addr := func() string { return "127.0.0.1:" + strconv.Itoa(freePort(t)) }
	soloAddr, homeAddr, home2Addr := addr(), addr(), addr()
	boxes := []string{"box1", "box2", "box3", "box4"}
	boxAddrs := make([]string, len(boxes))
	var list strings.Builder
	for i, b := range boxes {
		boxAddrs[i] = addr()
		fmt.Fprintf(&list, "%s http://%s/\n", b, boxAddrs[i])
	}
	hole := blackhole(t)
	hostsB := writeFile(t, "hosts", list.String())
	hostsC := writeFile(t, "hosts", list.String()+"hole http://"+hole+"/\n")

	// A: solo, no other host. B: home lists box1…box4. C: home2 lists them
	// and the host that never answers. Each box accepts both homes' pages.
	hosts := []speedHost{
		{name: "solo", addr: soloAddr},
		{name: "home", addr: homeAddr, args: []string{"--hosts", hostsB}},
		{name: "home2", addr: home2Addr, args: []string{"--hosts", hostsC}},
	}
	for i, b := range boxes {
		hosts = append(hosts, speedHost{name: b, addr: boxAddrs[i], args: []string{"--allowed-origin", "http://" + homeAddr, "--allowed-origin", "http://" + home2Addr}})
	}
	start := time.Now()
	startSpeedHosts(t, bin, hosts)
	all := []string{soloAddr, homeAddr, home2Addr}
	createSpeedTerminals(t, append(all, boxAddrs...))
	t.Logf("%d servers started and %d terminals created in %v", len(hosts), len(hosts)*speedTerminals, time.Since(start).Round(time.Millisecond))
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		t.Logf("load average before the page loads: %s", strings.TrimSpace(string(b)))
	}

	e := &env{t: t, URL: "http://" + homeAddr}
	t.Cleanup(e.startBrowser())

	type layout struct {
		name    string
		addr    string
		remotes []string // the other hosts that answer
		silent  string   // a listed host that never answers
	}
	layouts := []layout{
		{name: "A: one host of 20", addr: soloAddr},
		{name: "B: 5 hosts × 20", addr: homeAddr, remotes: boxes},
		{name: "C: B + one that never answers", addr: home2Addr, remotes: boxes, silent: "hole"},
	}
	figures := map[string][]speedRun{}
	// The layouts take turns, so that a busier moment of the machine falls
	// on each of them alike.
	for run := 1; run <= speedRuns; run++ {
		for i := range layouts {
			// A B C, then B C A, then C A B: each layout comes first once
			// (just after the browser closed the previous page).
			l := layouts[(i+run-1)%len(layouts)]
			figures[l.name] = append(figures[l.name], openWorkbench(t, e, l.name, run, l.addr, l.remotes, l.silent))
		}
	}

	// The table: every figure of every run, and their medians.
	cols := []string{"termhost:hosts", "termhost:root", "termhost:sidebar", "e2e:others-open"}
	for _, b := range boxes {
		cols = append(cols, "termhost:root:"+b)
	}
	cols = append(cols, "e2e:home-connected", "e2e:rows", "termhost:prompt")
	var tb strings.Builder
	fmt.Fprintf(&tb, "ms since navigation, %d runs each (median [runs]):\n", speedRuns)
	fmt.Fprintf(&tb, "%-32s", "layout")
	for _, c := range cols {
		fmt.Fprintf(&tb, " | %-22s", strings.TrimPrefix(strings.TrimPrefix(c, "termhost:"), "e2e:"))
	}
	tb.WriteString("\n")
	for _, l := range layouts {
		fmt.Fprintf(&tb, "%-32s", l.name)
		for _, c := range cols {
			var vs []float64
			for _, r := range figures[l.name] {
				if v, ok := r[c]; ok {
					vs = append(vs, v)
				}
			}
			cell := "—"
			if len(vs) > 0 {
				s := make([]string, len(vs))
				for i, v := range vs {
					s[i] = strconv.Itoa(int(v))
				}
				sorted := slices.Clone(vs)
				slices.Sort(sorted)
				cell = fmt.Sprintf("%d [%s]", int(sorted[len(sorted)/2]), strings.Join(s, " "))
			}
			fmt.Fprintf(&tb, " | %-22s", cell)
		}
		tb.WriteString("\n")
	}
	t.Log(tb.String())
}

// openWorkbench loads the home host's page at addr, deep-linked to its
// terminal s01, in a fresh browser context, waits for every host's rows
// and the focused prompt, checks the order of things and returns the marks.
func openWorkbench(t *testing.T, e *env, layout string, run int, addr string, remotes []string, silent string) speedRun {
	t.Helper()
	want := speedTerminals * (1 + len(remotes))
	p := e.newPage(fmt.Sprintf("%s run %d", layout, run), chromedp.WithNewBrowserContext())
	defer func() { _ = chromedp.Cancel(p.ctx) }()
	p.addInitScript(domRenderer)
	p.addInitScript(fmt.Sprintf(speedProbe, want))
	p.do(chromedp.Navigate("http://" + addr + "/t/s01"))

	// A prompt drawn, with the keyboard in it.
	p.waitJS("a focused prompt", `performance.getEntriesByName('termhost:prompt').length > 0 && document.activeElement?.closest('.terminal-view') && /[$#]$/.test([...document.activeElement.closest('.terminal-view').querySelectorAll('.xterm-rows > div')].map(d => d.textContent.replace(/\u00a0/g, ' ').trimEnd()).join('\n').trimEnd())`, 30*time.Second)
	// Every host's rows, each host in its group.
	p.waitJS(fmt.Sprintf("%d rows in the side bar", want), `performance.getEntriesByName('e2e:rows').length > 0`, 30*time.Second)
	if len(remotes) > 0 {
		for _, h := range append([]string{""}, remotes...) {
			p.waitHostStatus(h, "connected")
		}
		var counts map[string]int
		p.eval(`Object.fromEntries([...document.querySelectorAll('.host-terminals')].map((g) => [g.dataset.host || '(home)', g.querySelectorAll('.terminal-item').length]))`, &counts)
		for _, h := range append([]string{"(home)"}, remotes...) {
			if counts[h] != speedTerminals {
				t.Errorf("%s run %d: host %s shows %d rows; want %d (all: %v)", layout, run, h, counts[h], speedTerminals, counts)
			}
		}
	}
	var n int
	p.eval(`document.querySelectorAll('#sidebar .terminal-item').length`, &n)
	if n != want {
		t.Errorf("%s run %d: %d rows in the side bar; want %d", layout, run, n, want)
	}

	var probe speedProbeResult
	p.eval(`window.__speed`, &probe)
	var marks map[string]float64
	// The first of each name (a reconnect would mark its host's root again).
	p.eval(`(() => { const m = {}; for (const e of performance.getEntriesByType('mark')) if (!(e.name in m)) m[e.name] = Math.round(e.startTime); return m; })()`, &marks)

	// The side bar is drawn in the task in which the home host's list came,
	// never after waiting for another host; it shows the hosts that had
	// answered by then, 20 rows each.
	if _, ok := marks["termhost:sidebar"]; !ok {
		t.Errorf("%s run %d: no termhost:sidebar mark: %v", layout, run, probe.Marks)
	}
	if probe.BeforeSidebar != "termhost:root" {
		t.Errorf("%s run %d: the side bar was drawn after %q; want right after the home host's list (termhost:root); marks in order: %v", layout, run, probe.BeforeSidebar, probe.Marks)
	}
	if probe.RowsAtSidebar != speedTerminals*len(probe.RootsAtSidebar) {
		t.Errorf("%s run %d: the side bar drew %d rows with %v in; want %d each", layout, run, probe.RowsAtSidebar, probe.RootsAtSidebar, speedTerminals)
	}
	remotesFirst := len(probe.RootsAtSidebar) - 1
	// The focused prompt never waits for a host that does not answer.
	if silent != "" {
		st, listed := probe.GroupsAtPrompt[silent]
		if listed && st != "connecting" {
			t.Errorf("%s run %d: host %s was %q when the prompt got the keyboard; want still connecting", layout, run, silent, st)
		}
		var now string
		p.eval(fmt.Sprintf(`document.querySelector('.host-group[data-host=%q]')?.dataset.status ?? ''`, silent), &now)
		if now == "connected" {
			t.Errorf("%s run %d: the host that never answers is %q", layout, run, now)
		}
	}
	// The other hosts' sockets: made (with the home host's: the host list
	// is in the page), open, first message (their list). Made in the task
	// that made the home host's, each comes before the home socket's open.
	var sockets []string
	othersOpen := -1.0
	homeOpen := -1.0
	for _, s := range probe.Sockets {
		if s.Host == addr && homeOpen < 0 {
			homeOpen = s.Open
		}
	}
	first := map[string]bool{}
	for _, s := range probe.Sockets {
		sockets = append(sockets, fmt.Sprintf("%s %v→%v→%v", s.Host, s.Made, s.Open, s.First))
		if s.Host != addr && s.Open > othersOpen {
			othersOpen = s.Open
		}
		if first[s.Host] {
			continue // a host's later socket: a retry
		}
		first[s.Host] = true
		if s.Host != addr && (homeOpen < 0 || s.Made > homeOpen) {
			t.Errorf("%s run %d: host %s's socket was made at %v ms, after the home socket opened (%v ms); want it made with the home host's", layout, run, s.Host, s.Made, homeOpen)
		}
	}
	t.Logf("%s run %d: marks %v; %d other hosts had answered before the side bar; host states at the prompt %v; long tasks [start duration] %v; sockets [host made→open→first message] %v", layout, run, marks, remotesFirst, probe.GroupsAtPrompt, probe.LongTasks, sockets)
	out := speedRun{}
	for k, v := range marks {
		out[k] = v
	}
	if len(remotes) > 0 {
		out["e2e:others-open"] = othersOpen
	}
	return out
}
