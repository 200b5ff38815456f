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
//	init → server  RelayDialed, with the connection's descriptor, or without one when the connect failed
const (
	RelayAccepted = 'A'
	RelayDial     = 'D'
	RelayDialed   = 'R'
	// RelayListener (init → server, the supervised mode) carries the
	// seccomp listener of the command's socket filter.
	RelayListener = 'L'
)
