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
//
// Most tests wait on the page far more than they work, so they call
// t.Parallel: go test runs two at a time on two cores (its -parallel
// default), each in its own browser context. A test runs alone when what
// it checks depends on the machine's load: the tab's memory or
// responsiveness, timings (the hosts' speed, short liveness timeouts,
// the renderer's choice on a software GPU), or a flood or paste of
// megabytes through the page.
package e2e
