package handlers

import (
	"time"

	dto "github.com/prometheus/client_model/go"
)

// FakeClock is the share store's test clock, for the external tests.
type FakeClock = fakeClock

// NewFakeClock returns a clock standing at now until Advance moves it.
func NewFakeClock(now time.Time) *FakeClock { return &fakeClock{now: now} }

// UseClock makes share expiry follow clk instead of the wall clock.
func (c *Config) UseClock(clk *FakeClock) { c.clock = clk }

// MaxDownloads is the bound of recording downloads in progress.
const MaxDownloads = maxDownloads

// PausedReaders is how many connections' readers wait for their unsent
// answers to drain (backpressure), and UnsentAnswers the bytes of answers
// queued and not yet sent by participants other than the owner.
func (s *Server) PausedReaders() int64 { return s.paused.Load() }
func (s *Server) UnsentAnswers() int64 { return s.heldTotal.Load() }

// InputWaits is how many connections' readers wait for room for their
// terminal/input (backpressure).
func (s *Server) InputWaits() int64 { return s.pausedInput.Load() }

// OverBudget is termhost_over_budget_total{kind}.
func (s *Server) OverBudget(kind string) float64 {
	var m dto.Metric
	if err := s.metrics.overBudget.WithLabelValues(kind).Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}
