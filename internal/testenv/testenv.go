// Package testenv names the three ways the tests run, so that each test
// runs where it belongs and says why when it does not:
//
//   - make check (go test -short ./..., without -race): the inner loop. testing.Short()
//     is true; the browser tests (package e2e, build tag e2e) are not
//     built and the volume tests skip.
//   - make test-go (go test -race -tags 'lockrank e2e' ./...): every test
//     but the volume tests, under the race detector, browser tests
//     included.
//   - make test-big (go test -tags 'volume e2e', without -race): only the
//     volume tests, at full size, once.
//
// A volume test is one whose point is size (tens of megabytes, hundreds of
// sockets): it calls Volume first.
package testenv

import "testing"

// Volume skips t unless the tests were built with the volume tag (make
// test-big, which runs each volume test once at full size, without the
// race detector that would make it take minutes).
func Volume(tb testing.TB) {
	tb.Helper()
	if !volume {
		tb.Skip("volume test: runs at full size in make test-big (go test -tags volume)")
	}
}
