package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub/addon/conversion"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/hub/policy"
	"github.com/flotilla-io/flotilla/hub/work"
	rsadmission "github.com/flotilla-io/flotilla/hub/workreplicaset/admission"
)

// DefaultWebhookPort is the port of the admission webhook server of a hub
// run against an existing cluster, unless told otherwise (controller-runtime's
// usual one). With the embedded control plane any free port does, as the
// hub registers it at every start.
const DefaultWebhookPort = 9443

// webhookCertDirName is where, under the embedded control plane's PKI, the
// webhook server's certificate is kept.
const webhookCertDirName = "webhook"

// webhookStartTimeout bounds the wait for the webhook server to answer.
const webhookStartTimeout = 30 * time.Second

// WebhookOptions configure the hub's admission webhook server, which the
// hub's API server calls to check ManifestWorks (see package work).
type WebhookOptions struct {
	// BindAddress is the address the server listens on; empty means 127.0.0.1.
	BindAddress string
	// Port is the server's port; 0 picks a free one.
	Port int
	// CertDir holds the serving certificate, tls.crt and tls.key, and
	// optionally ca.crt, the CA that signed it. The embedded control plane
	// issues one from its own CA when it is empty. Against an existing
	// cluster (Options.Kubeconfig), an empty CertDir and AdvertiseURL mean
	// that this process serves no webhook.
	CertDir string
	// AdvertiseURL is the https://host:port at which the API server reaches
	// the server; empty means https://BindAddress:Port.
	AdvertiseURL string
	// CABundle is the PEM bundle the API server verifies the serving
	// certificate with; empty means CertDir's ca.crt, or else its tls.crt.
	CABundle []byte
	// Service, "namespace/name", is the Service (port 443) in front of the
	// server, through which the API server calls it instead of AdvertiseURL.
	Service string
	// SelfSigned issues a self-signed serving certificate into CertDir at
	// start when CertDir holds none, for AdvertiseURL's or Service's host.
	// Each process issues its own: for one hub replica, or a leader whose
	// Service sends only to it.
	SelfSigned bool
	// ReusePort lets several hub processes on one machine listen on the
	// same address (SO_REUSEPORT): the kernel spreads the API server's
	// connections over the live ones, so that one AdvertiseURL names every
	// replica, as a Service does in a cluster.
	ReusePort bool

	// registered is set once the API server calls the server at the
	// address this process registered; the hub is not ready before.
	registered *atomic.Bool
}

// enabled reports whether this process serves the webhook.
func (w *WebhookOptions) enabled() bool { return w.CertDir != "" }

// EmbeddedWebhook completes w for a hub whose API server is cp: a free port
// when none is given, and a serving certificate issued from cp's CA for the
// advertised address (kept across restarts under cp's PKI directory).
func EmbeddedWebhook(cp *controlplane.ControlPlane, w WebhookOptions) (WebhookOptions, error) {
	if err := w.defaultAddress(); err != nil {
		return w, err
	}
	if w.CertDir != "" {
		return w, nil
	}
	u, err := url.Parse(w.AdvertiseURL)
	if err != nil {
		return w, err
	}
	hosts, ips := []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}
	if ip := net.ParseIP(u.Hostname()); ip != nil {
		ips = append(ips, ip)
	} else {
		hosts = append(hosts, u.Hostname())
	}
	if w.CertDir, err = cp.EnsureServingCert(webhookCertDirName, hosts, ips); err != nil {
		return w, err
	}
	w.CABundle = cp.CAData
	return w, nil
}

// complete fills in the port, the advertised URL and the CA bundle of a
// webhook server that this process runs.
func (w *WebhookOptions) complete() error {
	if !w.enabled() {
		if w.AdvertiseURL != "" {
			return errors.New("--webhook-advertise-url needs --webhook-cert-dir: the API server only calls a webhook server whose certificate it can verify")
		}
		return nil
	}
	if w.Service != "" {
		ns, name, ok := strings.Cut(w.Service, "/")
		if !ok || ns == "" || name == "" {
			return fmt.Errorf("--webhook-service %q is not namespace/name", w.Service)
		}
		if w.AdvertiseURL != "" {
			return errors.New("--webhook-service and --webhook-advertise-url both say how the API server reaches the webhook: give one")
		}
		w.AdvertiseURL = "https://" + name + "." + ns + ".svc:443"
	}
	if err := w.defaultAddress(); err != nil {
		return err
	}
	if w.SelfSigned {
		if err := w.selfSign(); err != nil {
			return err
		}
	}
	if len(w.CABundle) > 0 {
		return nil
	}
	for _, name := range []string{"ca.crt", "tls.crt"} {
		data, err := os.ReadFile(filepath.Join(w.CertDir, name))
		if err == nil {
			w.CABundle = data
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--webhook-cert-dir: %w", err)
		}
	}
	return fmt.Errorf("--webhook-cert-dir %s holds neither ca.crt nor tls.crt: put the serving certificate in tls.crt, its key in tls.key, and the CA that signed it in ca.crt", w.CertDir)
}

