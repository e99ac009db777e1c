//go:build !unix

package hub

import (
	"errors"
	"syscall"
)

// reusePort fails: sharing a port between processes needs SO_REUSEPORT.
func reusePort(_, _ string, _ syscall.RawConn) error {
	return errors.New("--webhook-reuse-port needs SO_REUSEPORT, which this operating system lacks: put a load balancer in front of the replicas instead")
}
