package testenv

import "testing"

// TestVolume: Volume skips exactly when the volume tag is absent.
func TestVolume(t *testing.T) {
	ran := false
	t.Run("volume", func(t *testing.T) {
		Volume(t)
		ran = true
	})
	if ran != volume {
		t.Errorf("volume test ran = %v with the volume tag %v", ran, volume)
	}
}
