package cli

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
		want failure
	}{
		{"connection refused", get(&net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}), failureUnreachable},
		{"no such host", get(&net.DNSError{Err: "no such host", Name: "hub", IsNotFound: true}), failureUnreachable},
		{"deadline", fmt.Errorf("request: %w", context.DeadlineExceeded), failureUnreachable},
		{"unknown authority", get(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), failureUntrusted},
		{"wrong host", get(&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "hub"}}), failureWrongHost},
		{"unauthorized", apierrors.NewUnauthorized("no"), failureUnauthorized},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x", errors.New("no")), failureForbidden},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "x"), failureOther},
		{"other", errors.New("boom"), failureOther},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("%s: classify(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}
