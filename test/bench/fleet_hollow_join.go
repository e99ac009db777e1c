package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/url"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/agent/registration"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// join creates the ManagedCluster and a CSR with the bootstrap token, on
// a connection of its own as the agent does, waits until the CSR is
// issued, and returns the agent's certificate.
func (a *hollowAgent) join(ctx context.Context) (*tls.Certificate, error) {
	boot := newHollowClient(a.sh.host, a.sh.tls, nil, a.sh.token)
	// The bootstrap connection is the agent's until it joined.
	defer boot.close()
	for attempt := 0; ; attempt++ {
		certPEM, keyPEM, err := a.joinOnce(ctx, boot)
		if err == nil {
			cert, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				return nil, fmt.Errorf("the issued certificate does not match the key: %w", err)
			}
			// Only the TLS handshake uses the certificate, and it needs
			// only the DER chain and the key: the parsed leaf would be
			// kept per cluster for nothing. The PEM copies are dropped.
			cert.Leaf = nil
			return &cert, nil
		}
		a.sh.failed("join", err)
		if !retry(ctx, attempt) {
			return nil, ctx.Err()
		}
	}
}

func (a *hollowAgent) joinOnce(ctx context.Context, boot *hollowClient) (certPEM, keyPEM []byte, err error) {
	mcPath := hubPath(clusterv1.GroupVersion, "", "managedclusters", a.name, "")
	err = boot.get(ctx, mcPath, nil, &hollowObject{})
	if apierrors.IsNotFound(err) {
		mc := registration.NewManagedCluster(a.name, a.clusterID, a.id,
			clusterv1.ClientConfig{URL: "https://" + a.name + ".hollow.invalid:6443"}, 0)
		// The hub decodes a custom resource only with its kind.
		mc.APIVersion, mc.Kind = clusterv1.GroupVersion.String(), "ManagedCluster"
		if err = boot.create(ctx, hubPath(clusterv1.GroupVersion, "", "managedclusters", "", ""), mc, nil); apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return nil, nil, err
	}
	csrs := hubPath(certificatesv1.SchemeGroupVersion, "", "certificatesigningrequests", "", "")
	sel := labels.Set{clusterv1.ClusterNameLabel: a.name}.String()
	// As the agent: its pending CSRs counted from the API server's cache.
	if err := boot.get(ctx, csrs, url.Values{"labelSelector": {sel}, "resourceVersion": {"0"}}, &hollowList{}); err != nil {
		return nil, nil, err
	}
	keyPEM, csr, err := registration.NewCSR(a.name, a.id, 0)
	if err != nil {
		return nil, nil, err
	}
	csr.APIVersion, csr.Kind = certificatesv1.SchemeGroupVersion.String(), "CertificateSigningRequest"
	created := &certificatesv1.CertificateSigningRequest{}
	if err := boot.create(ctx, csrs, csr, created); err != nil {
		return nil, nil, err
	}
	// As the agent: watch from the version the create returned; read the
	// CSR (from the cache, no older than that) only when a watch ends.
	q := url.Values{"labelSelector": {sel}, "fieldSelector": {"metadata.name=" + created.Name}}
	rv := created.ResourceVersion
	for {
		cert, err := waitIssued(ctx, boot, csrs, q, rv)
		if err != nil || len(cert) > 0 {
			return cert, keyPEM, err
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		var list certificatesv1.CertificateSigningRequestList
		read := url.Values{"resourceVersion": {rv}, "resourceVersionMatch": {"NotOlderThan"}}
		for k, v := range q {
			read[k] = v
		}
		if err := boot.get(ctx, csrs, read, &list); err != nil {
			return nil, nil, err
		}
		if len(list.Items) == 0 {
			return nil, nil, fmt.Errorf("CSR %s is gone", created.Name)
		}
		if cert := list.Items[0].Status.Certificate; len(cert) > 0 {
			return cert, keyPEM, nil
		}
		rv = list.ResourceVersion
	}
}

// waitIssued watches the CSR that q selects from rv until it holds a
// certificate or the hub ends the watch (nil, nil: list again).
func waitIssued(ctx context.Context, boot *hollowClient, csrs string, q url.Values, rv string) ([]byte, error) {
	w := url.Values{"resourceVersion": {rv}}
	for k, v := range q {
		w[k] = v
	}
	body, err := boot.watch(ctx, csrs, w)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var ev struct {
			Object certificatesv1.CertificateSigningRequest `json:"object"`
		}
		if dec.Decode(&ev) != nil {
			return nil, nil
		}
		if cert := ev.Object.Status.Certificate; len(cert) > 0 {
			return cert, nil
		}
	}
}
