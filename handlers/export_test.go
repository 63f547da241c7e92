package handlers

import "time"

// FakeClock is the share store's test clock, for the external tests.
type FakeClock = fakeClock

// NewFakeClock returns a clock standing at now until Advance moves it.
func NewFakeClock(now time.Time) *FakeClock { return &fakeClock{now: now} }

// UseClock makes share expiry follow clk instead of the wall clock.
func (c *Config) UseClock(clk *FakeClock) { c.clock = clk }

// MaxDownloads is the bound of recording downloads in progress.
const MaxDownloads = maxDownloads
