package registration

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Names of the credentials, as explain says them.
const (
	bootstrapCredential = "bootstrap credential"
	clientCertificate   = "client certificate"
)

// explain turns err into one line that says what an operator can do about
// it. identity names the credential in use ("bootstrap token", "client
// certificate").
func explain(err error, server, identity string) string {
	var (
		unknownCA  x509.UnknownAuthorityError
		invalid    x509.CertificateInvalidError
		hostname   x509.HostnameError
		netErr     net.Error
		opErr      *net.OpError
		dnsErr     *net.DNSError
		statusCode apierrors.APIStatus
	)
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("the hub at %s rejected the %s (401 Unauthorized): it is wrong, expired or revoked", server, identity)
	case apierrors.IsForbidden(err) && identity == clientCertificate:
		return fmt.Sprintf("the hub at %s forbids it (has a hub admin accepted the cluster?): %s", server, apiMessage(err))
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("the hub at %s forbids it: %s", server, apiMessage(err))
	case errors.As(err, &unknownCA):
		return fmt.Sprintf("the hub at %s presents a certificate that the CA in the kubeconfig does not verify (wrong CA, or another server at that address): %v", server, err)
	case errors.As(err, &invalid), errors.As(err, &hostname):
		return fmt.Sprintf("the hub at %s presents a certificate that is not valid for it: %v", server, err)
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("the hub's host name does not resolve: %v", dnsErr)
	case errors.As(err, &opErr), errors.As(err, &netErr):
		return fmt.Sprintf("the hub at %s is unreachable: %v", server, err)
	case errors.As(err, &statusCode):
		return fmt.Sprintf("the hub at %s answered: %s", server, apiMessage(err))
	}
	return err.Error()
}

// rejected says whether err means that the hub no longer takes the
// agent's credentials, or is no longer the hub that the credentials name.
func rejected(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	return apierrors.IsUnauthorized(err) || errors.As(err, &unknownCA)
}

func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}
