package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// failure sorts errors by what the user has to do about them.
type failure int

const (
	failureOther failure = iota
	// failureUnreachable: no connection (refused, no route, DNS, timeout).
	failureUnreachable
	// failureUntrusted: the server's certificate is not signed by a trusted CA.
	failureUntrusted
	// failureWrongHost: the certificate is trusted but not valid for the address used.
	failureWrongHost
	// failureUnauthorized: the server rejected the credentials (401).
	failureUnauthorized
	// failureForbidden: the credentials lack a permission (403).
	failureForbidden
)

// classify says which kind of failure err is.
func classify(err error) failure {
	var (
		hostErr    x509.HostnameError
		unknownCA  x509.UnknownAuthorityError
		invalid    x509.CertificateInvalidError
		verifyErr  *tls.CertificateVerificationError
		dnsErr     *net.DNSError
		opErr      *net.OpError
		netErr     net.Error
		statusErr  apierrors.APIStatus
		isTimeout  = errors.As(err, &netErr) && netErr.Timeout()
		isDeadline = errors.Is(err, context.DeadlineExceeded)
	)
	switch {
	case errors.As(err, &hostErr):
		return failureWrongHost
	case errors.As(err, &unknownCA), errors.As(err, &invalid), errors.As(err, &verifyErr):
		return failureUntrusted
	case errors.As(err, &statusErr) && apierrors.IsUnauthorized(err):
		return failureUnauthorized
	case errors.As(err, &statusErr) && apierrors.IsForbidden(err):
		return failureForbidden
	case errors.As(err, &dnsErr), errors.As(err, &opErr), errors.Is(err, syscall.ECONNREFUSED), isTimeout, isDeadline:
		return failureUnreachable
	}
	return failureOther
}

// explain wraps an error from an API server in a message that says where it
// happened and what to do about it. what says what the command was doing.
func explain(err error, where, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	switch classify(err) {
	case failureUnreachable:
		return fmt.Errorf("cannot reach %s (%s): %w\nCheck the address, and that the API server runs and this machine can connect to it", where, what, err)
	case failureUntrusted:
		return fmt.Errorf("%s presented a certificate that the kubeconfig's certificate authority does not trust (%s): %w\nCheck that the kubeconfig belongs to this server", where, what, err)
	case failureWrongHost:
		return fmt.Errorf("the certificate of %s is not valid for the address used (%s): %w\nUse an address that the certificate names", where, what, err)
	case failureUnauthorized:
		return fmt.Errorf("%s rejected the kubeconfig's credentials (%s): %w\nThey may have expired: get a fresh kubeconfig", where, what, err)
	case failureForbidden:
		return fmt.Errorf("%s refused: %s: %w\nUse a kubeconfig with administrator rights", where, what, err)
	}
	return fmt.Errorf("%s: %s: %w", where, what, err)
}
