//go:build !race

package content

const raceDetector = false
