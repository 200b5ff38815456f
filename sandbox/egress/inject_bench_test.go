package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
)

// BenchmarkDownload is a 64 MiB HTTPS download through the proxy, side by
// side: tunnelled (the proxy splices bytes it cannot read) and terminated
// (the proxy decrypts, scans the request for sentinels and encrypts
// again, as toward an inject host). docs/performance.md has the numbers.
func BenchmarkDownload(b *testing.B) {
	const size = 64 << 20
	chunk := make([]byte, 1<<20)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for range size / len(chunk) {
			_, _ = w.Write(chunk)
		}
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	ca, err := NewCA()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"tunnelled", "terminated"} {
		b.Run(mode, func(b *testing.B) {
			lo := netip.MustParseAddr("127.0.0.1")
			h := &Handler{Rules: Rules{Allowed: []string{"dl.example.com", "127.0.0.1"}}, Hosts: map[string]netip.Addr{"dl.example.com": lo}}
			trust := roots
			if mode == "terminated" {
				h.Inject = &Inject{CA: ca, Roots: roots, Secrets: []Secret{{Name: "T", Real: "ghp_0123456789abcdefghij0123456789abcdef", Sentinel: Sentinel("ghp_0123456789abcdefghij0123456789abcdef")}}}
				trust = x509.NewCertPool()
				trust.AppendCertsFromPEM(ca.CertPEM())
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go h.ServeConn(context.Background(), c)
				}
			}()
			proxy, _ := url.Parse("http://" + ln.Addr().String())
			client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: trust}, DisableKeepAlives: true}}
			u := "https://dl.example.com:" + strconv.Itoa(port) + "/"
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				resp, err := client.Get(u)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != size {
					b.Fatalf("read %d bytes", n)
				}
			}
		})
	}
}
