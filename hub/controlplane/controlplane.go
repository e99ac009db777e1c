package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Options configure an embedded control plane.
type Options struct {
	// DataDir holds the certificates, etcd's data and the admin kubeconfig.
	DataDir string
	// BindAddress is the address the API server listens on.
	BindAddress string
	// SecurePort is the API server's port; 0 picks a free one.
	SecurePort int
	// AdvertiseAddress is the address written into kubeconfigs; empty means
	// the bind address, or 127.0.0.1 when binding every interface.
	AdvertiseAddress string
	// ServingSANs are further DNS names and IP addresses that the API
	// server's serving certificate covers, for clients that reach it by a
	// name (a load balancer's, a container's) rather than the advertise
	// address.
	ServingSANs []string
	// EtcdServers, when set, replaces the embedded etcd.
	EtcdServers []string
	// EtcdClientTLS, with EtcdServers at https URLs, is how the API server
	// verifies those servers and authenticates to them.
	EtcdClientTLS EtcdClientTLS
	// EtcdMember, when set, makes the embedded etcd a member of a cluster
	// of several hub processes' etcds.
	EtcdMember *EtcdMember
	// Controllers are the kube-controller-manager controllers to run;
	// nil means HubControllers.
	Controllers []string
	// Authorizer, when set, makes an authorizer that the API server
	// consults before its own (the privileged group, then RBAC), from the
	// API server's informers.
	Authorizer func(informers.SharedInformerFactory) authorizer.Authorizer
	// Extensions are served by the API server besides its own APIs.
	Extensions []Extension
	// Admission, when set, is run by the API server after its own
	// admission plugins, for the built-in APIs.
	Admission admission.ValidationInterface
	// BeforeControllers, when set, runs once the API server is ready and
	// before the controller manager starts, with the admin's
	// configuration: what the controllers should find at their first
	// discovery (the garbage collector discovers resources again only
	// every 30 s). An error is logged, not fatal: the controllers find
	// the same later.
	BeforeControllers func(context.Context, *rest.Config) error
	// Uncached are custom resources the API server reads from etcd for
	// every list and watch instead of keeping them all in its watch cache
	// (as Kubernetes does for Events): for resources of which there are
	// many per namespace, each watched in its own namespace, memory is
	// traded for CPU on each change (see hub.UncachedResources).
	Uncached []schema.GroupResource
}

// startTimeout bounds the wait for the API server and controllers to be ready.
const startTimeout = 2 * time.Minute

// ClientQPS and ClientBurst limit the hub controllers' requests to the API
// server: enough to fan out to thousands of clusters, far above
// client-go's default of 5.
const (
	ClientQPS   = 200
	ClientBurst = 400
)

// ControlPlane is a running kube-apiserver (with etcd and controllers).
type ControlPlane struct {
	// URL is the API server's advertised address, https://host:port.
	URL string
	// CAData is the PEM CA bundle that signs the serving and client certificates.
	CAData []byte
	// CAKeyFile is the CA's private key, for tools that sign (tests do).
	CAKeyFile string
	// AdminKubeconfig is the path of a kubeconfig with cluster-admin rights.
	AdminKubeconfig string
	// Config is a client configuration with cluster-admin rights.
	Config *rest.Config

	pki    *pki
	cancel context.CancelFunc
	etcd   *embed.Etcd
	lock   *os.File
	// etcdURLFile, when set, tells `flotilla-hub snapshot save` where the
	// embedded etcd listens; it is removed on Stop.
	etcdURLFile string
	// released closes once releaseCatchUp has stopped with the embedded
	// etcd's; nil without one.
	released chan struct{}
	failed   chan error
	stopped  chan struct{}
	// apiDone closes when the API server has stopped; watching says whether
	// watch runs (from the end of Start), which closes stopped.
	apiDone  <-chan error
	watching bool
}

