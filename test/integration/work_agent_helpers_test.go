package integration

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/work"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
	"github.com/flotilla-io/flotilla/manifests"
	"github.com/flotilla-io/flotilla/test/framework"
)

// newWorkSpoke starts a spoke that serves the agent's CRDs, as a spoke
// that an agent prepared does.
func newWorkSpoke(ctx context.Context) *framework.ControlPlane {
	GinkgoHelper()
	spoke, err := framework.Start(ctx, framework.Spoke)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(spoke.Stop)
	crds, err := manifests.AgentCRDs()
	Expect(err).NotTo(HaveOccurred())
	Expect(kubeapply.InstallCRDs(ctx, spoke.Config, crds)).To(Succeed())
	return spoke
}

// workConfig configures a work agent.
type workConfig = work.Config

// workAgent is agent/work running in this process for one cluster, with
// the cluster's hub identity from a real CSR, as a joined agent holds.
type workAgent struct {
	cluster string
	spoke   *framework.ControlPlane
	hub     *framework.ControlPlane
	hubCfg  *rest.Config
	cfg     work.Config
	cancel  context.CancelFunc
	done    chan error
	logs    *agentLogs
}

// workCluster is an accepted cluster on hub and its agent's hub identity.
type workCluster struct {
	name   string
	hubCfg *rest.Config
}

// newWorkCluster creates and accepts a cluster on hubCP, and issues its
// agent a certificate. When the spec ends, the cluster is deleted, after
// the finalizers of the works the stopped agent left are removed.
func newWorkCluster(ctx SpecContext, prefix string) workCluster {
	GinkgoHelper()
	c := newClusterName(prefix)
	createCluster(ctx, c)
	DeferCleanup(func(ctx SpecContext) { releaseWorks(ctx, hubCP, c) })
	acceptCluster(ctx, c)
	return workCluster{name: c, hubCfg: agentConfig(ctx, c, "agent1")}
}

// releaseWorks removes the finalizers of the works in namespace c, which
// no agent handles any longer.
func releaseWorks(ctx context.Context, hub *framework.ControlPlane, c string) {
	works := &workv1.ManifestWorkList{}
	if err := hub.Client.List(ctx, works, client.InNamespace(c)); err != nil {
		return
	}
	for i := range works.Items {
		w := &works.Items[i]
		if len(w.Finalizers) > 0 {
			before := w.DeepCopy()
			w.Finalizers = nil
			_ = hub.Client.Patch(ctx, w, client.MergeFrom(before))
		}
	}
}

// startWorkAgent runs agent/work for cluster c on spoke with hubCP, until
// the spec ends or stop is called. mutate may change its configuration.
func startWorkAgent(c workCluster, spoke *framework.ControlPlane, mutate ...func(*work.Config)) *workAgent {
	GinkgoHelper()
	return startWorkAgentOn(hubCP, c, spoke, mutate...)
}

// startWorkAgentOn is startWorkAgent against another hub.
func startWorkAgentOn(hub *framework.ControlPlane, c workCluster, spoke *framework.ControlPlane, mutate ...func(*work.Config)) *workAgent {
	GinkgoHelper()
	cfg := work.Config{ClusterName: c.name, Spoke: spoke.Config, ResyncInterval: time.Second, EvictionGracePeriod: time.Hour}
	for _, m := range mutate {
		m(&cfg)
	}
	a := &workAgent{cluster: c.name, spoke: spoke, hub: hub, hubCfg: c.hubCfg, cfg: cfg}
	a.start()
	DeferCleanup(a.stop)
	return a
}

func (a *workAgent) start() {
	GinkgoHelper()
	agent, err := work.New(a.cfg)
	Expect(err).NotTo(HaveOccurred())
	a.logs = &agentLogs{}
	logger := funcr.New(func(prefix, args string) {
		line := strings.TrimSpace(prefix + " " + args)
		a.logs.add(line)
		specLog.Println("work agent:", line)
	}, funcr.Options{Verbosity: 1})
	logger = logger.WithValues("cluster", a.cluster)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	a.cancel, a.done = cancel, make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		a.done <- agent.Run(ctx, a.hubCfg, "agent1")
	}()
}

// stop stops the agent and waits until Run returned.
func (a *workAgent) stop() {
	GinkgoHelper()
	if a.cancel == nil {
		return
	}
	a.cancel()
	a.cancel = nil
	Eventually(a.done, "60s").Should(Receive(BeNil()))
}

// restart stops the agent and starts a new one with the same identity.
func (a *workAgent) restart() {
	GinkgoHelper()
	a.stop()
	a.start()
}

// appliedName is the name of the spoke's AppliedManifestWork of work name.
func (a *workAgent) appliedName(name string) string {
	return work.AppliedManifestWorkName(work.HubHash(a.hub.URL), name)
}

// applied reads the AppliedManifestWork of work name from the spoke.
func (a *workAgent) applied(ctx context.Context, name string) *workv1.AppliedManifestWork {
	GinkgoHelper()
	amw := &workv1.AppliedManifestWork{}
	Expect(a.spoke.Client.Get(ctx, client.ObjectKey{Name: a.appliedName(name)}, amw)).To(Succeed())
	return amw
}

