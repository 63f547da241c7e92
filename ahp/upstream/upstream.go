// Package upstream holds pinned copies of the official AHP JSON schemas
// and test fixtures (README.md names their source, revision and license), so
// that tests need nothing outside the repository. It is test data: only test
// code imports it.
package upstream

import "embed"

// FS holds schema/, schema-1.x/ and fixtures/ as copied from upstream.
//
//go:embed schema schema-1.x fixtures
var FS embed.FS
