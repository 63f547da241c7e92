// Package e2e drives the real termhost server with headless Chromium
// (chromedp): the workbench, real shells, reconnects, shell integration.
//
// Built only with the e2e tag (make test-go runs go test -tags e2e), so
// that go test ./... works on a machine without these. It needs, and fails
// without (make deps installs them: .ci/deps, npm ci):
//   - chromium (or TERMHOST_CHROMIUM),
//   - nginx and caddy (the reverse proxy tests; TERMHOST_NGINX,
//     TERMHOST_CADDY),
//   - bash,
//   - node with node_modules (the MCP SDK conformance and inspector tests).
package e2e
