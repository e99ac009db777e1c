package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcscrd "sigs.k8s.io/mcs-api/config/crd"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/internal/mcs"
	"github.com/flotilla-io/flotilla/test/framework"
)

// importSpecScheme holds what the services specs read and write, on the hub
// and on the spokes.
var importSpecScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(clusterv1.AddToScheme(s))
	utilruntime.Must(clusterv1beta2.AddToScheme(s))
	utilruntime.Must(mcsv1alpha1.AddToScheme(s))
	utilruntime.Must(mcsv1beta1.AddToScheme(s))
	return s
}()

// importSpokeControllers are the controllers of a services spoke: those
// of a cluster that keeps EndpointSlices and collects garbage.
var importSpokeControllers = []string{
	names.NamespaceController,
	names.GarbageCollectorController,
	names.ServiceAccountController,
	names.EndpointSliceController,
}

// importCluster is a managed cluster for the services specs: a spoke API
// server with the EndpointSlice controller and the garbage collector, and
// a real agent (agent.Run) joined to the hub.
type importCluster struct {
	name  string
	env   *agentEnv
	opts  agent.Options
	agent *runningAgent
	// c is the spoke's admin client.
	c client.Client
	// requests counts the spoke's requests by user; agentUser is the
	// agent's (a ServiceAccount with cluster-admin's rights, so that its
	// requests are told apart from the specs' own).
	requests  *framework.RequestLog
	agentUser string
}

// importHub is the hub's admin client for the services specs.
func importHub() client.Client {
	GinkgoHelper()
	c, err := client.New(hubCP.Config, client.Options{Scheme: importSpecScheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// startImportCluster starts a spoke and its agent, and accepts the
// cluster. Everything is removed when the enclosing container ends.
func startImportCluster(ctx SpecContext, prefix string) *importCluster {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	requests := framework.NewRequestLog()
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: dir, Controllers: importSpokeControllers, Authorizer: requests.Authorizer()})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Stop)
	spoke := &framework.ControlPlane{ControlPlane: cp, Dir: dir}
	sc := &importCluster{name: newClusterName(prefix), requests: requests}
	sc.c, err = client.New(cp.Config, client.Options{Scheme: importSpecScheme})
	Expect(err).NotTo(HaveOccurred())
	spoke.Client = sc.c
	spoke.Kube, err = kubernetes.NewForConfig(cp.Config)
	Expect(err).NotTo(HaveOccurred())
	installImportCRDs(ctx, sc.c)
	sc.env = &agentEnv{spoke: spoke, token: createBootstrapToken(ctx)}
	sc.opts = sc.env.options(sc.name)
	sc.env.storeBootstrapSecret(ctx, sc.opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, sc.env.token))
	sc.opts.SpokeKubeconfig, sc.agentUser = adminServiceAccount(ctx, spoke, sc.opts.Namespace, "flotilla-agent")
	sc.agent = startAgentUnmanaged(sc.opts)
	DeferCleanup(func() { sc.agent.stop() })
	acceptAgent(ctx, sc.name)
	deleteClusterAfterSpec(sc.name)
	Eventually(clusterCondition(ctx, sc.name, clusterv1.ManagedClusterConditionJoined)).Should(HaveField("Status", metav1.ConditionTrue))
	return sc
}

// adminServiceAccount makes ServiceAccount ns/name with cluster-admin's
// rights in cp and returns a kubeconfig of its and its user name.
func adminServiceAccount(ctx context.Context, cp *framework.ControlPlane, ns, name string) (string, string) {
	GinkgoHelper()
	Expect(cp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	Expect(cp.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + ":" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	})).To(Succeed())
	return serviceAccountKubeconfig(ctx, cp, ns, name), "system:serviceaccount:" + ns + ":" + name
}

// spokeReads are the agent's reads of cluster sc that are not watches
// ("verb resource": the gets and lists of what the import side reads or
// writes) and its writes of those (every other verb), so far.
func (sc *importCluster) spokeReads() (reads, writes map[string]int) {
	reads, writes = map[string]int{}, map[string]int{}
	for what, n := range sc.requests.Counts(sc.agentUser) {
		verb, resource, _ := strings.Cut(what, " ")
		switch strings.Split(resource, "/")[0] {
		case "namespaces", "services", "serviceimports", "endpointslices":
		default:
			continue
		}
		switch verb {
		case "watch":
		case "get", "list":
			reads[what] = n
		default:
			writes[what] = n
		}
	}
	return reads, writes
}

