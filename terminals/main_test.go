package terminals

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain runs the package's tests with readers that park after 1 ms of
// quiet instead of 2 s, so that every test also exercises output, input,
// exit, dispose and hand-over with the reader parked in the watcher.
func TestMain(m *testing.M) {
	parkAfter = time.Millisecond
	goleak.VerifyTestMain(m)
}
