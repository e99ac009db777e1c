package cmdutil

import (
	"errors"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// HubDown says whether err means that the hub could not be reached or is
// starting: it refused or reset the connection, closed it before
// answering, or answered 503. A --wait rides that out until its --timeout,
// as a hub restarts in moments.
func HubDown(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || apierrors.IsServiceUnavailable(err)
}

// HubStarting says whether err, from a hub that a --wait saw down, means
// that it is starting again: its API server answers a moment before it
// serves the hub's own kinds again (their definitions load after it
// listens), so those read as unknown kinds or missing resources. From a
// hub that never went down, the same error means a server that is no hub.
func HubStarting(err error) bool {
	if meta.IsNoMatchError(err) {
		return true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	return s.Reason == metav1.StatusReasonNotFound && (s.Details == nil || s.Details.Name == "")
}

// StartingReason is what a --wait says about a hub that is starting: the
// error itself, not the guess that the server is no hub.
func StartingReason(err error) error {
	if nh, ok := errors.AsType[*notHubError](err); ok {
		return nh.err
	}
	return err
}
