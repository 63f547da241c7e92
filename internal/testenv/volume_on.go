//go:build volume

package testenv

const volume = true
