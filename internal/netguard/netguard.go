// Package netguard says whether an IP address is a public unicast one,
// for the tools that connect where a model asks: WebFetch (tools/web) and
// the Bash sandbox's egress proxy (sandbox/egress). Both
// refuse loopback, private, link-local (cloud metadata at 169.254.169.254
// included) and other non-public addresses unless the operator names them.
package netguard

import "net/netip"

// extraBlocked are IPv4 and IPv6 ranges that are not public unicast but
// that net/netip has no predicate for.
var extraBlocked = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "reserved (this network)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "private (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved (IETF protocol assignments)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved (benchmarking)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard)"},
}

// nat64 embeds an IPv4 address in its last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// AddressKind says why ip is not a public unicast address ("loopback",
// "private", "link-local", ...), or "" when it is one.
func AddressKind(ip netip.Addr) string {
	ip = ip.Unmap()
	// NAT64 addresses embed an IPv4 address; judge that one.
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		return AddressKind(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	for _, b := range extraBlocked {
		if b.prefix.Contains(ip) {
			return b.kind
		}
	}
	return ""
}
