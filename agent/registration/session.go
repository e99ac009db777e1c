package registration

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// session is the agent's connection to the hub while one credential holds.
type session struct {
	creds  atomic.Pointer[Credentials]
	conn   *hubConnection
	client client.WithWatch
	kube   kubernetes.Interface
	// cluster follows the agent's ManagedCluster once the hub accepted it.
	cluster *clusterWatch
}

// HubSession is what a function of Config.SessionFuncs gets: the agent's
// connection to the hub while one credential holds.
type HubSession struct {
	// Config reaches the hub as the agent; its Host is the hub's API URL.
	// Clients built from it follow certificate rotations, since the
	// connection presents the newest certificate at every handshake.
	Config *rest.Config
	// TLSConfig and Dial are Config's TLS configuration and TCP dialer,
	// for a connection that is no HTTP request (the cluster proxy's
	// tunnel): TLSConfig presents the newest certificate at every
	// handshake, and every connection Dial opened is closed when the
	// certificate is swapped, so that it is opened again with the new one.
	TLSConfig *tls.Config
	Dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	// ClusterName and AgentID name the agent.
	ClusterName, AgentID string
	// Hub is the hub as the agent's kubeconfig names it: server, CA, TLS
	// server name, proxy (the add-ons' hub kubeconfigs name the same).
	Hub *clientcmdapi.Cluster
}

// hubErr says err in an operator's terms.
func (s *session) hubErr(err error) error {
	return &hubError{server: s.creds.Load().Hub.Server, identity: clientCertificate, err: err}
}

// serve runs a session with creds until they are no longer usable, and
// says why; or until ctx ends.
func (r *Registration) serve(ctx context.Context, creds *Credentials) error {
	conn, err := newHubConnection(creds.Hub, r.cfg.HubServers, creds.CertPEM, creds.KeyPEM)
	if err != nil {
		return fmt.Errorf("the stored hub kubeconfig is not usable: %w", err)
	}
	defer conn.close()
	s := &session{conn: conn}
	s.creds.Store(creds)
	if s.client, err = newHubClient(conn.config); err != nil {
		return err
	}
	if s.kube, err = kubernetes.NewForConfig(conn.config); err != nil {
		return err
	}
	if s.cluster, err = newClusterWatch(s.client, r.cfg.ClusterName, r.wakeStatus); err != nil {
		return err
	}

	r.current.Store(s)
	defer r.current.Store(nil)
	r.wakeStatus()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Go(func() { cancel(r.rotate(ctx, s)) })
	wg.Go(func() {
		if err := r.waitAccepted(ctx, s); err != nil {
			cancel(err)
			return
		}
		wg.Go(func() { cancel(r.renewLease(ctx, s)) })
		wg.Go(func() { s.cluster.run(ctx) })
		hs := HubSession{Config: rest.CopyConfig(conn.config), TLSConfig: conn.tls.Clone(), Dial: conn.dialer.DialContext, ClusterName: creds.ClusterName, AgentID: creds.AgentID, Hub: creds.Hub.DeepCopy()}
		for _, f := range r.cfg.SessionFuncs {
			wg.Go(func() { f(ctx, hs) })
		}
	})
	wg.Wait()
	return context.Cause(ctx)
}

// waitAccepted returns once the hub lets the agent read its
// ManagedCluster, which it does once it accepted the cluster and gave it
// its namespace and RBAC. Until then the lease and the session's
// functions (the work and policy agents' watches) would only be refused,
// each retrying on its own: with thousands of clusters joining at once,
// those refusals were much of the hub's work. It gives up, as the lease
// does, when the hub rejects the certificate maxRejections times in a row.
func (r *Registration) waitAccepted(ctx context.Context, s *session) error {
	logger := klog.FromContext(ctx)
	backoff := newBackoff(acceptedPollLimit)
	rejections, said := 0, false
	for {
		err := s.client.Get(ctx, client.ObjectKey{Name: r.cfg.ClusterName}, &clusterv1.ManagedCluster{})
		switch {
		case err == nil || apierrors.IsNotFound(err):
			// Said on every start, so that an agent restarted after the
			// cluster was accepted says so rather than nothing.
			logger.Info("The hub accepted the cluster")
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case rejected(err):
			if rejections++; rejections >= maxRejections {
				return fmt.Errorf("%d attempts in a row failed: %w", rejections, s.hubErr(err))
			}
		default:
			rejections = 0
		}
		if !said {
			logger.Info("Waiting for the hub to accept the cluster", "reason", s.hubErr(err).Error())
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff.Step()):
		}
	}
}

// acceptedPollLimit is the longest wait between two checks of whether
// the hub accepted the cluster.
const acceptedPollLimit = 10 * time.Second

// rotate renews the client certificate at each rotation deadline, and swaps
// the new one into the session. It returns an error once the certificate
// expired without a successor.
func (r *Registration) rotate(ctx context.Context, s *session) error {
	logger := klog.FromContext(ctx)
	for {
		creds := s.creds.Load()
		deadline := rotationDeadline(creds.Cert, r.cfg.RenewBefore, rand.Float64())
		logger.V(1).Info("Scheduled the rotation of the hub client certificate", "at", deadline, "notAfter", creds.Cert.NotAfter)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(deadline)):
		}
		renewed, err := r.renew(ctx, s)
		if err != nil {
			return err
		}
		s.creds.Store(renewed)
		if err := s.conn.swap(renewed.CertPEM, renewed.KeyPEM); err != nil {
			return err
		}
		logger.Info("Rotated the hub client certificate", "serial", renewed.Cert.SerialNumber.String(), "notAfter", renewed.Cert.NotAfter)
	}
}

// renew asks for a new certificate with a CSR that the current one
// authenticates, and stores it. It gives up when the current one expires.
func (r *Registration) renew(ctx context.Context, s *session) (*Credentials, error) {
	old := s.creds.Load()
	expiring, cancel := context.WithDeadline(ctx, old.Cert.NotAfter)
	defer cancel()
	csrs := s.kube.CertificatesV1().CertificateSigningRequests()
	var (
		pending *csrRequest
		renewed *Credentials
	)
	err := retry(expiring, "Cannot rotate the hub client certificate yet; retrying", func(ctx context.Context) error {
		if pending == nil {
			p, err := requestCertificate(ctx, csrs, old.ClusterName, old.AgentID, r.cfg.CertificateExpiration)
			if errors.Is(err, errTooManyPending) {
				return err
			}
			if err != nil {
				return s.hubErr(err)
			}
			pending = p
			klog.FromContext(ctx).Info("Asked the hub to renew the client certificate", "csr", p.name)
		}
		certPEM, err := waitForCertificate(ctx, csrs, old.ClusterName, pending)
		if errors.Is(err, errCSRGone) {
			pending = nil
			return err
		}
		if err != nil {
			return s.hubErr(err)
		}
		c, err := newCredentials(old.ClusterName, old.AgentID, old.Hub, pending.keyPEM, certPEM)
		if err != nil {
			pending = nil
			return fmt.Errorf("the hub issued a certificate that cannot be used: %w", err)
		}
		if err := storeCredentials(ctx, r.cfg.Spoke, r.cfg.Namespace, c); err != nil {
			return err
		}
		renewed = c
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the client certificate expired at %s before the hub renewed it", old.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return renewed, nil
}
