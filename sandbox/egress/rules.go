package egress

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Rules are the domain lists a connection is judged by.
type Rules struct {
	// Allowed are the admitted hosts: names, `*.example.com` wildcards
	// (every name below example.com, not example.com itself), or IP
	// literals.
	Allowed []string
	// Denied are the refused hosts, in the same forms; a deny wins.
	Denied []string
}

// Verdict is what the rules say of a host.
type Verdict int

// Verdicts.
const (
	// Unlisted: no rule names the host; the user is asked.
	Unlisted Verdict = iota
	// Allowed: an allow rule names it.
	Allowed
	// Denied: a deny rule names it.
	Denied
)

// CheckPattern says what is wrong with a domain pattern, naming the
// setting it came from; nil when it is well formed.
func CheckPattern(setting, p string) error {
	if h, port, ok := hostAndPort(p); ok {
		switch _, _, loop := loopbackName(h); {
		case !loop:
			return fmt.Errorf("%s: %q names a port; a port is named only with the host's loopback (localhost:5432, 127.0.0.1:5432, [::1]:5432), other hosts are admitted on every port (write %s)", setting, p, h)
		case !validPort(port):
			return fmt.Errorf("%s: %q: the port must be one number from 1 to 65535 (no ranges or wildcards; name each port, or the host without a port for all of them)", setting, p)
		}
		return nil
	}
	q := strings.TrimPrefix(p, "*.")
	switch {
	case p == "" || q == "":
		return fmt.Errorf("%s: an empty domain; write a name such as example.com or *.example.com", setting)
	case strings.ContainsAny(q, "*/:?#@ ") && !isIP(q):
		return fmt.Errorf("%s: %q is not a domain; write a name such as example.com, *.example.com, or an IP address", setting, p)
	}
	return nil
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil
}

// normal is a host as rules compare it: lower case, no trailing dot, an
// IPv6 literal without brackets.
func normal(h string) string {
	return strings.Trim(strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), "."), "[]")
}

// Match reports whether pattern names host: the same name, or for
// `*.example.com` a name below example.com. An IP literal host is named
// only by the same literal.
func Match(pattern, host string) bool {
	p, h := normal(pattern), normal(host)
	if ha, err := netip.ParseAddr(h); err == nil {
		pa, err := netip.ParseAddr(p)
		return err == nil && pa.Unmap() == ha.Unmap()
	}
	if rest, ok := strings.CutPrefix(p, "*."); ok {
		return strings.HasSuffix(h, "."+rest)
	}
	return p == h
}

// Judge says what the rules make of host and which rule decided it.
func (r Rules) Judge(host string) (Verdict, string) {
	for _, p := range r.Denied {
		if Match(p, host) {
			return Denied, p
		}
	}
	for _, p := range r.Allowed {
		if Match(p, host) {
			return Allowed, p
		}
	}
	return Unlisted, ""
}

// NamesAddress reports whether an allow rule names ip itself (a literal):
// only then may a connection go to a non-public address.
func (r Rules) NamesAddress(ip netip.Addr) bool {
	for _, p := range r.Allowed {
		if pa, err := netip.ParseAddr(normal(p)); err == nil && pa.Unmap() == ip.Unmap() {
			return true
		}
	}
	return false
}

// loopbackName splits a rule that names the host's own loopback: localhost,
// an address of 127.0.0.0/8 or ::1, optionally with a port (localhost:5432,
// 127.0.0.1:5432, [::1]:5432). addrs are the addresses it names (localhost
// names 127.0.0.1 and ::1), port is 0 for every port; ok is false for any
// other rule.
func loopbackName(p string) (addrs []netip.Addr, port int, ok bool) {
	p = strings.ToLower(strings.TrimSpace(p))
	host := p
	if h, ps, err := net.SplitHostPort(p); err == nil {
		if !validPort(ps) {
			return nil, 0, false
		}
		host, port = h, atoi(ps)
	}
	host = normal(host)
	if host == "localhost" {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, port, true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" || !a.Unmap().IsLoopback() {
		return nil, 0, false
	}
	return []netip.Addr{a.Unmap()}, port, true
}

// hostAndPort splits a rule with a port (host:port, [v6]:port); ok is
// false for one without.
func hostAndPort(p string) (host, port string, ok bool) {
	if isIP(p) {
		return "", "", false
	}
	h, ps, err := net.SplitHostPort(strings.TrimSpace(p))
	return h, ps, err == nil
}

// NamesLoopback reports whether an allow rule names the host's own
// loopback address a on port: localhost (127.0.0.1 and ::1) or the
// address itself, with that port or none, and no deny rule names the
// host's loopback there. Only such a connection reaches a service of the
// host's loopback: a name that resolves to a loopback address does not.
func (r Rules) NamesLoopback(a netip.Addr, port int) bool {
	a = a.Unmap()
	names := func(list []string) bool {
		for _, p := range list {
			addrs, pp, ok := loopbackName(p)
			if ok && (pp == 0 || pp == port) && slices.Contains(addrs, a) {
				return true
			}
		}
		return false
	}
	return !names(r.Denied) && names(r.Allowed)
}

// LoopbackPorts are the ports of the host's loopback the allow rules name
// with a port (localhost:5432 gives 127.0.0.1:5432 and [::1]:5432), sorted
// and without repeats: where plain TCP clients reach them too (the
// sandbox's init listens on each inside the command's network namespace).
// A rule without a port names no listener: every port of it is reached
// through the proxy alone.
func (r Rules) LoopbackPorts() []netip.AddrPort {
	var out []netip.AddrPort
	for _, p := range r.Allowed {
		addrs, port, ok := loopbackName(p)
		if !ok || port == 0 {
			continue
		}
		for _, a := range addrs {
			if ap := netip.AddrPortFrom(a, uint16(port)); !slices.Contains(out, ap) && r.NamesLoopback(a, port) {
				out = append(out, ap)
			}
		}
	}
	slices.SortFunc(out, func(x, y netip.AddrPort) int { return x.Compare(y) })
	return out
}

// LoopbackAdvice is how an operator opens port of the host's loopback:
// the setting and the entry to add to it.
func LoopbackAdvice(port int) string {
	return fmt.Sprintf(`the host's own loopback is reached only on a port sandbox.network.allowedDomains names: add "localhost:%d" there`, port)
}

// validPort reports whether s is a port written plainly: 1 to 65535, no
// sign, no leading zero.
func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n <= 65535 && s == strconv.Itoa(n)
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
