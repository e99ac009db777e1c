package cmdutil

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

// Failure sorts errors by what the user has to do about them.
type Failure int

const (
	// FailureOther: none of the below.
	FailureOther Failure = iota
	// FailureUnreachable: no connection (refused, no route, DNS, timeout).
	FailureUnreachable
	// FailureUntrusted: the server's certificate is not signed by a trusted CA.
	FailureUntrusted
	// FailureWrongHost: the certificate is trusted but not valid for the address used.
	FailureWrongHost
	// FailureUnauthorized: the server rejected the credentials (401).
	FailureUnauthorized
	// FailureForbidden: the credentials lack a permission (403).
	FailureForbidden
)

// Classify says which kind of failure err is.
func Classify(err error) Failure {
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
		return FailureWrongHost
	case errors.As(err, &unknownCA), errors.As(err, &invalid), errors.As(err, &verifyErr):
		return FailureUntrusted
	case errors.As(err, &statusErr) && apierrors.IsUnauthorized(err):
		return FailureUnauthorized
	case errors.As(err, &statusErr) && apierrors.IsForbidden(err):
		return FailureForbidden
	case errors.As(err, &dnsErr), errors.As(err, &opErr), errors.Is(err, syscall.ECONNREFUSED), isTimeout, isDeadline:
		return FailureUnreachable
	}
	return FailureOther
}

// Explain wraps an error from an API server in a message that says where it
// happened and what to do about it. what says what the command was doing.
func Explain(err error, where, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	switch Classify(err) {
	case FailureUnreachable:
		return fmt.Errorf("cannot reach %s (%s): %w\nCheck the address, and that the API server runs and this machine can connect to it", where, what, err)
	case FailureUntrusted:
		return fmt.Errorf("%s presented a certificate that the kubeconfig's certificate authority does not trust (%s): %w\nCheck that the kubeconfig belongs to this server", where, what, err)
	case FailureWrongHost:
		return fmt.Errorf("the certificate of %s is not valid for the address used (%s): %w\nUse an address that the certificate names", where, what, err)
	case FailureUnauthorized:
		return fmt.Errorf("%s rejected the kubeconfig's credentials (%s): %w\nThey may have expired: get a fresh kubeconfig", where, what, err)
	case FailureForbidden:
		return fmt.Errorf("%s refused: %s: %w\nUse a kubeconfig with administrator rights", where, what, err)
	}
	return fmt.Errorf("%s: %s: %w", where, what, err)
}
