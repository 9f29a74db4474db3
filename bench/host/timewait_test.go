package host

import (
	"net"
	"testing"
	"time"
)

func TestParseProcAddr(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0100007F:1F90", "127.0.0.1:8080", true},
		{"0270A8C0:1B9E", "192.168.112.2:7070", true},
		{"0000000000000000FFFF00000100007F:0050", "127.0.0.1:80", true},
		{"zz:1", "", false},
		{"0100007F", "", false},
	}
	for _, tt := range tests {
		got, ok := parseProcAddr(tt.in)
		if ok != tt.ok || (ok && got.String() != tt.want) {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
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
