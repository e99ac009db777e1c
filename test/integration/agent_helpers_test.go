package integration

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli"
	"github.com/flotilla-io/flotilla/test/framework"
)

// agentEnv is a spoke for agents to run on, and a join token on the hub:
// what `flotilla init` leaves on the hub.
type agentEnv struct {
	spoke *framework.ControlPlane
	// token is a valid bootstrap token of the hub.
	token string
}

// newAgentEnv starts a spoke and creates a bootstrap token on the hub,
// with the contract's bootstrap RBAC where the hub lacks it.
func newAgentEnv(ctx context.Context) *agentEnv {
	GinkgoHelper()
	spoke, err := framework.Start(ctx, framework.Spoke)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(spoke.Stop)
	return &agentEnv{spoke: spoke, token: createBootstrapToken(ctx)}
}

// createBootstrapToken creates a join token as `flotilla init` does
// (contract, Registration step 1) and returns it.
func createBootstrapToken(ctx context.Context) string {
	GinkgoHelper()
	id, secret := utilrand.String(6), utilrand.String(16)
	_, err := hubCP.Kube.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.BootstrapTokenSecretPrefix + id},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           secret,
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      "system:bootstrappers:managedcluster",
			bootstrapapi.BootstrapTokenExpirationKey:       time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())

	const role = "open-cluster-management:bootstrap"
	_, err = hubCP.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "create", "list", "watch"}},
			{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclustersets/join"}, Verbs: []string{"create"}},
		},
	}, metav1.CreateOptions{})
	Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	_, err = hubCP.Kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:bootstrappers:managedcluster"}},
	}, metav1.CreateOptions{})
	Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	return id + "." + secret
}

// bootstrapKubeconfig is a bootstrap kubeconfig for server, trusting ca,
// authenticating with token.
func bootstrapKubeconfig(server string, ca []byte, token string) []byte {
	GinkgoHelper()
	data, err := cli.BootstrapKubeconfig(server, ca, token)
	Expect(err).NotTo(HaveOccurred())
	return data
}

// options are the options of an agent of cluster name on this spoke. Each
// agent has a namespace of its own, so that several share the spoke.
func (e *agentEnv) options(name string) agent.Options {
	return agent.Options{
		ClusterName:     name,
		Namespace:       "agent-" + name,
		SpokeKubeconfig: e.spoke.AdminKubeconfig,
		// The lease is renewed every two seconds, so that specs see it.
		LeaseDurationSeconds:  2,
		CertificateExpiration: time.Hour,
		MetricsAddr:           "0",
		HealthProbeAddr:       "0",
	}
}

// storeBootstrapSecret stores kubeconfig where `flotilla join` puts it.
func (e *agentEnv) storeBootstrapSecret(ctx context.Context, ns string, kubeconfig []byte) {
	GinkgoHelper()
	_, err := e.spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	_, err = e.spoke.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: agent.BootstrapSecretName, Namespace: ns},
		Data:       map[string][]byte{"kubeconfig": kubeconfig},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// hubSecret reads the agent's hub kubeconfig secret.
func (e *agentEnv) hubSecret(ctx context.Context, ns string) map[string][]byte {
	GinkgoHelper()
	s, err := e.spoke.Kube.CoreV1().Secrets(ns).Get(ctx, agent.HubKubeconfigSecretName, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	return s.Data
}

// runningAgent is an agent.Run in a goroutine of the test process.
type runningAgent struct {
	cancel  context.CancelFunc
	done    chan error
	logs    *agentLogs
	started time.Time
}

// startAgent runs an agent until the spec ends or stop is called.
func startAgent(opts agent.Options) *runningAgent {
	a := startAgentUnmanaged(opts)
	DeferCleanup(a.stop)
	return a
}

// startAgentUnmanaged starts an agent as startAgent does, but leaves it to
// the caller to stop: for an agent that outlives the spec that starts it.
func startAgentUnmanaged(opts agent.Options) *runningAgent {
	logs := &agentLogs{}
	logger := funcr.New(func(prefix, args string) {
		line := strings.TrimSpace(prefix + " " + args)
		logs.add(line)
		specLog.Println("agent:", line)
	}, funcr.Options{})
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	a := &runningAgent{cancel: cancel, done: make(chan error, 1), logs: logs, started: time.Now()}
	go func() {
		defer GinkgoRecover()
		a.done <- agent.Run(ctx, opts)
	}()
	return a
}

// stop stops the agent and waits until agent.Run returned nil.
func (a *runningAgent) stop() {
	GinkgoHelper()
	if a.cancel == nil {
		return
	}
	a.cancel()
	a.cancel = nil
	Eventually(a.done, "30s").Should(Receive(BeNil()))
}

// agentLogs collects an agent's log lines.
type agentLogs struct {
	mu    sync.Mutex
	lines []string
}

func (l *agentLogs) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

// matching returns the lines that contain s.
func (l *agentLogs) matching(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// count returns how many lines contain s, for Eventually.
func (l *agentLogs) count(s string) func() int {
	return func() int { return len(l.matching(s)) }
}

// clusterCSRs lists the CSRs labelled with cluster.
func clusterCSRs(ctx context.Context, cluster string) []certificatesv1.CertificateSigningRequest {
	GinkgoHelper()
	list, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{clusterv1.ClusterNameLabel: cluster}.String(),
	})
	Expect(err).NotTo(HaveOccurred())
	return list.Items
}