// Start brings up a control plane and returns once it serves requests and
// its controllers run. Stop it with Stop.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	logger := klog.FromContext(ctx)
	if err := opts.complete(); err != nil {
		return nil, err
	}
	lock, err := lockDataDir(opts.DataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	if err := checkPortFree(opts.BindAddress, opts.SecurePort); err != nil {
		return nil, err
	}
	hosts, ips := servingSANs(opts)
	if opts.EtcdMember != nil {
		if err := opts.EtcdMember.checkSharedPKI(filepath.Join(opts.DataDir, "pki")); err != nil {
			return nil, err
		}
	}
	p, err := ensurePKI(filepath.Join(opts.DataDir, "pki"), hosts, ips)
	if err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cp := &ControlPlane{
		URL:             "https://" + net.JoinHostPort(opts.AdvertiseAddress, strconv.Itoa(opts.SecurePort)),
		CAData:          p.caPEM,
		CAKeyFile:       p.path(caKeyFile),
		AdminKubeconfig: filepath.Join(opts.DataDir, "admin.kubeconfig"),
		pki:             p,
		cancel:          cancel,
		lock:            lock,
		failed:          make(chan error, 3),
		stopped:         make(chan struct{}),
	}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()

	etcdServers := opts.EtcdServers
	if len(etcdServers) == 0 {
		started := time.Now()
		name, configure := EtcdName, func(*embed.Config) error { return nil }
		if m := opts.EtcdMember; m != nil {
			tls, err := p.ensureEtcdPeerPKI(m)
			if err != nil {
				return nil, err
			}
			name = m.Name
			configure = func(cfg *embed.Config) error { return configureMember(cfg, m, tls) }
			logger.Info("Starting etcd as a member of a cluster: waiting for a majority of its members", "name", m.Name, "peerURL", m.PeerURL, "initialCluster", m.InitialCluster, "state", m.InitialClusterState)
		}
		e, url, err := startEtcdWith(runCtx, name, EtcdDir(opts.DataDir), configure)
		if err != nil {
			return nil, err
		}
		cp.etcd = e
		cp.released = make(chan struct{})
		go func() {
			defer close(cp.released)
			releaseCatchUp(runCtx, e.Server.KV(), releaseCatchUpEvery)
		}()
		if err := promoteLearner(ctx, e); err != nil {
			return nil, err
		}
		etcdServers = []string{url}
		if err := writeFile(filepath.Join(opts.DataDir, etcdURLFile), []byte(url+"\n"), 0o600); err != nil {
			return nil, err
		}
		cp.etcdURLFile = filepath.Join(opts.DataDir, etcdURLFile)
		logger.V(1).Info("etcd ready", "dataDir", filepath.Join(opts.DataDir, "etcd"), "duration", time.Since(started))
	}

	apiDone, err := runAPIServer(runCtx, apiServerArgs(p, etcdServers, opts.EtcdClientTLS, opts.BindAddress, opts.SecurePort, opts.AdvertiseAddress), opts)
	if err != nil {
		return nil, err
	}
	cp.apiDone = apiDone
	cp.Config = &rest.Config{
		Host:            cp.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM, CertFile: p.path(adminCertFile), KeyFile: p.path(adminKeyFile)},
		QPS:             ClientQPS,
		Burst:           ClientBurst,
	}
	if err := loadClientCert(cp.Config); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, cp.Config, apiDone); err != nil {
		return nil, err
	}
	if err := writeKubeconfig(cp.AdminKubeconfig, cp.Config, "flotilla-admin"); err != nil {
		return nil, err
	}
	kcmKubeconfig := filepath.Join(opts.DataDir, "pki", "controller-manager.kubeconfig")
	kcmConfig := rest.CopyConfig(cp.Config)
	kcmConfig.CertFile, kcmConfig.KeyFile = p.path(kcmCertFile), p.path(kcmKeyFile)
	kcmConfig.CertData, kcmConfig.KeyData = nil, nil
	if err := loadClientCert(kcmConfig); err != nil {
		return nil, err
	}
	if err := writeKubeconfig(kcmKubeconfig, kcmConfig, "kube-controller-manager"); err != nil {
		return nil, err
	}

	if opts.BeforeControllers != nil {
		if err := opts.BeforeControllers(ctx, cp.Config); err != nil {
			logger.Info("Starting the controller manager before the step meant to come first; its controllers discover the rest later", "err", err)
		}
	}
	kcmDone, err := runControllerManager(runCtx, controllerManagerArgs(p, kcmKubeconfig, opts.Controllers))
	if err != nil {
		return nil, err
	}
	if err := waitControllers(ctx, cp.Config, kcmDone); err != nil {
		return nil, err
	}

	cp.watching = true
	var etcdStopped <-chan struct{}
	if cp.etcd != nil {
		etcdStopped = cp.etcd.Server.StopNotify()
	}
	go cp.watch(apiDone, kcmDone, etcdStopped)
	return cp, nil
}