// manifest encodes obj, whose apiVersion and kind must be set, as a manifest.
func manifest(obj any) workv1.Manifest {
	GinkgoHelper()
	data, err := json.Marshal(obj)
	Expect(err).NotTo(HaveOccurred())
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: data}}
}

// configMap is a ConfigMap manifest.
func configMap(ns, name string, data map[string]string) workv1.Manifest {
	return manifest(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     data,
	})
}

// namespaceManifest is a Namespace manifest.
func namespaceManifest(name string) workv1.Manifest {
	return manifest(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
}

// deploymentManifest is a Deployment manifest of replicas busybox pods.
func deploymentManifest(ns, name string, replicas int) workv1.Manifest {
	labels := map[string]any{"app": name}
	return manifest(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "main", "image": "busybox", "command": []any{"sleep", "3600"}},
				}},
			},
		},
	})
}

// newWork is a ManifestWork of the given manifests in cluster c's namespace.
func newWork(c, name string, manifests ...workv1.Manifest) *workv1.ManifestWork {
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
	}
}

// createSpokeNamespace creates namespace ns on spoke.
func createSpokeNamespace(ctx context.Context, spoke *framework.ControlPlane, ns string) {
	GinkgoHelper()
	err := spoke.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
}

// getWork reads ManifestWork c/name from hub.
func getWork(ctx context.Context, hub *framework.ControlPlane, c, name string) *workv1.ManifestWork {
	GinkgoHelper()
	w := &workv1.ManifestWork{}
	Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: name}, w)).To(Succeed())
	return w
}

// workCond returns a condition of ManifestWork c/name on hubCP, for Eventually.
func workCond(ctx context.Context, c, name, condType string) func() *metav1.Condition {
	return func() *metav1.Condition {
		return meta.FindStatusCondition(getWork(ctx, hubCP, c, name).Status.Conditions, condType)
	}
}

// manifestStatus returns the status of manifest ordinal of ManifestWork
// c/name on hubCP, or nil, for Eventually.
func manifestStatus(ctx context.Context, c, name string, ordinal int32) func() *workv1.ManifestCondition {
	return func() *workv1.ManifestCondition {
		for _, m := range getWork(ctx, hubCP, c, name).Status.ResourceStatus.Manifests {
			if m.ResourceMeta.Ordinal == ordinal {
				return &m
			}
		}
		return nil
	}
}

// manifestCond returns a condition of manifest ordinal, for Eventually.
func manifestCond(ctx context.Context, c, name string, ordinal int32, condType string) func() *metav1.Condition {
	return func() *metav1.Condition {
		m := manifestStatus(ctx, c, name, ordinal)()
		if m == nil {
			return nil
		}
		return meta.FindStatusCondition(m.Conditions, condType)
	}
}

// haveStatus matches a condition with that status.
func haveStatus(s metav1.ConditionStatus) OmegaMatcher {
	return And(Not(BeNil()), HaveField("Status", s))
}

// haveStatusReason matches a condition with that status and reason.
func haveStatusReason(s metav1.ConditionStatus, reason string) OmegaMatcher {
	return And(Not(BeNil()), HaveField("Status", s), HaveField("Reason", reason))
}

// spokeGone says whether obj (named by its key) is gone from spoke, for Eventually.
func spokeGone(ctx context.Context, spoke *framework.ControlPlane, obj client.Object) func() bool {
	key := client.ObjectKeyFromObject(obj)
	return func() bool {
		err := spoke.Client.Get(ctx, key, obj)
		if err != nil && !apierrors.IsNotFound(err) {
			Fail("get " + key.String() + ": " + err.Error())
		}
		return apierrors.IsNotFound(err)
	}
}

// ownedBy says whether obj has a non-controller ownerReference to amw.
func ownedBy(obj metav1.Object, amw *workv1.AppliedManifestWork) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == amw.UID {
			return ref.Kind == "AppliedManifestWork" && ref.Name == amw.Name && (ref.Controller == nil || !*ref.Controller)
		}
	}
	return false
}

// acceptedCluster creates cluster c on hub, accepts it as the hub admin
// would, and issues its agent a certificate from a CSR; for hubs other
// than hubCP.
func acceptedCluster(ctx SpecContext, hub *framework.ControlPlane, c string) workCluster {
	GinkgoHelper()
	Expect(hub.Client.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}})).To(Succeed())
	Eventually(func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Client.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
			return err
		}
		mc.Spec.HubAcceptsClient = true
		return hub.Client.Update(ctx, mc)
	}).Should(Succeed())
	Eventually(func() bool {
		mc := &clusterv1.ManagedCluster{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Name: c}, mc)).To(Succeed())
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
	}).Should(BeTrue())

	cn, orgs := identity.AgentUser(c, "agent1"), []string{identity.ClusterGroup(c), identity.ManagedClustersGroup}
	keyPEM, csrPEM := newCSR(cn, orgs)
	csr, err := hub.Kube.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: c + "-", Labels: map[string]string{clusterv1.ClusterNameLabel: c}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: csrPEM, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved in a test",
	})
	_, err = hub.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	Expect(err).NotTo(HaveOccurred())
	var certPEM []byte
	Eventually(func() []byte {
		got, err := hub.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		certPEM = got.Status.Certificate
		return certPEM
	}).ShouldNot(BeEmpty())
	return workCluster{name: c, hubCfg: hub.ConfigFor(certPEM, keyPEM, "")}
}
