// Package cli is termhost's command-line client: the commands that drive a
// running server over AHP (run, attach, ls, share, kill, approvals, approve, deny, mcp), and the
// commands that measure one (bench) or read its audit trail (audit). The
// command cmd/termhost dispatches to them; the server itself is wired in
// package serve.
package cli

// Run is "termhost run".
func Run(args []string) int { return newApp().runCommand(args) }

// Attach is "termhost attach".
func Attach(args []string) int { return newApp().attachCommand(args) }

// Ls is "termhost ls".
func Ls(args []string) int { return newApp().lsCommand(args) }

// Share is "termhost share".
func Share(args []string) int { return newApp().shareCommand(args) }

// Kill is "termhost kill".
func Kill(args []string) int { return newApp().killCommand(args) }

// Approvals is "termhost approvals".
func Approvals(args []string) int { return newApp().approvalsCommand(args) }

// Approve is "termhost approve".
func Approve(args []string) int { return newApp().approveCommand(args) }

// Deny is "termhost deny".
func Deny(args []string) int { return newApp().denyCommand(args) }

// MCP is "termhost mcp": the agent's tools over MCP on stdin and stdout,
// reaching the running server like the other client commands.
func MCP(args []string) int { return newApp().mcpCommand(args) }
