package cmdutil

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestClassify(t *testing.T) {
	get := func(err error) error { return &url.Error{Op: "Get", URL: "https://hub:6443/api", Err: err} }
	tests := []struct {
		name string
		err  error
		want Failure
	}{
		{"connection refused", get(&net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}), FailureUnreachable},
		{"no such host", get(&net.DNSError{Err: "no such host", Name: "hub", IsNotFound: true}), FailureUnreachable},
		{"deadline", fmt.Errorf("request: %w", context.DeadlineExceeded), FailureUnreachable},
		{"unknown authority", get(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), FailureUntrusted},
		{"wrong host", get(&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "hub"}}), FailureWrongHost},
		{"unauthorized", apierrors.NewUnauthorized("no"), FailureUnauthorized},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x", errors.New("no")), FailureForbidden},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "x"), FailureOther},
		{"other", errors.New("boom"), FailureOther},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("%s: classify(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}