// EnsureServingCert makes sure that <pki>/<name>/tls.crt and tls.key hold a
// serving certificate for hosts and ips signed by the control plane's CA
// (CAData), which its API server therefore trusts when it calls a webhook
// server presenting it. A certificate that is still good is kept. It returns
// the directory.
func (c *ControlPlane) EnsureServingCert(name string, hosts []string, ips []net.IP) (string, error) {
	dir := c.pki.path(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cannot create the certificate directory %s: %w", dir, err)
	}
	if err := c.pki.ensureServingPair(dir, "tls.crt", "tls.key", "flotilla-"+name, hosts, ips); err != nil {
		return "", fmt.Errorf("issue the %s serving certificate: %w", name, err)
	}
	return dir, nil
}

// Failed reports an error when a component stops on its own while running.
func (c *ControlPlane) Failed() <-chan error { return c.failed }

// watch forwards the first failure of a component and marks the stop.
func (c *ControlPlane) watch(apiDone, kcmDone <-chan error, etcdStopped <-chan struct{}) {
	defer close(c.stopped)
	for apiDone != nil || kcmDone != nil {
		select {
		case <-etcdStopped:
			// Stop closes etcd only after this loop has ended: etcd
			// stopped on its own, most likely removed from its cluster.
			etcdStopped = nil
			c.failed <- c.etcdStoppedError()
		case err, ok := <-apiDone:
			if !ok {
				apiDone = nil
				continue
			}
			c.failed <- fmt.Errorf("kube-apiserver: %w", err)
		case err, ok := <-kcmDone:
			if !ok {
				kcmDone = nil
				continue
			}
			c.failed <- fmt.Errorf("kube-controller-manager: %w", err)
		}
	}
}

// etcdStoppedError says why the embedded etcd stopped while running.
func (c *ControlPlane) etcdStoppedError() error {
	s := c.etcd.Server
	if s.Cluster() != nil && s.Cluster().Member(s.MemberID()) == nil {
		return fmt.Errorf("etcd member %s was removed from its cluster (flotilla-hub member remove) and stopped: this hub stops too; to bring it back, empty its data directory (keeping a copy of pki/), then add it again with flotilla-hub member add", s.MemberID())
	}
	return fmt.Errorf("the embedded etcd (member %s) stopped on its own: see etcd.log in the data directory", s.MemberID())
}

// drainBound bounds how long Stop waits for the API server to drain.
const drainBound = 30 * time.Second

// leaderlessDrain is how long Stop waits for the API server to drain once
// the embedded etcd member has no leader: longer than an election.
const leaderlessDrain = 3 * time.Second

// Stop shuts the control plane down: controllers and API server first, then
// etcd, so that nothing writes to etcd while it closes.
func (c *ControlPlane) Stop() {
	c.cancel()
	// A Start that failed half-way never started watch: wait for the API
	// server alone, if it was started.
	var stopped <-chan struct{} = c.stopped
	if !c.watching {
		stopped = drained(c.apiDone)
	}
	// The API server drains in-flight requests; a client holding a watch
	// open must not keep etcd from closing cleanly, nor a cluster of etcd
	// members that has lost its quorum (the peers stopped first): then the
	// API server's last writes wait for a leader that does not come.
	bound := time.NewTimer(drainBound)
	defer bound.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var leaderless time.Duration
	for waiting := true; waiting; {
		select {
		case <-stopped:
			waiting = false
		case <-bound.C:
			waiting = false
		case <-tick.C:
			if c.etcd == nil || c.etcd.Server.Leader() != 0 {
				leaderless = 0
				continue
			}
			if leaderless += time.Second; leaderless >= leaderlessDrain {
				klog.Background().Info("Not waiting for the API server to drain: its etcd member has had no leader (no quorum of its cluster) for a while", "for", leaderless)
				waiting = false
			}
		}
	}
	if c.etcdURLFile != "" {
		os.Remove(c.etcdURLFile)
	}
	if c.released != nil {
		<-c.released
	}
	if c.etcd != nil {
		c.etcd.Close()
	}
	if c.lock != nil {
		c.lock.Close()
	}
}

// drained returns a channel closed once ch is closed; a nil ch counts as closed.
func drained(ch <-chan error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if ch == nil {
			return
		}
		for range ch {
		}
	}()
	return done
}

