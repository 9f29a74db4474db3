package network

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// checkHost says what this process lacks to build a network.
func checkHost() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("%w: read capabilities: %v", ErrUnavailable, err)
	}
	has := func(c int) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	_, tunErr := os.Stat("/dev/net/tun")
	return unavailable(has(unix.CAP_NET_ADMIN) && has(unix.CAP_SYS_ADMIN), tunErr)
}

// unavailable words what is missing: the privileges, the TUN device or
// both; nil when nothing is.
func unavailable(privileged bool, tunErr error) error {
	var missing []string
	if !privileged {
		missing = append(missing, "root (CAP_NET_ADMIN and CAP_SYS_ADMIN, to create network namespaces and TUN devices)")
	}
	if tunErr != nil {
		missing = append(missing, "/dev/net/tun (the kernel's TUN driver: modprobe tun; inside a container, --device /dev/net/tun)")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: it needs %s; run as root or use --network loopback", ErrUnavailable, strings.Join(missing, " and "))
}
