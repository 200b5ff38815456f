package egress

import (
	"fmt"
	"net/netip"
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
