package host

import (
	"fmt"
	"strings"
)

// Sysctl reads a kernel setting of this process's network namespace by
// its dotted name, such as "net.ipv4.ip_local_port_range"; fields of a
// multi-value setting are joined by single spaces.
func Sysctl(name string) (string, error) {
	if name == "" || strings.Contains(name, "/") || strings.Contains(name, "..") {
		return "", fmt.Errorf("host: bad sysctl name %q", name)
	}
	fs, err := proc()
	if err != nil {
		return "", err
	}
	fields, err := fs.SysctlStrings(name)
	if err != nil {
		return "", fmt.Errorf("host: sysctl %s: %w", name, err)
	}
	return strings.Join(fields, " "), nil
}
