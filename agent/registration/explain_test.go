package registration

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestExplainSaysWhatAnOperatorCanDo(t *testing.T) {
	get := func(err error) error { return &url.Error{Op: "Get", URL: "https://hub:6443/apis", Err: err} }
	leases := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tc := range []struct {
		name, identity string
		err            error
		want           string
		rejected       bool
	}{
		{name: "wrong token", identity: bootstrapCredential, err: apierrors.NewUnauthorized("Unauthorized"),
			want: "the hub at https://hub:6443 rejected the bootstrap credential (401 Unauthorized): it is wrong, expired or revoked", rejected: true},
		{name: "not accepted yet", identity: clientCertificate, err: apierrors.NewForbidden(leases, "managed-cluster-lease", errors.New("no RBAC")),
			want: "forbids it (has a hub admin accepted the cluster?)"},
		{name: "bootstrap role missing", identity: bootstrapCredential, err: apierrors.NewForbidden(leases, "x", errors.New("no RBAC")),
			want: "the hub at https://hub:6443 forbids it: leases.coordination.k8s.io \"x\" is forbidden: no RBAC"},
		{name: "wrong CA", identity: bootstrapCredential, err: get(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
			want: "presents a certificate that the CA in the kubeconfig does not verify", rejected: true},
		{name: "wrong host name", identity: bootstrapCredential, err: get(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "hub"}),
			want: "presents a certificate that is not valid for it"},
		{name: "connection refused", identity: bootstrapCredential, err: get(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
			want: "the hub at https://hub:6443 is unreachable: Get \"https://hub:6443/apis\": dial tcp: connection refused"},
		{name: "unknown host", identity: bootstrapCredential, err: get(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "hub"}}),
			want: "the hub's host name does not resolve: lookup hub: no such host"},
		{name: "anything else", identity: bootstrapCredential, err: errors.New("boom"), want: "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(explain(tc.err, "https://hub:6443", tc.identity)).To(ContainSubstring(tc.want))
			g.Expect(rejected(tc.err)).To(Equal(tc.rejected))
		})
	}
}
