package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/test/framework"
)

var imagesDir = flag.String("images-dir", "../../bin/images", "directory holding the image archives that the container specs load (make images)")

// The images the container specs run, as `make images` writes them.
var containerImages = []string{"flotilla-hub", "flotilla-agent", "flotilla", "flotilla-dev-cluster"}

// Ports inside the containers.
const (
	hubPort   = 6443
	spokePort = 7443
)

// Where the images' non-root user may write.
const home = "/home/nonroot"

// containerLease is the agents' lease in the container specs: the hub
// marks a silent cluster Unknown after 5 × containerLease seconds, so a
// two-minute cut is seen on the hub.
const containerLease = "10"

// loaded holds the images loaded into the engine, once per suite.
var loaded struct {
	once sync.Once
	refs map[string]string
	err  error
}

// requireDocker returns a Docker harness whose containers and networks
// are removed after the spec, and whose containers' logs go to
// GinkgoWriter when it fails. Without a Docker engine the spec fails
// under CI=true and is skipped elsewhere.
func requireDocker(ctx context.Context) *framework.Docker {
	GinkgoHelper()
	d, err := framework.NewDocker(ctx)
	if err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			Fail(fmt.Sprintf("the container specs need a Docker engine, and CI=true: %v", err))
		}
		Skip(fmt.Sprintf("no Docker engine (%v): the container specs need one (under CI=true they fail instead)", err))
	}
	DeferCleanup(func(ctx context.Context) {
		Expect(d.Cleanup(ctx)).To(Succeed())
		Expect(d.Leftovers(ctx)).To(BeEmpty(), "every container and network of the run is removed")
	}, NodeTimeout(2*time.Minute))
	DeferCleanup(func(ctx context.Context) {
		if CurrentSpecReport().Failed() {
			d.WriteLogs(ctx, GinkgoWriter, 150)
		}
	}, NodeTimeout(time.Minute))
	return d
}

// imageRefs loads the image archives under -images-dir once and returns
// the references they were loaded as, by image name.
func imageRefs(ctx context.Context, d *framework.Docker) map[string]string {
	GinkgoHelper()
	loaded.once.Do(func() {
		started := time.Now()
		refs := map[string]string{}
		for _, name := range containerImages {
			archive := filepath.Join(*imagesDir, name+".tar")
			if _, err := os.Stat(archive); err != nil {
				loaded.err = fmt.Errorf("build the images first (make images): %w", err)
				return
			}
			ref, err := d.LoadImage(ctx, archive)
			if err != nil {
				loaded.err = err
				return
			}
			refs[name] = ref
		}
		loaded.refs = refs
		GinkgoWriter.Printf("loaded %v in %s\n", refs, time.Since(started).Round(time.Second))
	})
	Expect(loaded.err).NotTo(HaveOccurred())
	return loaded.refs
}

// containerFleet is a hub, one spoke and its agent, each in a container of
// its own. The hub sits on hubNet, the spoke on spokeNet, and the agent on
// both, as an agent inside a cluster that dials out to its hub would.
type containerFleet struct {
	docker            *framework.Docker
	hubNet, spokeNet  *framework.Network
	hub, spoke, agent *framework.Container
	// agentSpec starts another agent container like the first.
	agentSpec framework.ContainerSpec
	cluster   string
	hubURL    string
	token     string
	// hubClient and spokeClient reach the containers from the test through
	// their ports published on 127.0.0.1, with admin rights.
	hubClient, spokeClient client.Client
	// spokeKubeconfig is the file behind spokeClient.
	spokeKubeconfig string
	// onHub runs bin/flotilla on this machine against the hub container.
	onHub func(args ...string) cliRun
}

