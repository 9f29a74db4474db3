package host

import (
	"net"
	"testing"
	"time"
)

// TIME_WAIT sockets (st 06) are counted by their remote address: the IP
// in host-order 32-bit words, the port big-endian hex, an IPv4 peer of a
// tcp6 socket as a v4-mapped address.
func TestTimeWaitFromProcNetTCP(t *testing.T) {
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	fakeProc(t, map[string]string{
		"net/tcp": header +
			"   0: 0100007F:9C40 0100007F:1F90 06 00000000:00000000 03:00000F9F 00000000     0        0 0 3 0000000000000000\n" +
			"   1: 0100007F:9C41 0100007F:1F90 06 00000000:00000000 03:00000F9F 00000000     0        0 0 3 0000000000000000\n" +
			"   2: 0100007F:9C42 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000\n" +
			"   3: 0100007F:9C43 0270A8C0:1B9E 06 00000000:00000000 03:00000F9F 00000000     0        0 0 3 0000000000000000\n",
		"net/tcp6": header +
			"   0: 0000000000000000FFFF00000100007F:9C44 0000000000000000FFFF00000100007F:1F90 06 00000000:00000000 03:00000F9F 00000000     0        0 0 3 0000000000000000\n",
	})
	for _, tt := range []struct {
		addrs []string
		want  int
	}{
		{[]string{"127.0.0.1:8080"}, 3},
		{[]string{"192.168.112.2:7070"}, 1},
		{[]string{"127.0.0.1:8080", "192.168.112.2:7070"}, 4},
		{[]string{"127.0.0.1:80"}, 0},
		{[]string{"server:8080"}, 0}, // a host name is not countable here
	} {
		if got, err := TimeWaitTo(tt.addrs); err != nil || got != tt.want {
			t.Errorf("TimeWaitTo(%v) = %d, %v; want %d", tt.addrs, got, err, tt.want)
		}
	}
}

func TestTimeWaitTo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Wait for the client's close, then close: the client
			// closed first and keeps the TIME_WAIT socket.
			_, _ = c.Read(make([]byte, 1))
			c.Close()
		}
	}()
	for range 5 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := TimeWaitTo([]string{l.Addr().String()})
		if err != nil {
			t.Fatal(err)
		}
		if n == 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("TimeWaitTo = %d, want the 5 closed client connections", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
