package podagent

import (
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
)

// podInterface is the pod's network interface as CNI plugins name it.
const podInterface = "eth0"

// savedRoutes are the interface's routes when it was cut: taking a link
// down drops them, and bringing it up restores only the connected one.
type savedRoutes []netlink.Route

// cut takes the pod's interface down: nothing reaches the server or
// leaves it, and its sockets stay open, as when a host loses its network.
// The server's container needs CAP_NET_ADMIN.
func (a *agent) cut() error {
	if os.Getpid() != 1 {
		// Outside a container this would be the host's own interface.
		return errors.New("podagent: cut: the agent is not its container's first process")
	}
	link, err := netlink.LinkByName(podInterface)
	if err != nil {
		return fmt.Errorf("podagent: cut: %w", err)
	}
	routes, err := netlink.RouteList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("podagent: cut: list routes: %w", err)
	}
	a.mu.Lock()
	if a.routes == nil {
		a.routes = routes
	}
	a.mu.Unlock()
	if err := netlink.LinkSetDown(link); err != nil {
		return fmt.Errorf("podagent: cut: %w", err)
	}
	return nil
}

// restore brings the interface up and puts back the routes it had.
func (a *agent) restore() error {
	link, err := netlink.LinkByName(podInterface)
	if err != nil {
		return fmt.Errorf("podagent: restore: %w", err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("podagent: restore: %w", err)
	}
	a.mu.Lock()
	routes := a.routes
	a.routes = nil
	a.mu.Unlock()
	var errs []error
	for _, r := range routes {
		r.LinkIndex = link.Attrs().Index
		if err := netlink.RouteReplace(&r); err != nil {
			errs = append(errs, fmt.Errorf("route %s: %w", r, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("podagent: restore: %w", err)
	}
	return nil
}
