package ext

// ScreenResult is the result of MethodScreen (params: ahp.ChannelParams).
type ScreenResult struct {
	Cols      int      `json:"cols"`
	Rows      int      `json:"rows"`
	AltScreen bool     `json:"altScreen"`
	Lines     []string `json:"lines"`
}