// defaultAddress fills in the bind address, the port and the URL.
func (w *WebhookOptions) defaultAddress() error {
	if w.BindAddress == "" {
		w.BindAddress = "127.0.0.1"
	}
	bind := net.ParseIP(w.BindAddress)
	if bind == nil {
		return fmt.Errorf("--webhook-bind-address %q is not an IP address", w.BindAddress)
	}
	if w.Port < 0 || w.Port > 65535 {
		return fmt.Errorf("--webhook-port %d is not a port number", w.Port)
	}
	if w.Port == 0 {
		port, err := freePort(w.BindAddress)
		if err != nil {
			return err
		}
		w.Port = port
	}
	if w.AdvertiseURL == "" {
		host := w.BindAddress
		if bind.IsUnspecified() {
			host = "127.0.0.1"
		}
		w.AdvertiseURL = "https://" + net.JoinHostPort(host, strconv.Itoa(w.Port))
	}
	if err := work.CheckServerURL(w.AdvertiseURL); err != nil {
		return fmt.Errorf("--webhook-advertise-url: %w", err)
	}
	return nil
}

// address is where the server listens.
func (w *WebhookOptions) address() string {
	return net.JoinHostPort(w.BindAddress, strconv.Itoa(w.Port))
}

// checkGivenPort is checkListen for a port given on the command line (0
// is picked later), on a copy of w: its defaults are filled in later.
func (w WebhookOptions) checkGivenPort() error {
	if w.Port == 0 {
		return nil
	}
	if err := w.defaultAddress(); err != nil {
		return err
	}
	return w.checkListen()
}

// checkListen fails with a message that names the flag when the port is taken.
func (w *WebhookOptions) checkListen() error {
	l, err := w.listen(context.Background())
	if err != nil {
		hint := "stop what holds the port, or choose another --webhook-port"
		if w.ReusePort {
			hint = "a process that shares the port must set SO_REUSEPORT too and run as the same user, as other hub replicas with --webhook-reuse-port do"
		}
		return fmt.Errorf("cannot listen on %s for the ManifestWork admission webhook: %w (%s)", w.address(), err, hint)
	}
	return l.Close()
}

// listen opens the server's TCP listener.
func (w *WebhookOptions) listen(ctx context.Context) (net.Listener, error) {
	if !w.ReusePort {
		return net.Listen("tcp", w.address())
	}
	lc := net.ListenConfig{Control: reusePort}
	return lc.Listen(ctx, "tcp", w.address())
}

// server is the webhook server of these options: controller-runtime's, or
// one on a shared port.
func (w *WebhookOptions) server() (webhook.Server, error) {
	if !w.ReusePort {
		return webhook.NewServer(webhook.Options{Host: w.BindAddress, Port: w.Port, CertDir: w.CertDir}), nil
	}
	return newSharedPortServer(w), nil
}

// startWebhook waits until the manager's webhook server answers, then
// points the API server at it and waits until the API server calls it
// there. done is the manager's result channel.
func startWebhook(ctx context.Context, cfg *rest.Config, mgr manager.Manager, w *WebhookOptions, done <-chan error) error {
	started := mgr.GetWebhookServer().StartedChecker()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, webhookStartTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("hub manager: %w", err)
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		last = started(req)
		return last == nil, nil
	})
	if err != nil {
		if last != nil && !errors.Is(err, ctx.Err()) {
			return fmt.Errorf("the ManifestWork admission webhook server did not start within %s: %w", webhookStartTimeout, last)
		}
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := policy.InstallWebhook(ctx, client, w.AdvertiseURL, w.Service, w.CABundle); err != nil {
		return err
	}
	if err := rsadmission.Install(ctx, client, w.AdvertiseURL, w.Service, w.CABundle); err != nil {
		return err
	}
	if err := conversion.Install(ctx, apiextensionsclient.NewForConfigOrDie(cfg), addOnConversion(w)); err != nil {
		return err
	}
	if ns, name, ok := strings.Cut(w.Service, "/"); ok {
		if err := work.InstallWebhookService(ctx, client, ns, name, w.CABundle); err != nil {
			return err
		}
		// A Service sends only to ready pods: waiting here for a call
		// through it would keep this one unready for ever.
		w.registered.Store(true)
		return nil
	}
	if err := work.InstallWebhook(ctx, client, w.AdvertiseURL, w.CABundle); err != nil {
		return err
	}
	if err := webhookCalled(ctx, mgr.GetClient(), w.AdvertiseURL); err != nil {
		return err
	}
	// The ManifestWorkReplicaSet webhook's configuration is read by
	// another informer of the API server: a replica set written before it
	// is would be stored without its author.
	if err := rsadmission.WaitCalled(ctx, mgr.GetClient(), Namespace); err != nil {
		return err
	}
	w.registered.Store(true)
	return nil
}

