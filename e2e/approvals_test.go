//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Approvals in the browser (docs/protocol.md, "Approvals"): an agent on
// the official MCP TypeScript SDK runs termhost mcp, whose policy asks
// before some command lines; the owner's pages approve and deny them from
// the bar over the terminal, and type a password the agent's program asks
// for without the agent ever seeing it.

// tsAgent is e2e/testdata/mcpclient.mjs: the TypeScript SDK's client
// running `termhost mcp` on stdio against the e2e server, as the owner.
type tsAgent struct {
	t     *testing.T
	in    io.WriteCloser
	mu    sync.Mutex
	next  int
	calls map[int]chan tsResult
	// raw is every line the agent received from termhost mcp's tools, as
	// the SDK decoded it: what the model would see.
	raw []string
}

// tsResult is a tool call's outcome: the SDK's CallToolResult, or the
// error of a call that failed.
type tsResult struct {
	Result struct {
		Content           []map[string]any `json:"content"`
		StructuredContent map[string]any   `json:"structuredContent"`
		IsError           bool             `json:"isError"`
	} `json:"result"`
	Error string `json:"error"`
}

func (r tsResult) text() string {
	var b strings.Builder
	for _, c := range r.Result.Content {
		if s, ok := c["text"].(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}

// startTSAgent starts the TypeScript SDK agent on `termhost mcp args…`.
func startTSAgent(t *testing.T, e *env, bin string, args ...string) *tsAgent {
	t.Helper()
	script, err := filepath.Abs("testdata/mcpclient.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("../node_modules/@modelcontextprotocol/sdk/package.json"); err != nil {
		t.Fatalf("the MCP TypeScript SDK is not installed (%v): run npm ci", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: the MCP TypeScript SDK runs on it (install Node.js 20 or later)")
	}
	cmd := exec.Command(node, append([]string{script, bin, "mcp"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERMHOST_SERVER=" + e.URL, "TERMHOST_TOKEN=" + e.token}
	cmd.Stderr = t.Output()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &tsAgent{t: t, in: in, calls: map[int]chan tsResult{}}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			var m struct {
				Ready bool `json:"ready"`
				ID    int  `json:"id"`
			}
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			if m.Ready {
				close(ready)
				continue
			}
			var r tsResult
			_ = json.Unmarshal([]byte(line), &r)
			a.mu.Lock()
			a.raw = append(a.raw, line)
			ch := a.calls[m.ID]
			delete(a.calls, m.ID)
			a.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
	}()
	t.Cleanup(func() {
		_ = in.Close() // the script closes its session and ends
		select {
		case <-done:
		case <-time.After(patience * 10 * time.Second):
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		_ = cmd.Wait()
	})
	select {
	case <-ready:
	case <-done:
		t.Fatal("the TypeScript SDK agent ended before it was connected (see its stderr above)")
	case <-time.After(patience * 20 * time.Second):
		t.Fatal("the TypeScript SDK agent did not connect to termhost mcp")
	}
	return a
}

// call starts a tool call; its result comes on the channel.
func (a *tsAgent) call(name string, args map[string]any) <-chan tsResult {
	a.t.Helper()
	ch := make(chan tsResult, 1)
	a.mu.Lock()
	a.next++
	id := a.next
	a.calls[id] = ch
	a.mu.Unlock()
	line, err := json.Marshal(map[string]any{"id": id, "name": name, "arguments": args})
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.in.Write(append(line, '\n')); err != nil {
		a.t.Fatalf("call %s: %v", name, err)
	}
	return ch
}

// wait is the result of a call started with call.
func (a *tsAgent) wait(what string, ch <-chan tsResult, timeout time.Duration) tsResult {
	a.t.Helper()
	select {
	case r := <-ch:
		if r.Error != "" {
			a.t.Fatalf("%s: %s", what, r.Error)
		}
		return r
	case <-time.After(patience * timeout):
		a.t.Fatalf("%s: no result after %v", what, patience*timeout)
	}
	return tsResult{}
}

// must calls a tool and returns its structured result; a tool error fails the test.
func (a *tsAgent) must(name string, args map[string]any) map[string]any {
	a.t.Helper()
	r := a.wait(name, a.call(name, args), 60*time.Second)
	if r.Result.IsError {
		a.t.Fatalf("%s %v: tool error %s", name, args, r.text())
	}
	return r.Result.StructuredContent
}

// everything is every result the agent received, as one string.
func (a *tsAgent) everything() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.raw, "\n")
}

// approvalBar is the JavaScript for the element sel of terminal id's approval bar.
func approvalBar(id, sel string) string {
	return fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q] .terminal-approvalbar:not([hidden]) %s')`, id, sel)
}

// openAgentTerminal has the agent open a terminal named name, and the page show it.
func openAgentTerminal(t *testing.T, a *tsAgent, pages []*page, name string) string {
	t.Helper()
	id, _ := a.must("open_terminal", map[string]any{"name": name})["id"].(string)
	if id == "" {
		t.Fatal("open_terminal returned no id")
	}
	for _, p := range pages {
		p.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
		p.waitJS("the agent's terminal", fmt.Sprintf(`window.__termhost.view(%q)?.loaded`, id), 15*time.Second)
		p.waitPrompt(id)
	}
	return id
}

// TestApprovalsAllowedAskedDenied: the agent's allowed command runs at once;
// an asked one waits, nothing of it typed, until the owner approves it from
// the bar (every page sees "Approved by …"); a denied one never runs and the
// agent hears the person's reason. The bar, the tab's and the side bar row's
// badges, the keyboard path (Ctrl+Shift+A, Tab, Enter, the reason field) and
// a phone's view of the same bar are checked on the way, and a command line
// with markup shows as text.
func TestApprovalsAllowedAskedDenied(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	bin := buildTermhost(t)
	owner := e.newPage("owner", chromedp.WithNewBrowserContext())
	owner.login()
	phone := e.newPage("phone", chromedp.WithNewBrowserContext())
	phone.login()
	phone.phone()
	agent := startTSAgent(t, e, bin)
	id := openAgentTerminal(t, agent, []*page{owner, phone}, "build")
	for _, f := range []string{"doomed", "kept"} {
		if err := os.WriteFile(filepath.Join(e.home, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(f string) bool {
		_, err := os.Stat(filepath.Join(e.home, f))
		return err == nil
	}

	// Allowed: runs, nobody is asked.
	ran := agent.must("run_command", map[string]any{"terminal": id, "command": "echo allowed-$((6*7))"})
	if ran["status"] != "finished" || !strings.Contains(fmt.Sprint(ran["output"]), "allowed-42") {
		t.Fatalf("allowed command: %v", ran)
	}
	if n := owner.evalString(`window.__termhost.approvals().length`); n != "0" {
		t.Fatalf("an allowed command made %s approvals", n)
	}

	// Asked: waits for the owner.
	asked := agent.call("run_command", map[string]any{"terminal": id, "command": "rm -f doomed"})
	owner.waitJS("the approval bar", approvalBar(id, ".approval.pending"), 15*time.Second)
	if got := owner.evalString(approvalBar(id, ".approval-command") + `.textContent`); got != "rm -f doomed" {
		t.Errorf("bar's command line %q, want %q", got, "rm -f doomed")
	}
	if got := owner.evalString(approvalBar(id, ".approval-who") + `.textContent`); !strings.HasSuffix(got, "wants to run") {
		t.Errorf("bar's requester %q", got)
	}
	if got := owner.evalString(approvalBar(id, ".approval-always") + `?.textContent`); got != "Always Allow rm" {
		t.Errorf("Always Allow button %q, want %q", got, "Always Allow rm")
	}
	owner.waitJS("the tab's badge", fmt.Sprintf(`document.querySelector('.tab[data-terminal=%q] .attention-badge.attention-approval')?.textContent === '1'`, id), 5*time.Second)
	owner.waitJS("the side bar row's badge", fmt.Sprintf(`!!document.querySelector('.terminal-item[data-terminal=%q] .attention-badge.attention-approval')`, id), 5*time.Second)
	// The phone shows the same bar, its buttons on the screen.
	phone.waitJS("the approval bar on the phone", approvalBar(id, ".approval-approve"), 15*time.Second)
	if r := phone.visibleRect(`.terminal-view[data-terminal="` + id + `"] .approval-approve`); r == nil || r.Right > 390 || r.Bottom > 844 || r.Bottom-r.Top < 30 {
		t.Errorf("phone: Approve button at %+v, want on the 390×844 screen and at least 30 px tall", r)
	}
	if !exists("doomed") {
		t.Fatal("the asked command ran before anyone approved it")
	}
	for _, in := range owner.sentInputs() {
		if strings.Contains(in, "rm") {
			t.Fatalf("the page typed %q", in)
		}
	}
	if strings.Contains(owner.evalString(fmt.Sprintf(`window.__termhost.buffer(%q)`, id)), "rm -f doomed") {
		t.Fatal("the asked command line was typed into the shell before it was approved")
	}
	owner.click("Approve", `.terminal-view[data-terminal="`+id+`"] .approval-approve`)
	res := agent.wait("the approved command", asked, 30*time.Second)
	if sc := res.Result.StructuredContent; res.Result.IsError || sc["status"] != "finished" || sc["exitCode"] != float64(0) {
		t.Fatalf("approved command: %+v %s", res.Result, res.text())
	}
	if exists("doomed") {
		t.Fatal("the approved rm did not run")
	}
	for _, p := range []*page{owner, phone} {
		p.waitJS("Approved by …", approvalBar(id, `.approval.answered[data-state=approved] .approval-outcome`)+`?.textContent.startsWith('Approved by ')`, 10*time.Second)
	}
	// Then the bar goes, and the badges with it.
	owner.waitJS("the bar to go", fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q] .terminal-approvalbar').hidden`, id), 20*time.Second)
	if owner.evalString(`!!document.querySelector('.attention-badge')`) != "false" {
		t.Error("a badge is left once nothing waits")
	}

	// Denied, with the keyboard, a reason, and markup in the command line.
	const markup = `rm -f kept '<img src=x onerror="window.__pwned=1">'`
	denied := agent.call("run_command", map[string]any{"terminal": id, "command": markup})
	owner.waitJS("the second approval", approvalBar(id, ".approval.pending"), 15*time.Second)
	if got := owner.evalString(approvalBar(id, ".approval-command") + `.textContent`); got != markup {
		t.Errorf("bar's command line %q, want %q", got, markup)
	}
	if owner.evalString(`!!document.querySelector('.terminal-approvalbar img')`) != "false" {
		t.Error("the command line's markup became an element")
	}
	owner.do(chromedp.Focus(chromedp.CSS(fmt.Sprintf(`.terminal-view[data-terminal=%q] .xterm-helper-textarea`, id))))
	owner.do(chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
	owner.waitJS("Ctrl+Shift+A to put the keyboard on Approve", `document.activeElement?.classList.contains('approval-approve')`, 5*time.Second)
	owner.do(chromedp.KeyEvent("\t"))
	owner.waitJS("Tab to reach Deny", `document.activeElement?.classList.contains('approval-deny')`, 5*time.Second)
	sent := len(owner.sentInputs())
	owner.do(typeText("\r"))
	owner.waitJS("Enter on Deny to open the reason field", `document.activeElement?.classList.contains('approval-reason')`, 5*time.Second)
	owner.do(typeText("not today\r"))
	res = agent.wait("the denied command", denied, 30*time.Second)
	sc := res.Result.StructuredContent
	if sc["status"] != "denied" || sc["reason"] != "not today" || fmt.Sprint(sc["answeredBy"]) == "" {
		t.Fatalf("denied command: %+v %s", res.Result, res.text())
	}
	if !exists("kept") {
		t.Fatal("the denied rm ran")
	}
	owner.waitJS("Denied by …: not today", approvalBar(id, `.approval.answered[data-state=denied] .approval-outcome`)+`?.textContent.endsWith(': not today')`, 10*time.Second)
	owner.waitJS("the keyboard back in the terminal", terminalFocused(id), 5*time.Second)
	if in := owner.sentInputs()[sent:]; len(in) > 0 {
		t.Errorf("answering with the keyboard typed %q into the terminal", in)
	}
	if owner.evalString(`window.__pwned === undefined`) != "true" {
		t.Fatal("the command line's markup ran")
	}
}

// passwordPrompt reads a password without echo and prints its length.
const passwordPrompt = `read -rs -p 'Password: ' pw; echo; echo "length ${#pw}"`

// runApproved has the agent run command in terminal id, approves it from
// p's bar if the rules ask about it, and returns run_command's result.
func runApproved(t *testing.T, a *tsAgent, p *page, id, command string) map[string]any {
	t.Helper()
	ch := a.call("run_command", map[string]any{"terminal": id, "command": command, "timeoutSeconds": 30})
	asked := "!!" + approvalBar(id, ".approval-approve")
	deadline := time.Now().Add(patience * 60 * time.Second)
	for {
		select {
		case r := <-ch:
			if r.Error != "" || r.Result.IsError {
				t.Fatalf("run_command %s: %s %s", command, r.Error, r.text())
			}
			return r.Result.StructuredContent
		case <-time.After(100 * time.Millisecond):
		}
		if p.evalString(asked) == "true" {
			p.click("Approve", `.terminal-view[data-terminal="`+id+`"] .approval-approve`)
			r := a.wait("run_command "+command, ch, 60*time.Second)
			if r.Result.IsError {
				t.Fatalf("run_command %s: tool error %s", command, r.text())
			}
			return r.Result.StructuredContent
		}
		if time.Now().After(deadline) {
			t.Fatalf("run_command %s: neither a result nor an approval after %v", command, patience*60*time.Second)
		}
	}
}

// TestApprovalsSecretPrompt: the agent's `read -s` (approved first if the
// rules ask) waits for a password;
// the owner's page says so over the terminal and on the tab, the agent may
// not type it, the owner's Type It puts the keyboard in the terminal and
// the owner types it there; no MCP result ever holds it.
func TestApprovalsSecretPrompt(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	bin := buildTermhost(t)
	owner := e.newPage("owner", chromedp.WithNewBrowserContext())
	owner.login()
	agent := startTSAgent(t, e, bin)
	id := openAgentTerminal(t, agent, []*page{owner}, "deploy")
	const secret = "hunter2-s3cr3t"

	r := runApproved(t, agent, owner, id, passwordPrompt)
	if r["status"] != "input_awaited" || r["secret"] != true {
		t.Fatalf("run_command at a password prompt: %v, want status input_awaited and secret true", r)
	}
	owner.waitJS("the password bar", approvalBar(id, ".approval.secret"), 15*time.Second)
	if got := owner.evalString(approvalBar(id, ".approval-secret-text") + `.textContent`); got != "Agent needs a password in deploy — type it in the terminal" {
		t.Errorf("password bar %q", got)
	}
	owner.waitJS("the tab's key badge", fmt.Sprintf(`!!document.querySelector('.tab[data-terminal=%q] .attention-badge.attention-secret')`, id), 5*time.Second)

	refused := agent.wait("send_input at the password prompt", agent.call("send_input", map[string]any{"terminal": id, "text": "agent-typed", "keys": []string{"Enter"}}), 30*time.Second)
	if !refused.Result.IsError || !strings.Contains(refused.text(), "a person must answer") {
		t.Fatalf("the agent typed at a password prompt: %+v %s", refused.Result, refused.text())
	}

	owner.click("Type It", `.terminal-view[data-terminal="`+id+`"] .approval-type`)
	owner.waitJS("the keyboard in the terminal", terminalFocused(id), 5*time.Second)
	owner.do(typeText(secret + "\r"))
	owner.waitLine(id, fmt.Sprintf("length %d", len(secret)), 15*time.Second)
	owner.waitJS("the password bar to go", fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q] .terminal-approvalbar').hidden`, id), 15*time.Second)
	got := agent.must("wait_for", map[string]any{"terminal": id, "pattern": fmt.Sprintf("length %d", len(secret)), "since": r["cursor"], "timeoutSeconds": 30})
	if !strings.Contains(fmt.Sprint(got["match"]), fmt.Sprintf("length %d", len(secret))) {
		t.Fatalf("wait_for after the password: %v", got)
	}
	agent.must("read_terminal", map[string]any{"terminal": id, "mode": "output", "since": 0})
	agent.must("read_terminal", map[string]any{"terminal": id})
	agent.must("list_terminals", map[string]any{})
	if all := agent.everything(); strings.Contains(all, secret) || strings.Contains(all, "hunter2") {
		t.Fatalf("an MCP result holds the password:\n%s", all)
	}
	if strings.Contains(owner.evalString(fmt.Sprintf(`window.__termhost.buffer(%q)`, id)), secret) {
		t.Fatal("the password was echoed on the screen")
	}
}

// TestApprovalsTwoPagesAnswerAtOnce: two owner pages answer the same
// approval at the same moment, one Approve, one Deny: the first answer the
// server takes wins, the agent gets that one, and both pages show who
// answered; the other answer is refused (a toast says who answered first)
// or, if its page heard of the answer first, never sent.
func TestApprovalsTwoPagesAnswerAtOnce(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	bin := buildTermhost(t)
	ann := e.newPage("ann", chromedp.WithNewBrowserContext())
	ann.login()
	bob := e.newPage("bob", chromedp.WithNewBrowserContext())
	bob.login()
	agent := startTSAgent(t, e, bin)
	id := openAgentTerminal(t, agent, []*page{ann, bob}, "race")
	if err := os.WriteFile(filepath.Join(e.home, "raced"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	asked := agent.call("run_command", map[string]any{"terminal": id, "command": "rm -f raced"})
	for _, p := range []*page{ann, bob} {
		p.waitJS("the approval bar", approvalBar(id, ".approval-approve"), 15*time.Second)
	}
	// Ann's Approve and Bob's Deny (reason typed), each one call away.
	ann.eval(fmt.Sprintf(`(window.__answer = () => %s.click(), true)`, approvalBar(id, ".approval-approve")), nil)
	bob.click("Deny…", `.terminal-view[data-terminal="`+id+`"] .approval-deny`)
	bob.waitJS("the reason field", `document.activeElement?.classList.contains('approval-reason')`, 5*time.Second)
	bob.do(typeText("race"))
	bob.eval(fmt.Sprintf(`(window.__answer = () => %s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true})), true)`, approvalBar(id, ".approval-reason")), nil)
	var wg sync.WaitGroup
	for _, p := range []*page{ann, bob} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.eval(`(window.__answer(), true)`, nil)
		}()
	}
	wg.Wait()
	res := agent.wait("the raced approval", asked, 30*time.Second)
	state := "approved"
	if res.Result.StructuredContent["status"] == "denied" {
		state = "denied"
	}
	loser := bob
	if state == "denied" {
		loser = ann
	}
	for _, p := range []*page{ann, bob} {
		p.waitJS("who answered", approvalBar(id, fmt.Sprintf(`.approval.answered[data-state=%s] .approval-outcome`, state))+`?.textContent.match(/^(Approved|Denied) by ./)`, 10*time.Second)
	}
	// The loser's answer was refused with who answered first, or never sent.
	toast := loser.evalString(`[...document.querySelectorAll('.notification-toast')].map(n => n.textContent).join('|')`)
	if toast != "" && !strings.Contains(toast, "already "+state+" by ") {
		t.Errorf("%s's notice %q, want “already %s by …”", loser.name, toast, state)
	}
	t.Logf("%s won (%s); %s's notice: %q", map[string]string{"approved": "ann", "denied": "bob"}[state], state, loser.name, toast)
}

// TestApprovalScreenshots writes the approval and password bars for the
// docs, only when asked:
// go test -tags e2e ./e2e/ -run TestApprovalScreenshots -args -screenshots=$PWD/docs/screenshots
func TestApprovalScreenshots(t *testing.T) {
	t.Parallel()
	if *screenshotsDir == "" {
		t.Skip("no -screenshots=DIR")
	}
	if err := os.MkdirAll(*screenshotsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newAuthEnv(t)
	bin := buildTermhost(t)
	save := func(p *page, name string) {
		t.Helper()
		p.eval(`window.__termhost.drained()`, nil)
		p.nextFrames()
		ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
		defer cancel()
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		path := filepath.Join(*screenshotsDir, name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
	}
	d := e.newPage("desktop", chromedp.WithNewBrowserContext())
	d.login()
	d.do(chromedp.EmulateViewport(1400, 900))
	d.colorScheme("dark")
	p := e.newPage("phone", chromedp.WithNewBrowserContext())
	p.login()
	p.phone()
	p.colorScheme("dark")
	agent := startTSAgent(t, e, bin)
	id := openAgentTerminal(t, agent, []*page{d, p}, "build")
	for _, dir := range []string{"build", "dist", "src"} {
		if err := os.MkdirAll(filepath.Join(e.home, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"ls", "git status 2>/dev/null || echo 'not a git repository'"} {
		if r := agent.must("run_command", map[string]any{"terminal": id, "command": c}); r["status"] != "finished" {
			t.Fatalf("run_command %s: %v", c, r)
		}
	}
	asked := agent.call("run_command", map[string]any{"terminal": id, "command": "rm -rf build/ dist/"})
	d.waitJS("the approval bar", approvalBar(id, ".approval-approve"), 15*time.Second)
	p.waitJS("the approval bar", approvalBar(id, ".approval-approve"), 15*time.Second)
	save(d, "approval-desktop-dark")
	d.colorScheme("light")
	save(d, "approval-desktop-light")
	save(p, "approval-phone-dark")
	d.click("Approve", `.terminal-view[data-terminal="`+id+`"] .approval-approve`)
	agent.wait("the approved command", asked, 30*time.Second)
	d.waitJS("Approved by …", approvalBar(id, `.approval.answered .approval-outcome`), 10*time.Second)
	save(d, "approval-answered-light")
	d.colorScheme("dark")
	d.waitJS("the bar to go", fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q] .terminal-approvalbar').hidden`, id), 20*time.Second)
	r := runApproved(t, agent, d, id, passwordPrompt)
	if r["status"] != "input_awaited" {
		t.Fatalf("run_command at a password prompt: %v", r)
	}
	d.waitJS("the password bar", approvalBar(id, ".approval.secret"), 15*time.Second)
	p.waitJS("the password bar", approvalBar(id, ".approval.secret"), 15*time.Second)
	save(d, "secret-prompt-desktop-dark")
	save(p, "secret-prompt-phone-dark")
}