// startContainerFleet starts a hub and a spoke container, joins the spoke
// with the agent image and what `flotilla join --dry-run` (the flotilla
// image, on the hub's network) prints, and accepts it from the test. The
// agent reaches the hub at its container's name, which the hub's serving
// certificate covers through --tls-san, if byName, else at its address.
func startContainerFleet(ctx context.Context, d *framework.Docker, cluster string, byName bool) *containerFleet {
	GinkgoHelper()
	refs := imageRefs(ctx, d)
	f := &containerFleet{docker: d, cluster: cluster}
	var err error
	f.hubNet, err = d.CreateNetwork(ctx, "hub")
	Expect(err).NotTo(HaveOccurred())
	f.spokeNet, err = d.CreateNetwork(ctx, "spoke")
	Expect(err).NotTo(HaveOccurred())

	By("starting the hub image with its embedded control plane, and a spoke from the dev-cluster image")
	hubIP := f.hubNet.Addr(10)
	hubHost := hubIP
	if byName {
		hubHost = d.Name("hub")
	}
	f.hubURL = fmt.Sprintf("https://%s:%d", hubHost, hubPort)
	f.hub, err = d.Start(ctx, framework.ContainerSpec{
		Name: "hub", Image: refs["flotilla-hub"], Network: f.hubNet, IP: hubIP, Publish: []int{hubPort},
		Args: []string{"--data-dir", home + "/hub", "--bind-address", "0.0.0.0", "--advertise-address", hubIP,
			"--tls-san", d.Name("hub"), "--secure-port", strconv.Itoa(hubPort)},
	})
	Expect(err).NotTo(HaveOccurred())
	f.startSpoke(ctx, refs)
	Expect(f.hub.WaitForOutput(ctx, fmt.Sprintf("flotilla-hub is ready at https://%s:%d", hubIP, hubPort), 3*time.Minute)).To(Succeed())
	f.spokeReady(ctx)

	hubKubeconfig := hostKubeconfig(ctx, f.hub, home+"/hub/admin.kubeconfig", hubPort)
	f.hubClient = devClient(hubKubeconfig)
	f.onHub = func(args ...string) cliRun {
		GinkgoHelper()
		return runFlotilla(ctx, append(args, "--kubeconfig", hubKubeconfig)...)
	}
	f.join(ctx, refs)
	return f
}

// startSpoke starts the spoke container from the dev-cluster image.
func (f *containerFleet) startSpoke(ctx context.Context, refs map[string]string) {
	GinkgoHelper()
	var err error
	spokeIP := f.spokeNet.Addr(10)
	f.spoke, err = f.docker.Start(ctx, framework.ContainerSpec{
		Name: "spoke", Image: refs["flotilla-dev-cluster"], Network: f.spokeNet, IP: spokeIP, Publish: []int{spokePort},
		Args: []string{"--name", f.cluster, "--data-dir", home + "/cluster", "--bind-address", spokeIP, "--secure-port", strconv.Itoa(spokePort), "--nodes", "1"},
	})
	Expect(err).NotTo(HaveOccurred())
}

// spokeReady waits for the spoke and makes the clients that reach it.
func (f *containerFleet) spokeReady(ctx context.Context) {
	GinkgoHelper()
	Expect(f.spoke.WaitForOutput(ctx, "flotilla-dev-cluster is ready at", 3*time.Minute)).To(Succeed())
	f.spokeKubeconfig = hostKubeconfig(ctx, f.spoke, home+"/cluster/admin.kubeconfig", spokePort)
	f.spokeClient = devClient(f.spokeKubeconfig)
}

// join joins the spoke to the hub at f.hubURL through f.onHub: init, join
// --dry-run in a container, then the agent image with agentArgs besides its
// usual flags, and accepts the cluster.
func (f *containerFleet) join(ctx context.Context, refs map[string]string, agentArgs ...string) {
	GinkgoHelper()
	d, cluster := f.docker, f.cluster
	spokeKubeconfig, err := f.spoke.CopyOut(ctx, home+"/cluster/admin.kubeconfig")
	Expect(err).NotTo(HaveOccurred())
	Expect(string(spokeKubeconfig)).To(ContainSubstring(fmt.Sprintf("https://%s:%d", f.spokeNet.Addr(10), spokePort)), "the spoke's kubeconfig names its own address")

	By("init on the hub, then join --dry-run from the flotilla image on the hub's network")
	join := joinInfo(f.onHub("init", "--hub-apiserver", f.hubURL, "-o", "json"))
	Expect(join.URL).To(Equal(f.hubURL))
	f.token = join.Token
	joinC, err := d.Start(ctx, framework.ContainerSpec{
		Name: "join", Image: refs["flotilla"], Network: f.hubNet,
		Args: []string{"join", "--dry-run", "-o", "yaml", "--hub-token", f.token, "--hub-apiserver", f.hubURL, "--cluster-name", cluster},
	})
	Expect(err).NotTo(HaveOccurred())
	code, err := joinC.Wait(ctx)
	Expect(err).NotTo(HaveOccurred())
	stdout, stderr, err := joinC.Logs(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(0), stderr)

	By("applying join's namespace and bootstrap Secret to the spoke; the agent image stands in for join's Deployment")
	// The dev cluster's nodes are simulated: the Deployment that join
	// renders would get a Pod marked Running, with nothing running it. The
	// agent container runs what that Pod would, with the spoke's admin
	// kubeconfig in place of the ServiceAccount's token.
	var applied []string
	for _, obj := range decodeYAML(stdout) {
		if obj.GetKind() == "Namespace" || obj.GetKind() == "Secret" && obj.GetName() == agent.BootstrapSecretName {
			Expect(f.spokeClient.Create(ctx, obj)).To(Succeed())
			applied = append(applied, obj.GetKind()+" "+obj.GetName())
		}
	}
	Expect(applied).To(ConsistOf("Namespace "+agent.DefaultNamespace, "Namespace "+addon.DefaultInstallNamespace, "Secret "+agent.BootstrapSecretName))
	bootstrap := &corev1.Secret{}
	Expect(f.spokeClient.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: agent.BootstrapSecretName}, bootstrap)).To(Succeed())
	Expect(string(bootstrap.Data["kubeconfig"])).To(ContainSubstring("server: " + f.hubURL))

	By("starting the agent image on both networks, and accepting the cluster from this machine")
	f.agentSpec = framework.ContainerSpec{
		Image: refs["flotilla-agent"], Network: f.spokeNet,
		Files: []framework.File{{Path: home + "/spoke.kubeconfig", Data: spokeKubeconfig}},
		Args:  append([]string{"--cluster-name", cluster, "--kubeconfig", home + "/spoke.kubeconfig", "--lease-duration-seconds", containerLease}, agentArgs...),
	}
	f.agent = f.startAgent(ctx, "agent-1")
	res := f.onHub("accept", "--clusters", cluster, "--wait", "--timeout", "3m")
	Expect(res.code).To(Equal(0), res.stderr, f.agent.Tail(ctx, 30))
	Eventually(f.available).WithContext(ctx).WithTimeout(time.Minute).Should(Equal(metav1.ConditionTrue))
}