func (o *Options) complete() error {
	if o.DataDir == "" {
		return errors.New("a data directory is required")
	}
	if o.BindAddress == "" {
		o.BindAddress = "127.0.0.1"
	}
	bind := net.ParseIP(o.BindAddress)
	if bind == nil {
		return fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress)
	}
	if o.AdvertiseAddress == "" {
		o.AdvertiseAddress = o.BindAddress
		if bind.IsUnspecified() {
			o.AdvertiseAddress = "127.0.0.1"
		}
	}
	if ip := net.ParseIP(o.AdvertiseAddress); ip == nil || ip.IsUnspecified() {
		return fmt.Errorf("--advertise-address %q must be an IP address that agents can reach", o.AdvertiseAddress)
	}
	for _, san := range o.ServingSANs {
		if net.ParseIP(san) != nil {
			continue
		}
		if len(validation.IsDNS1123Subdomain(san)) > 0 && len(validation.IsWildcardDNS1123Subdomain(san)) > 0 {
			return fmt.Errorf("--tls-san %q is neither an IP address nor a DNS name (such as hub.example.com or *.example.com)", san)
		}
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		return fmt.Errorf("--secure-port %d is not a port number", o.SecurePort)
	}
	if o.SecurePort == 0 {
		port, err := freePort()
		if err != nil {
			return err
		}
		o.SecurePort = port
	}
	if o.Controllers == nil {
		o.Controllers = HubControllers
	}
	if err := validateEtcdServers(o.EtcdServers, o.EtcdClientTLS); err != nil {
		return err
	}
	if o.EtcdMember != nil {
		if len(o.EtcdServers) > 0 {
			return errors.New("--etcd-servers replaces the embedded etcd, --etcd-initial-cluster makes it a member of a cluster: give one or the other")
		}
		if err := o.EtcdMember.validate(); err != nil {
			return err
		}
	}
	return nil
}

// MakeDataDir creates the data directory dir if needed, with an error
// that says how to fix it.
func MakeDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create data directory: %w (choose a writable --data-dir)", err)
	}
	return nil
}

// lockDataDir creates the data directory if needed and takes an exclusive
// lock on it, so that two processes never share one etcd.
func lockDataDir(dir string) (*os.File, error) {
	if err := MakeDataDir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory %s is not writable: %w (choose a writable --data-dir)", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory %s is %w (stop it first, or choose another --data-dir)", dir, ErrInUse)
	}
	return f, nil
}

func checkPortFree(bind string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (stop what holds the port, or choose another --secure-port)", net.JoinHostPort(bind, strconv.Itoa(port)), err)
	}
	return l.Close()
}

func servingHosts() []string {
	return []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
}

func servingIPs(o Options) []net.IP {
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(firstServiceIP), net.ParseIP(o.AdvertiseAddress)}
	if ip := net.ParseIP(o.BindAddress); !ip.IsUnspecified() {
		ips = append(ips, ip)
	}
	return ips
}

// servingSANs are the DNS names and IP addresses of the serving certificate:
// the built-in ones and ServingSANs.
func servingSANs(o Options) ([]string, []net.IP) {
	hosts, ips := servingHosts(), servingIPs(o)
	for _, san := range o.ServingSANs {
		if ip := net.ParseIP(san); ip != nil {
			ips = append(ips, ip)
		} else {
			hosts = append(hosts, san)
		}
	}
	return hosts, ips
}

// waitReady polls the API server's /readyz until it answers ok.
func waitReady(ctx context.Context, cfg *rest.Config, apiDone <-chan error) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case err, ok := <-apiDone:
			if ok {
				return false, fmt.Errorf("kube-apiserver failed to start: %w", err)
			}
			return false, errors.New("kube-apiserver stopped while starting")
		default:
		}
		_, last = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return last == nil, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil && last != nil {
		return fmt.Errorf("kube-apiserver was not ready after %s: %w (last check: %v)", startTimeout, err, last)
	}
	return err
}

// waitControllers waits until the controller manager acts: its service
// account controller creates the "default" ServiceAccount.
func waitControllers(ctx context.Context, cfg *rest.Config, kcmDone <-chan error) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case err, ok := <-kcmDone:
			if ok {
				return false, fmt.Errorf("kube-controller-manager failed to start: %w", err)
			}
			return false, errors.New("kube-controller-manager stopped while starting")
		default:
		}
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, nil
	})
}
