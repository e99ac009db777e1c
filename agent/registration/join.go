package registration

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// hubError is an error from the hub, said in terms an operator can act on.
type hubError struct {
	server, identity string
	err              error
}

func (e *hubError) Error() string { return explain(e.err, e.server, e.identity) }
func (e *hubError) Unwrap() error { return e.err }

// join obtains hub credentials with the bootstrap kubeconfig and stores
// them, retrying until it succeeds or ctx ends.
func (r *Registration) join(ctx context.Context) (*Credentials, error) {
	var (
		pending *csrRequest
		creds   *Credentials
	)
	err := retry(ctx, "Cannot join the hub yet; retrying", func(ctx context.Context) error {
		var err error
		creds, err = r.joinOnce(ctx, &pending)
		return err
	})
	return creds, err
}

// joinOnce makes one attempt at joining. A CSR it created survives in
// *pending across attempts, so that a failed attempt does not ask again.
func (r *Registration) joinOnce(ctx context.Context, pending **csrRequest) (*Credentials, error) {
	logger := klog.FromContext(ctx)
	b, err := r.loadBootstrap(ctx)
	if err != nil {
		return nil, err
	}
	if b.used {
		return nil, fmt.Errorf("%w: the bootstrap kubeconfig holds no credentials: %s", errNoBootstrap, bootstrapUsedHelp)
	}
	hubErr := func(err error) error {
		return &hubError{server: b.hub.Server, identity: bootstrapCredential, err: err}
	}
	mcs, err := newHubClient(b.config)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(b.config)
	if err != nil {
		return nil, err
	}
	if err := r.ensureManagedCluster(ctx, mcs, hubErr); err != nil {
		return nil, err
	}
	if err := r.saveAgentID(ctx); err != nil {
		return nil, err
	}
	csrs := kube.CertificatesV1().CertificateSigningRequests()
	if *pending == nil {
		p, err := requestCertificate(ctx, csrs, r.cfg.ClusterName, r.me.agentID, r.cfg.CertificateExpiration)
		if errors.Is(err, errTooManyPending) {
			return nil, err
		}
		if err != nil {
			return nil, hubErr(err)
		}
		*pending = p
		logger.Info("Asked the hub for a client certificate; waiting for a hub admin to accept the cluster", "csr", p.name)
	}
	certPEM, err := waitForCertificate(ctx, csrs, r.cfg.ClusterName, *pending)
	if errors.Is(err, errCSRGone) {
		*pending = nil
		return nil, err
	}
	if err != nil {
		return nil, hubErr(err)
	}
	creds, err := newCredentials(r.cfg.ClusterName, r.me.agentID, b.hub, (*pending).keyPEM, certPEM)
	if err != nil {
		*pending = nil
		return nil, fmt.Errorf("the hub issued a certificate that cannot be used: %w", err)
	}
	if err := storeCredentials(ctx, r.cfg.Spoke, r.cfg.Namespace, creds); err != nil {
		return nil, err
	}
	*pending = nil
	logger.Info("Joined the hub", "serial", creds.Cert.SerialNumber.String(), "notAfter", creds.Cert.NotAfter)
	return creds, nil
}

// ensureManagedCluster creates the cluster's ManagedCluster, or checks that
// the existing one is this cluster's.
func (r *Registration) ensureManagedCluster(ctx context.Context, hub client.Client, hubErr func(error) error) error {
	mc := &clusterv1.ManagedCluster{}
	err := hub.Get(ctx, client.ObjectKey{Name: r.cfg.ClusterName}, mc)
	if apierrors.IsNotFound(err) {
		mc = newManagedCluster(r.cfg.ClusterName, r.me, r.cfg.LeaseDurationSeconds)
		if err = hub.Create(ctx, mc); err == nil {
			klog.FromContext(ctx).Info("Created the ManagedCluster on the hub", "managedCluster", klog.KObj(mc))
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return hubErr(err)
		}
		err = hub.Get(ctx, client.ObjectKey{Name: r.cfg.ClusterName}, mc)
	}
	if err != nil {
		return hubErr(err)
	}
	if reason := heldByAnother(mc, r.me); reason != "" {
		return errors.New(reason)
	}
	return nil
}

// saveAgentID records the agent id on the spoke before the agent asks for
// a certificate, so that a restarted agent counts the CSRs it left pending
// as its own.
func (r *Registration) saveAgentID(ctx context.Context) error {
	st, err := readSecret(ctx, r.cfg.Spoke, r.cfg.Namespace)
	if err != nil {
		return err
	}
	if st.clusterName == r.cfg.ClusterName && st.agentID == r.me.agentID {
		return nil
	}
	return writeSecret(ctx, r.cfg.Spoke, r.cfg.Namespace, map[string][]byte{
		ClusterNameFile: []byte(r.cfg.ClusterName),
		AgentNameFile:   []byte(r.me.agentID),
	})
}
