//go:build race

package content

// raceDetector: this test binary runs with the race detector, whose
// sync.Pool drops a quarter of what it is given (to shake out misuse).
const raceDetector = true
