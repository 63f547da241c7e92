//go:build !volume

package testenv

const volume = false
