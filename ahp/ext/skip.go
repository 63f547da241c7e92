package ext

// SkipNotice is the params of NotifySkipped. It comes just before the
// terminal/data envelope, at ServerSeq, whose data is the redraw of the
// screen that stands in for the Bytes of output the connection skipped.
type SkipNotice struct {
	Channel   string `json:"channel"`
	Bytes     int64  `json:"bytes"`
	ServerSeq int64  `json:"serverSeq"`
}
