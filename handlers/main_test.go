package handlers_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Tests that only wait on servers of their own call t.Parallel. Those that
// count the process's goroutines, descriptors or children, or that work
// against a rate or a clock, run alone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
