//go:build !lockrank

package lockrank

import "sync"

// Mutex is a sync.Mutex of rank R (see the package doc).
type Mutex[R Rank] struct{ mu sync.Mutex }

// Lock locks m.
func (m *Mutex[R]) Lock() { m.mu.Lock() }

// Unlock unlocks m.
func (m *Mutex[R]) Unlock() { m.mu.Unlock() }

// Checked reports whether this build checks the lock order.
const Checked = false

// TryLock tries to lock m and reports whether it did.
func (m *Mutex[R]) TryLock() bool { return m.mu.TryLock() }
