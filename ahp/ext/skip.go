package ext

// SkipNotice is the params of NotifySkipped. It comes just before the
// terminal/data envelope, at serverSeq RedrawSeq, whose data is the redraw
// of the screen that stands in for the Bytes of output the connection
// skipped. The notice is not an action: it names that serverSeq under
// another key, so the envelope is the only frame whose params carry it
// (serverSeq strictly grows on a connection).
type SkipNotice struct {
	Channel   string `json:"channel"`
	Bytes     int64  `json:"bytes"`
	RedrawSeq int64  `json:"redrawSeq"`
}
