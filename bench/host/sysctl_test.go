package host

import (
	"errors"
	"io/fs"
	"testing"
)

// A sysctl is read from /proc/sys by its dotted name; a multi-value
// setting comes back with its fields joined by one space.
func TestSysctl(t *testing.T) {
	fakeProc(t, map[string]string{
		"sys/net/ipv4/ip_local_port_range": "32768\t60999\n",
		"sys/net/core/somaxconn":           "4096\n",
	})
	for name, want := range map[string]string{
		"net.ipv4.ip_local_port_range": "32768 60999",
		"net.core.somaxconn":           "4096",
	} {
		got, err := Sysctl(name)
		if err != nil || got != want {
			t.Errorf("Sysctl(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := Sysctl("net.core.missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing sysctl: err = %v, want one wrapping fs.ErrNotExist", err)
	}
	for _, bad := range []string{"", "net/core/somaxconn", "net..core"} {
		if _, err := Sysctl(bad); err == nil {
			t.Errorf("Sysctl(%q): no error for a bad name", bad)
		}
	}
}