// restartAgent stops the cluster's agent and starts another with the same
// options (and the hub credentials the first stored).
func (sc *importCluster) restartAgent() {
	GinkgoHelper()
	sc.agent.stop()
	sc.agent = startAgentUnmanaged(sc.opts)
}

// installImportCRDs installs the MCS CRDs of sigs.k8s.io/mcs-api on a spoke,
// as the agent does at start, so that specs can write ServiceImports of
// their own before any agent ran.
func installImportCRDs(ctx context.Context, c client.Client) {
	GinkgoHelper()
	for _, data := range [][]byte{mcscrd.ServiceExportCRD, mcscrd.ServiceImportCRD} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(yaml.Unmarshal(data, crd)).To(Succeed())
		Expect(client.IgnoreAlreadyExists(c.Create(ctx, crd))).To(Succeed())
		Eventually(func(g Gomega) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(c.Get(ctx, client.ObjectKey{Name: crd.Name}, got)).To(Succeed())
			g.Expect(got.Status.Conditions).To(ContainElement(And(
				HaveField("Type", apiextensionsv1.Established), HaveField("Status", apiextensionsv1.ConditionTrue))))
		}).Should(Succeed())
	}
	Eventually(func() error { return c.List(ctx, &mcsv1beta1.ServiceImportList{}) }).Should(Succeed())
}

// newImportSet creates an exclusive ManagedClusterSet, removed when the
// enclosing container ends; the hub makes its namespace.
func newImportSet(ctx SpecContext) string {
	GinkgoHelper()
	hub := importHub()
	set := "svc-" + utilrand.String(5)
	Expect(hub.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}})).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(hub.Delete(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}}))).To(Succeed())
	})
	return set
}

// setClusterSet labels cluster into set on the hub ("" takes it out of any).
func setClusterSet(ctx context.Context, cluster, set string) {
	GinkgoHelper()
	Expect(updateCluster(ctx, hubCP.Client, cluster, func(mc *clusterv1.ManagedCluster) {
		if set == "" {
			delete(mc.Labels, clusterv1.ClusterSetLabel)
			return
		}
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		mc.Labels[clusterv1.ClusterSetLabel] = set
	})).To(Succeed())
}

// serviceImport returns the cluster's ServiceImport namespace/name, or nil.
func (sc *importCluster) serviceImport(ctx context.Context, namespace, name string) func() *mcsv1beta1.ServiceImport {
	return func() *mcsv1beta1.ServiceImport {
		si := &mcsv1beta1.ServiceImport{}
		if err := sc.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, si); err != nil {
			return nil
		}
		return si
	}
}

// derivedService returns the derived Service of namespace/name, or nil.
func (sc *importCluster) derivedService(ctx context.Context, namespace, name string) func() *corev1.Service {
	return func() *corev1.Service {
		svc := &corev1.Service{}
		if err := sc.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: mcs.DerivedServiceName(namespace, name)}, svc); err != nil {
			return nil
		}
		return svc
	}
}

