package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
)

type openIn struct {
	Host    string   `json:"host,omitempty" jsonschema:"the host to open it on, as list_terminals names hosts (default: the server's own)"`
	Name    string   `json:"name,omitempty" jsonschema:"title of the terminal, shown to the people watching"`
	Cwd     string   `json:"cwd,omitempty" jsonschema:"absolute working directory on the server's machine (default: the server's)"`
	Command []string `json:"command,omitempty" jsonschema:"a program and its arguments to run instead of the user's shell (run_command then cannot be used)"`
}

func (in openIn) hostName() string { return in.Host }

type openOut struct {
	Terminal
}

// shellReady bounds how long open waits for the shell's integration to
// report in, so that run_command works right after.
const shellReady = 10 * time.Second

func (a *Agent) open(ctx context.Context, s *session, in openIn) (openOut, string, error) {
	if in.Cwd != "" && !filepath.IsAbs(in.Cwd) {
		return openOut{}, "", fmt.Errorf("cwd %q is not an absolute path: pass a full path such as /home/me/project", clip(in.Cwd, 200))
	}
	if len(in.Name) > ahp.MaxTitle {
		return openOut{}, "", fmt.Errorf("name is %d bytes; at most %d", len(in.Name), ahp.MaxTitle)
	}
	c, err := s.conn(ctx)
	if err != nil {
		return openOut{}, "", err
	}
	id := client.RandomID(6)
	uri := ahp.TerminalURI(id)
	claim := s.claim
	p := ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Cols: 120, Rows: 32}
	if in.Name != "" {
		p.Name = &in.Name
	}
	if in.Cwd != "" {
		p.Cwd = ahp.FileURI(in.Cwd)
	}
	if len(in.Command) > 0 {
		if p.Meta, err = json.Marshal(map[string][]string{ext.MetaCommand: in.Command}); err != nil {
			return openOut{}, "", fmt.Errorf("command: %w", err)
		}
	}
	if _, err := c.Call(ctx, ahp.MethodCreateTerminal, p); err != nil {
		return openOut{}, "", s.a.explain(err)
	}
	s.mu.Lock()
	s.opened[uri] = true
	s.mu.Unlock()
	if _, _, err := s.follow(ctx, uri); err != nil {
		return openOut{}, "", err
	}
	if len(in.Command) == 0 {
		// The shell reports its integration at its first prompt; a shell
		// without it (or a slow one) is reported as such, not waited for.
		_, _ = s.wait(ctx, time.Now().Add(shellReady), 0, func() bool {
			st, ok := c.Terminal(uri)
			return !ok || st.Lifecycle.Exited() || st.SupportsCommandDetection != nil && *st.SupportsCommandDetection
		})
	}
	out := openOut{Terminal: s.describe(c, infoOf(c, uri))}
	text := fmt.Sprintf("Opened terminal %s (%s), watched live at %s.", id, out.State, out.URL)
	if len(in.Command) == 0 && !out.ShellIntegration {
		text += " Its shell reports no command ends (no shell integration): use send_input and wait_for instead of run_command."
	}
	return out, text, nil
}

// infoOf is a terminal's catalogue entry (or a bare one while the
// catalogue has not caught up).
func infoOf(c *client.Client, uri string) ahp.TerminalInfo {
	if root, ok := c.Root(); ok {
		for _, info := range root.Terminals {
			if info.Resource == uri {
				return info
			}
		}
	}
	info := ahp.TerminalInfo{Resource: uri, Lifecycle: ahp.Running()}
	if st, ok := c.Terminal(uri); ok {
		info.Title, info.Claim, info.Lifecycle = st.Title, st.Claim, st.Lifecycle
	}
	return info
}