// addOnConversion is the add-on CRDs' conversion through the webhook
// server w describes.
func addOnConversion(w *WebhookOptions) *apiextensionsv1.CustomResourceConversion {
	if ns, name, ok := strings.Cut(w.Service, "/"); ok {
		return conversion.Webhook("", &apiextensionsv1.ServiceReference{Namespace: ns, Name: name}, w.CABundle)
	}
	return conversion.Webhook(w.AdvertiseURL, nil, w.CABundle)
}

// webhookProbeName names the ManifestWork that webhookCalled creates with
// dryRun: it is never stored.
const webhookProbeName = "flotilla-webhook-probe"

// webhookCalled waits until the API server calls the webhook where it is
// now registered: a dry-run create of a ManifestWork in the hub's
// namespace is admitted. Until the API server has read the new
// configuration, which after a restart names the previous process's port,
// every write of a ManifestWork fails with "failed calling webhook".
func webhookCalled(ctx context.Context, c client.Client, url string) error {
	probe := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: webhookProbeName},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + webhookProbeName + `","namespace":"default"}}`),
		}}}}},
	}
	started := time.Now()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, webhookStartTimeout, true, func(ctx context.Context) (bool, error) {
		last = c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		// AlreadyExists comes from the storage, after admission.
		return last == nil || apierrors.IsAlreadyExists(last), nil
	})
	if err != nil {
		if last != nil && !errors.Is(err, ctx.Err()) {
			return fmt.Errorf("the API server did not call the ManifestWork admission webhook at %s within %s (a dry-run create of ManifestWork %s/%s): %w",
				url, webhookStartTimeout, Namespace, webhookProbeName, last)
		}
		return err
	}
	klog.FromContext(ctx).V(1).Info("The API server calls the ManifestWork admission webhook", "url", url, "after", time.Since(started).Round(time.Millisecond))
	return nil
}

// webhookReady is the readiness check of the webhook: the server runs, and
// the API server calls it at the address this process registered.
func webhookReady(w *WebhookOptions, started healthz.Checker) healthz.Checker {
	return func(req *http.Request) error {
		if err := started(req); err != nil {
			return err
		}
		if !w.registered.Load() {
			return errors.New("the API server does not call the ManifestWork admission webhook at " + w.AdvertiseURL + " yet")
		}
		return nil
	}
}

// selfSign writes a self-signed serving certificate for the advertised
// host (and the Service's other DNS names) into CertDir, unless it holds
// one, and takes it as the CA bundle.
func (w *WebhookOptions) selfSign() error {
	crt, key := filepath.Join(w.CertDir, "tls.crt"), filepath.Join(w.CertDir, "tls.key")
	if _, err := os.Stat(crt); err == nil {
		return nil
	}
	u, err := url.Parse(w.AdvertiseURL)
	if err != nil {
		return err
	}
	var names []string
	if ns, name, ok := strings.Cut(w.Service, "/"); ok {
		names = []string{name, name + "." + ns, name + "." + ns + ".svc.cluster.local"}
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(u.Hostname(), nil, names)
	if err != nil {
		return fmt.Errorf("issue the webhook's self-signed certificate: %w", err)
	}
	if err := os.WriteFile(crt, certPEM, 0o600); err != nil {
		return fmt.Errorf("--webhook-cert-dir must be writable with --webhook-self-signed: %w", err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		return err
	}
	w.CABundle = certPEM
	return nil
}

func freePort(bind string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port for the webhook server: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
