package launcher

// ProxyPort is the port, on 127.0.0.1 inside the command's network
// namespace, where init listens for the egress proxy's connections;
// HTTP_PROXY and the like point there.
const ProxyPort = 3128

// Relay message kinds, on the socket pair of sequenced packets at
// [Plan.ProxyFD], one byte of kind first:
//
//	init → server  RelayAccepted, with a connection's descriptor: a command connected to ProxyPort
//	server → init  RelayDial, then the port (2 bytes, big-endian): connect to 127.0.0.1:port here
//	init → server  RelayDialed, then the port, with the connection's descriptor, or without one when the connect failed
//	init → server  RelayForwarded, then 4 or 6 and the port, with a connection's descriptor: a command connected to a port of the host's loopback a rule names (Plan.LoopbackV4, LoopbackV6)
const (
	RelayAccepted  = 'A'
	RelayDial      = 'D'
	RelayDialed    = 'R'
	RelayForwarded = 'F'
	// RelayListener (init → server, the supervised mode) carries the
	// seccomp listener of the command's socket filter.
	RelayListener = 'L'
)