// importSlices returns the imported EndpointSlices of namespace/name in
// the cluster (those labelled for the multi-cluster service), sorted by name.
func (sc *importCluster) importSlices(ctx context.Context, namespace, name string) func() []discoveryv1.EndpointSlice {
	return func() []discoveryv1.EndpointSlice {
		list := &discoveryv1.EndpointSliceList{}
		if err := sc.c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{mcsv1beta1.LabelServiceName: name}); err != nil {
			return nil
		}
		slices.SortFunc(list.Items, func(a, b discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
		return list.Items
	}
}

// addressesFrom returns the endpoint addresses of the slices of source
// cluster, sorted.
func addressesFrom(items []discoveryv1.EndpointSlice, cluster string) []string {
	var out []string
	for _, s := range items {
		if s.Labels[mcsv1beta1.LabelSourceCluster] != cluster {
			continue
		}
		for _, e := range s.Endpoints {
			out = append(out, e.Addresses...)
		}
	}
	slices.Sort(out)
	return out
}

// resourceVersions maps every object the agent wrote into the cluster's
// namespace ns (ServiceImports, derived Services, imported EndpointSlices)
// to its resourceVersion: what a spec compares to tell whether it was
// written. Only ns: an earlier spec's objects still going away elsewhere are
// not this spec's writes.
func (sc *importCluster) resourceVersions(ctx context.Context, ns string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	sel := []client.ListOption{client.HasLabels{mcs.ClusterSetLabel}, client.InNamespace(ns)}
	sis := &mcsv1beta1.ServiceImportList{}
	Expect(sc.c.List(ctx, sis, sel...)).To(Succeed())
	for _, o := range sis.Items {
		out["ServiceImport "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	svcs := &corev1.ServiceList{}
	Expect(sc.c.List(ctx, svcs, sel...)).To(Succeed())
	for _, o := range svcs.Items {
		out["Service "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	eps := &discoveryv1.EndpointSliceList{}
	Expect(sc.c.List(ctx, eps, sel...)).To(Succeed())
	for _, o := range eps.Items {
		out["EndpointSlice "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	return out
}

// withoutKey returns m without key.
func withoutKey(m map[string]string, key string) map[string]string {
	m = maps.Clone(m)
	delete(m, key)
	return m
}

// importNode is the node the pods of the import specs run on.
const importNode = "import-node"

// podIP is the address of the i-th pod (from 0) of a service at base.
func podIP(base, i int) string { return fmt.Sprintf("10.%d.%d.%d", base, i/200, i%200+1) }

// podIPs are the addresses of pods 0 to n-1 at base, sorted.
func podIPs(base, n int) []string {
	var out []string
	for i := range n {
		out = append(out, podIP(base, i))
	}
	slices.Sort(out)
	return out
}

// exportService creates, in the cluster, namespace ns where missing,
// Service ns/name (port http 80 to 8080, selecting app=name; headless or
// not, as mutate makes it), n ready pods at base (with hostnames
// <name>-<i> and the Service as subdomain when hostnames) and the
// ServiceExport.
func (sc *importCluster) exportService(ctx context.Context, ns, name string, base, n int, hostnames bool, mutate ...func(*corev1.Service)) {
	GinkgoHelper()
	Expect(client.IgnoreAlreadyExists(sc.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	Expect(client.IgnoreAlreadyExists(sc.c.Create(ctx, svc))).To(Succeed())
	sc.runPods(ctx, ns, name, base, 0, n, hostnames)
	Expect(sc.c.Create(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
}

// runPods runs pods from to n-1 of app as a kubelet would report them:
// Running at podIP(base, i), ready.
func (sc *importCluster) runPods(ctx context.Context, ns, app string, base, from, n int, hostnames bool) {
	GinkgoHelper()
	for i := from; i < n; i++ {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", app, i), Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{NodeName: importNode, Containers: []corev1.Container{{
				Name: "app", Image: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			}}},
		}
		if hostnames {
			p.Spec.Hostname, p.Spec.Subdomain = p.Name, app
		}
		// The namespace's default ServiceAccount comes with its controller.
		Eventually(func() error { return client.IgnoreAlreadyExists(sc.c.Create(ctx, p)) }).Should(Succeed())
		ip := podIP(base, i)
		p.Status = corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}},
		}
		Expect(sc.c.Status().Update(ctx, p)).To(Succeed())
	}
}

// setPodReady sets pod ns/name's Ready condition.
func (sc *importCluster) setPodReady(ctx context.Context, ns, name string, ready bool) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := sc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return err
		}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
		return sc.c.Status().Update(ctx, p)
	})).To(Succeed())
}

// unexport deletes ServiceExport ns/name.
func (sc *importCluster) unexport(ctx context.Context, ns, name string) {
	GinkgoHelper()
	Expect(client.IgnoreNotFound(sc.c.Delete(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))).To(Succeed())
}

// exportCondition returns the condition t of ServiceExport ns/name, or nil.
func (sc *importCluster) exportCondition(ctx context.Context, ns, name, t string) func() *metav1.Condition {
	return func() *metav1.Condition {
		se := &mcsv1beta1.ServiceExport{}
		if err := sc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, se); err != nil {
			return nil
		}
		return meta.FindStatusCondition(se.Status.Conditions, t)
	}
}
