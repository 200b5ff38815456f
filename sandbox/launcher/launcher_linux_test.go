package launcher

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// serverGone tells a live server from a dead one by its end of the socket
// pair:
// open (the server lives, even if it wrote something) or closed.
func TestServerGone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		write bool
		close bool
		want  bool
	}{
		{name: "server holds its end", want: false},
		{name: "server wrote and holds its end", write: true, want: false},
		{name: "server's end closed", close: true, want: true},
		{name: "server wrote, then its end closed", write: true, close: true, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			r, w := os.NewFile(uintptr(fds[0]), "init"), os.NewFile(uintptr(fds[1]), "server")
			defer r.Close()
			defer w.Close()
			if tc.write {
				if _, err := w.Write([]byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			if tc.close {
				w.Close()
			}
			if got := serverGone(int(r.Fd())); got != tc.want {
				t.Errorf("serverGone = %v, want %v", got, tc.want)
			}
		})
	}
}