// acceptAgent does what `flotilla accept --clusters cluster` does: it
// approves the cluster's pending CSRs that a bootstrap identity asked for,
// and sets spec.hubAcceptsClient.
func acceptAgent(ctx SpecContext, cluster string) {
	GinkgoHelper()
	// Wait for a pending one: a cluster that joins again still has the
	// CSRs approved when it first joined.
	var pending []certificatesv1.CertificateSigningRequest
	Eventually(func() []certificatesv1.CertificateSigningRequest {
		pending = slices.DeleteFunc(clusterCSRs(ctx, cluster), func(csr certificatesv1.CertificateSigningRequest) bool {
			return !strings.HasPrefix(csr.Spec.Username, "system:bootstrap:") || len(csr.Status.Conditions) > 0
		})
		return pending
	}).ShouldNot(BeEmpty())
	for _, csr := range pending {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AcceptedByHubAdmin", Message: "accepted in a test",
		})
		_, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, &csr, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
	}
	setAccepted(ctx, cluster, true)
}

// deleteClusterAfterSpec removes ManagedCluster name when the spec ends.
func deleteClusterAfterSpec(name string) {
	DeferCleanup(func(ctx SpecContext) {
		err := hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
		Expect(client.IgnoreNotFound(err)).To(Succeed())
	})
}

// leaseRenewTime is when the cluster's lease was last renewed, or zero.
func leaseRenewTime(ctx context.Context, cluster string) time.Time {
	lease := &coordinationv1.Lease{}
	err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, lease)
	if apierrors.IsNotFound(err) || lease.Spec.RenewTime == nil {
		return time.Time{}
	}
	Expect(err).NotTo(HaveOccurred())
	return lease.Spec.RenewTime.Time
}

// credentialID is how the API server names a client certificate in a
// requester's user info (and so in a CSR's spec.extra).
func credentialID(certPEM []byte) string {
	GinkgoHelper()
	block, _ := pem.Decode(certPEM)
	Expect(block).NotTo(BeNil())
	sum := sha256.Sum256(block.Bytes)
	return "X509SHA256=" + hex.EncodeToString(sum[:])
}

// requesterCredential is the credential a CSR was created with.
func requesterCredential(csr certificatesv1.CertificateSigningRequest) string {
	if v := csr.Spec.Extra["authentication.kubernetes.io/credential-id"]; len(v) == 1 {
		return v[0]
	}
	return ""
}

// storedCertificate checks that the hub kubeconfig secret holds a key and a
// certificate that belong together, and returns the certificate.
func storedCertificate(data map[string][]byte) *x509.Certificate {
	GinkgoHelper()
	pair, err := tls.X509KeyPair(data["tls.crt"], data["tls.key"])
	Expect(err).NotTo(HaveOccurred(), "the stored certificate must match the stored key")
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	Expect(err).NotTo(HaveOccurred())
	return cert
}

// agentUser is the user name of agent id of cluster c.
func agentUser(c, id string) string {
	return fmt.Sprintf("system:open-cluster-management:%s:%s", c, id)
}

// parseCertificateRequest parses a CSR's PEM request.
func parseCertificateRequest(data []byte) *x509.CertificateRequest {
	GinkgoHelper()
	block, _ := pem.Decode(data)
	Expect(block).NotTo(BeNil())
	req, err := x509.ParseCertificateRequest(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	return req
}