// startAgent starts a container of the agent image named name, on the
// spoke's network and the hub's.
func (f *containerFleet) startAgent(ctx context.Context, name string) *framework.Container {
	GinkgoHelper()
	spec := f.agentSpec
	spec.Name = name
	c, err := f.docker.Create(ctx, spec)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Connect(ctx, f.hubNet, "")).To(Succeed())
	Expect(c.Start(ctx)).To(Succeed())
	return c
}

// available is the cluster's Available condition on the hub.
func (f *containerFleet) available(ctx context.Context) metav1.ConditionStatus {
	mc := &clusterv1.ManagedCluster{}
	if err := f.hubClient.Get(ctx, client.ObjectKey{Name: f.cluster}, mc); err != nil {
		return ""
	}
	if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil {
		return c.Status
	}
	return ""
}

// hostKubeconfig copies a kubeconfig out of a container and points it at
// the container's port as published on 127.0.0.1 (which the containers'
// serving certificates name), for clients on this machine.
func hostKubeconfig(ctx context.Context, c *framework.Container, file string, port int) string {
	GinkgoHelper()
	data, err := c.CopyOut(ctx, file)
	Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.Load(data)
	Expect(err).NotTo(HaveOccurred())
	hostPort, err := c.HostPort(ctx, port)
	Expect(err).NotTo(HaveOccurred())
	for _, cluster := range cfg.Clusters {
		cluster.Server = fmt.Sprintf("https://127.0.0.1:%d", hostPort)
	}
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// decodeYAML splits a YAML stream into objects.
func decodeYAML(s string) []*unstructured.Unstructured {
	GinkgoHelper()
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(s), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		Expect(err).NotTo(HaveOccurred())
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// workOf is a ManifestWork for cluster holding objs.
func workOf(cluster, name string, objs ...runtime.Object) *workv1.ManifestWork {
	GinkgoHelper()
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	for _, o := range objs {
		raw, err := json.Marshal(o)
		Expect(err).NotTo(HaveOccurred())
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w
}

// configMap is a ConfigMap in namespace default.
func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Data:       data,
	}
}

// workApplied says whether the hub's work has condition Applied True for
// its current generation.
func workApplied(ctx context.Context, hub client.Client, cluster, name string) bool {
	w := &workv1.ManifestWork{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, w); err != nil {
		return false
	}
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation
}

// policyYAML is a Policy in namespace policies that informs about (or
// enforces) namespace ns being present.
func policyYAML(name, ns string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata:
  name: %[1]s
  namespace: policies
spec:
  remediationAction: inform
  policy-templates:
    - objectDefinition:
        apiVersion: policy.open-cluster-management.io/v1
        kind: ConfigurationPolicy
        metadata:
          name: %[1]s
        spec:
          remediationAction: inform
          severity: low
          object-templates:
            - complianceType: MustHave
              objectDefinition:
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: %[2]s
`, name, ns))
}
