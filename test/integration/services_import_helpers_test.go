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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcscrd "sigs.k8s.io/mcs-api/config/crd"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/internal/identity"
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
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: dir, Controllers: importSpokeControllers})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Stop)
	spoke := &framework.ControlPlane{ControlPlane: cp, Dir: dir}
	sc := &importCluster{name: newClusterName(prefix)}
	sc.c, err = client.New(cp.Config, client.Options{Scheme: importSpecScheme})
	Expect(err).NotTo(HaveOccurred())
	spoke.Client = sc.c
	installImportCRDs(ctx, sc.c)
	sc.env = &agentEnv{spoke: spoke, token: createBootstrapToken(ctx)}
	sc.opts = sc.env.options(sc.name)
	sc.env.storeBootstrapSecret(ctx, sc.opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, sc.env.token))
	sc.agent = startAgentUnmanaged(sc.opts)
	DeferCleanup(func() { sc.agent.stop() })
	acceptAgent(ctx, sc.name)
	deleteClusterAfterSpec(sc.name)
	Eventually(clusterCondition(ctx, sc.name, clusterv1.ManagedClusterConditionJoined)).Should(HaveField("Status", metav1.ConditionTrue))
	return sc
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

// newImportSet creates an exclusive ManagedClusterSet and its hub
// namespace, removed when the enclosing container ends.
func newImportSet(ctx SpecContext) string {
	GinkgoHelper()
	hub := importHub()
	set := "svc-" + utilrand.String(5)
	Expect(hub.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}})).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(hub.Delete(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}}))).To(Succeed())
	})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mcs.SetNamespace(set), Labels: map[string]string{mcs.ClusterSetLabel: set}}}
	Expect(client.IgnoreAlreadyExists(hub.Create(ctx, ns))).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hub.Delete(ctx, ns))).To(Succeed()) })
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

// allowImports lets cluster's agent read the ImportedServices of set, as
// the hub does for the members of a set.
func allowImports(ctx SpecContext, set, cluster string) {
	GinkgoHelper()
	hub := importHub()
	ns := mcs.SetNamespace(set)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test-import-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{mcsv1alpha1.GroupName}, Resources: []string{"importedservices"}, Verbs: []string{"get", "list", "watch"}}},
	}
	Expect(client.IgnoreAlreadyExists(hub.Create(ctx, role))).To(Succeed())
	Expect(client.IgnoreAlreadyExists(hub.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test-import-" + cluster},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: identity.ClusterGroup(cluster)}},
	}))).To(Succeed())
}

// importOf is an ImportedService of set, as the hub merges one.
func importOf(set, namespace, name string, typ mcsv1alpha1.ServiceType, clusters ...mcsv1alpha1.ImportedCluster) *mcsv1alpha1.ImportedService {
	return &mcsv1alpha1.ImportedService{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: mcs.SetNamespace(set), Name: mcs.ObjectName(namespace, name),
			Labels: map[string]string{mcs.ClusterSetLabel: set, mcs.ServiceNamespaceLabel: namespace, mcs.ServiceNameLabel: name},
		},
		Spec: mcsv1alpha1.ImportedServiceSpec{
			ClusterSet: set, Namespace: namespace, Name: name,
			ServiceProperties: mcsv1alpha1.ServiceProperties{
				Type:  typ,
				Ports: []mcsv1alpha1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
			},
			Clusters: clusters,
		},
	}
}

// importFrom is cluster's entry of an import with n ready IPv4 endpoints
// 10.<base>.x.y, port http/8080, named <prefix>-<i> when prefix is set.
func importFrom(cluster string, base, n int, hostPrefix string) mcsv1alpha1.ImportedCluster {
	g := mcsv1alpha1.EndpointGroup{
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}},
	}
	for i := range n {
		e := mcsv1alpha1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", base, i/200, i%200+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}
		if hostPrefix != "" {
			e.Hostname = ptr.To(fmt.Sprintf("%s-%d", hostPrefix, i))
		}
		g.Endpoints = append(g.Endpoints, e)
	}
	return mcsv1alpha1.ImportedCluster{Name: cluster, Generation: 1, Available: true, Endpoints: []mcsv1alpha1.EndpointGroup{g}}
}

// publishImport writes is on the hub as its admin (the hub's merge would).
func publishImport(ctx context.Context, is *mcsv1alpha1.ImportedService) {
	GinkgoHelper()
	hub := importHub()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &mcsv1alpha1.ImportedService{}
		err := hub.Get(ctx, client.ObjectKeyFromObject(is), got)
		if apierrors.IsNotFound(err) {
			return hub.Create(ctx, is.DeepCopy())
		}
		if err != nil {
			return err
		}
		got.Labels, got.Spec = is.Labels, *is.Spec.DeepCopy()
		return hub.Update(ctx, got)
	})).To(Succeed())
}

// unpublishImport deletes is from the hub.
func unpublishImport(ctx context.Context, is *mcsv1alpha1.ImportedService) {
	GinkgoHelper()
	Expect(client.IgnoreNotFound(importHub().Delete(ctx, is.DeepCopy()))).To(Succeed())
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

// wantAddresses are the addresses importFrom(…, base, n, …) gives.
func wantAddresses(base, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("10.%d.%d.%d", base, i/200, i%200+1))
	}
	slices.Sort(out)
	return out
}

// resourceVersions maps every object the agent wrote into the cluster
// (ServiceImports, derived Services, imported EndpointSlices) to its
// resourceVersion: what a spec compares to tell whether it was written.
func (sc *importCluster) resourceVersions(ctx context.Context) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	sel := client.HasLabels{mcs.ClusterSetLabel}
	sis := &mcsv1beta1.ServiceImportList{}
	Expect(sc.c.List(ctx, sis, sel)).To(Succeed())
	for _, o := range sis.Items {
		out["ServiceImport "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	svcs := &corev1.ServiceList{}
	Expect(sc.c.List(ctx, svcs, sel)).To(Succeed())
	for _, o := range svcs.Items {
		out["Service "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	eps := &discoveryv1.EndpointSliceList{}
	Expect(sc.c.List(ctx, eps, sel)).To(Succeed())
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
