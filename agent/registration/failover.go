package registration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// A hub of several members (docs/ha.md) answers at several addresses, each
// member with a serving certificate that also names the address in the
// agent's hub kubeconfig. The agent keeps that kubeconfig, its client
// certificate and its TLS checks, and only dials another member's address
// when the one it used last does not answer: no re-registration, no new
// kubeconfig.
const (
	// hubDialTimeout bounds the connection attempt to one hub address
	// before the next is tried; a member on the same network answers in
	// milliseconds.
	hubDialTimeout = 3 * time.Second
	// hubUserTimeout closes a connection whose data stays unacknowledged
	// this long (TCP_USER_TIMEOUT): a member that vanished (a killed
	// machine, a cut network) sends no reset, and the kernel would
	// otherwise retransmit for many minutes. client-go's HTTP/2 health
	// check (a ping after 30 s of silence, 15 s to answer) is the backstop.
	hubUserTimeout = 10 * time.Second
)

// hubDialer dials the hub's address or, when it does not answer, the
// further addresses of the same hub, starting from the one that answered
// last.
type hubDialer struct {
	// addrs are host:port, the kubeconfig's first.
	addrs []string
	// last is the index in addrs of the address that answered last.
	last atomic.Int32
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// newHubDialer returns a dialer for the hub at server (an https URL) and
// its further addresses others (host:port); nil when there are none, so
// that a single-address hub is dialled as before.
func newHubDialer(server string, others []string) *hubDialer {
	primary := hubAddress(server)
	if primary == "" || len(others) == 0 {
		return nil
	}
	addrs := []string{primary}
	for _, a := range others {
		if !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 1 {
		return nil
	}
	d := &net.Dialer{Timeout: hubDialTimeout, KeepAlive: 30 * time.Second, Control: setUserTimeout}
	return &hubDialer{addrs: addrs, dial: d.DialContext}
}

// DialContext dials addr; when addr is the hub's, it tries every address of
// the hub in turn until one answers.
func (d *hubDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if !slices.Contains(d.addrs, addr) {
		return d.dial(ctx, network, addr)
	}
	start := int(d.last.Load())
	var errs []error
	for k := range d.addrs {
		i := (start + k) % len(d.addrs)
		conn, err := d.dial(ctx, network, d.addrs[i])
		if err == nil {
			if prev := d.last.Swap(int32(i)); int(prev) != i {
				klog.FromContext(ctx).Info("Connected to another address of the hub", "address", d.addrs[i], "unreachable", d.addrs[prev])
			}
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	// Each error is a dial *net.OpError, which hubUnreachable recognises.
	return nil, fmt.Errorf("no address of the hub answers: %w", errors.Join(errs...))
}

// setUserTimeout sets TCP_USER_TIMEOUT on a hub connection.
func setUserTimeout(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(hubUserTimeout.Milliseconds()))
	})
	if err != nil {
		return err
	}
	return serr
}
