package monolock

import (
	"context"
	"crypto/tls"
	"net"
	"syscall"
)

// fastOpenDialer returns d set up to dial with TCP Fast Open: a copy of a
// *net.Dialer, or of a *tls.Dialer's NetDialer (&net.Dialer{} when nil),
// whose Control also sets TCP_FASTOPEN_CONNECT. Other Dialers are returned
// unchanged: TFO needs the socket before it connects.
func fastOpenDialer(d Dialer) Dialer {
	switch d := d.(type) {
	case *net.Dialer:
		return withFastOpen(d)
	case *tls.Dialer:
		td := *d
		nd := d.NetDialer
		if nd == nil {
			nd = &net.Dialer{}
		}
		td.NetDialer = withFastOpen(nd)
		return &td
	}
	return d
}

// withFastOpen returns a copy of d whose control function (ControlContext
// when set, which net.Dialer prefers, else Control) first runs d's own
// and then enables TFO on the socket.
func withFastOpen(d *net.Dialer) *net.Dialer {
	nd := *d
	if cc := d.ControlContext; cc != nil {
		nd.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
			if err := cc(ctx, network, address, c); err != nil {
				return err
			}
			return fastOpenControl(network, address, c)
		}
		return &nd
	}
	ctl := d.Control
	nd.Control = func(network, address string, c syscall.RawConn) error {
		if ctl != nil {
			if err := ctl(network, address, c); err != nil {
				return err
			}
		}
		return fastOpenControl(network, address, c)
	}
	return &nd
}
