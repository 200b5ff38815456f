// Package egress is the proxy a sandboxed command's network goes through.
//
// With the sandbox's network set to "proxy" (the default), a command runs
// in a network namespace of its own that has only a loopback: no route,
// no DNS, no other address. The sandbox's init listens there on
// 127.0.0.1:[ListenPort] and hands every connection it accepts, as a file
// descriptor over a unix socket pair, to the server, which serves it with
// a [Handler]. HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (and their lower-case
// twins) point at that port, so a program that honours them reaches the
// proxy; one that ignores them reaches nothing.
//
//	command ── TCP 127.0.0.1:3128 (its own namespace) ── init ══ fd over a socket pair ══ server: Handler ── host:port
//
// With Landlock alone there is no namespace: a seccomp supervisor in the
// server makes each TCP socket of the command, already connected to a
// loopback listener of the server's that serves it with the command's
// Handler, and refuses every other connection (package sandbox,
// supervise_linux.go).
//
// The handler speaks HTTP (CONNECT, and absolute-form requests for plain
// http://, one request per connection) and SOCKS5 (CONNECT), told apart
// by the first byte. For each connection it judges the host by [Rules]:
// a deny (deniedDomains, WebFetch(domain:…) deny rules) refuses, deny
// winning; an allow (allowedDomains, WebFetch(domain:…) allow rules,
// `*.example.com` matching every name below example.com) admits; anything
// else is put to the user by the handler's Ask (allow once — for this
// command —, for the session, or deny), and without anybody to ask it is
// refused with the rule that would admit it. An IP literal is matched only
// by a rule naming that literal. The addresses a name resolves to are
// checked as WebFetch checks them (internal/netguard): loopback, private,
// link-local and other non-public addresses are refused unless a rule
// names the address itself. A loopback host (localhost, 127.0.0.0/8, ::1)
// goes to a server of the session's own commands first ([Handler].Loopback),
// else to the host's own loopback only where a rule names that address and
// port (localhost:5432, [Rules.NamesLoopback]); a plain TCP client reaches
// such a port through the sandbox's init ([Handler.ServeForwarded]).
// Every refusal goes back to the client (a 403,
// a SOCKS failure) and, as one line naming the host and the rule to add,
// to the command's output through the handler's Notice.
package egress
