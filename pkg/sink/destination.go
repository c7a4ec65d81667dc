package sink

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Destinations decides which addresses a sink may connect to. A sink URL
// names any host; left unchecked, a configuration (or a DNS answer) could
// turn the controller into a client of the node's loopback services, the
// cloud metadata endpoint (link-local) or the cluster's API server, and the
// replies' status into an oracle. The check runs on the resolved address of
// every connection (net.Dialer.Control), so a name that resolves to a refused
// address is refused too, whatever the URL says.
type Destinations struct {
	// Allowed lists prefixes connected to even though they are refused by
	// default (the AIBOMConfig's spec.allowedDestinations).
	Allowed []netip.Prefix
	// APIServer lists the cluster's API server addresses (refused unless
	// Allowed covers them).
	APIServer []netip.Addr
}

// DestinationError is a connection refused by Destinations.
type DestinationError struct {
	Addr netip.Addr
	Why  string
}

func (e *DestinationError) Error() string {
	return fmt.Sprintf("destination %s refused: %s (allow it with the AIBOMConfig's spec.allowedDestinations)", e.Addr, e.Why)
}

// refusedBy says why an address is refused by default, or "".
func (d *Destinations) refusedBy(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsUnspecified():
		return "unspecified address"
	case a.IsMulticast():
		return "multicast"
	}
	if d != nil {
		for _, s := range d.APIServer {
			if s.Unmap() == a {
				return "the cluster's API server"
			}
		}
	}
	return ""
}

// Check returns a DestinationError when a is refused.
func (d *Destinations) Check(a netip.Addr) error {
	why := d.refusedBy(a)
	if why == "" {
		return nil
	}
	if d != nil {
		for _, p := range d.Allowed {
			if p.Contains(a.Unmap()) || p.Contains(a) {
				return nil
			}
		}
	}
	return &DestinationError{Addr: a.Unmap(), Why: why}
}

// control is a net.Dialer.Control that refuses connections to refused
// addresses; address is the resolved "ip:port".
func (d *Destinations) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("destination %q: %w", address, err)
	}
	return d.Check(ap.Addr())
}

// DialContext dials like a net.Dialer, refusing what d refuses.
func (d *Destinations) DialContext(dialer *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	guarded := *dialer
	guarded.Control = d.control
	return guarded.DialContext
}
