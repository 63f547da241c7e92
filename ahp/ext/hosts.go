package ext

// Hosts (docs/protocol.md, "Hosts"): the other termhost servers a server's
// hosts file lists, which the workbench and the CLI reach with their own
// connections and their own credentials.
const (
	// NotifyHosts is the server's host list, on every change of its hosts
	// file: HostList. Only to connections that may list terminals (never
	// to a share link's).
	NotifyHosts = "x-termhost/hosts"
	// MetaHostName is the initialize result's key naming the host the
	// client talks to (termhost serve --host-name).
	MetaHostName = "termhost/hostName"
)

// HostList is GET <base>/api/hosts's answer and NotifyHosts's params: the
// home host (the server answering) and the other hosts, in the hosts
// file's order.
type HostList struct {
	Home  HomeHost `json:"home"`
	Hosts []Host   `json:"hosts"`
}

// HomeHost names the server answering.
type HomeHost struct {
	Name string `json:"name"`
}

// Host is another host: its name and the base URL a browser uses for it,
// ending with a slash.
type Host struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}
