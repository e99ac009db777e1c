package cli

import (
	"errors"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// hubDown says whether err means that the hub could not be reached or is
// starting: it refused or reset the connection, closed it before
// answering, or answered 503. A --wait rides that out until its --timeout,
// as a hub restarts in moments.
func hubDown(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || apierrors.IsServiceUnavailable(err)
}
