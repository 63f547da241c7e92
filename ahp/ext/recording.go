package ext

// RecordParams are the params of MethodRecord: On starts or resumes the
// recording of the terminal Channel, false pauses it.
type RecordParams struct {
	Channel string `json:"channel"` // the terminal
	On      bool   `json:"on"`
}

// Values of MetaRecording.
const (
	RecordingOn      = "recording"
	RecordingPaused  = "paused"
	RecordingStopped = "stopped" // the terminal exited
)
