package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// haLeaseFlags time the replicas' election short, so that a crashed
// leader's lease runs out within seconds (the defaults take a minute).
var haLeaseFlags = []string{"--leader-elect-lease-duration", "6s", "--leader-elect-renew-deadline", "4s", "--leader-elect-retry-period", "1s"}

// hubReplicas are flotilla-hub processes run with --kubeconfig against one
// API server, serving the ManifestWork webhook on one shared port.
type hubReplicas struct {
	procs []*framework.Process
}

// startHubReplicas starts n replicas against the hub API server api, with a
// webhook certificate from its CA, and waits until one leads and every one
// serves the webhook.
func startHubReplicas(ctx context.Context, api *framework.ControlPlane, n int) *hubReplicas {
	GinkgoHelper()
	certDir, err := api.EnsureServingCert("webhook", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(certDir, "ca.crt"), api.CAData, 0o600)).To(Succeed())
	port, err := framework.FreePort()
	Expect(err).NotTo(HaveOccurred())
	r := &hubReplicas{}
	for range n {
		args := append([]string{"--kubeconfig", api.AdminKubeconfig,
			"--webhook-cert-dir", certDir, "--webhook-port", strconv.Itoa(port), "--webhook-reuse-port",
			"--webhook-advertise-url", "https://127.0.0.1:" + strconv.Itoa(port),
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, haLeaseFlags...)
		p, err := framework.StartProcess(context.WithoutCancel(ctx), filepath.Join(*binDir, "flotilla-hub"), args...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { p.Stop(30 * time.Second) })
		Expect(p.WaitForOutput("Serving the ManifestWork admission webhook on a shared port", time.Minute)).To(Succeed())
		r.procs = append(r.procs, p)
	}
	Eventually(r.leader, time.Minute).ShouldNot(BeNil(), "one replica leads")
	return r
}

// leader is the live replica that leads, or nil.
func (r *hubReplicas) leader() *framework.Process {
	for _, p := range r.procs {
		if !p.Exited() && p.WaitForOutput("flotilla-hub is ready", 0) == nil {
			return p
		}
	}
	return nil
}

// failOver kills the leader with SIGKILL and returns when, and how long
// until another replica said it runs the controllers.
func (r *hubReplicas) failOver() (killed time.Time, took time.Duration) {
	GinkgoHelper()
	old := r.leader()
	Expect(old).NotTo(BeNil())
	killed = time.Now()
	old.Kill()
	Eventually(r.leader, 2*time.Minute, 50*time.Millisecond).ShouldNot(BeNil(), "a standby takes over")
	return killed, time.Since(killed)
}

// workWriter creates a ManifestWork and updates another, over and over,
// as a user does during a failover: a write that fails is sent again, up
// to three times. It keeps every failed attempt and every write it gave up on.
type workWriter struct {
	c         client.Client
	namespace string
	mu        sync.Mutex
	writes    int
	failures  []creatorFailure
	lost      []string
	stop      chan struct{}
	done      chan struct{}
}

func startWorkWriter(ctx context.Context, c client.Client, namespace string) *workWriter {
	GinkgoHelper()
	w := &workWriter{c: c, namespace: namespace, stop: make(chan struct{}), done: make(chan struct{})}
	updated := configMapWork(namespace, "ha-updated", "0")
	Expect(c.Create(ctx, updated)).To(Succeed())
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		for i := 1; ; i++ {
			select {
			case <-w.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			name := fmt.Sprintf("ha-%d", i)
			w.write("create "+name, func() error {
				err := c.Create(ctx, configMapWork(namespace, name, "0"))
				if apierrors.IsAlreadyExists(err) {
					return nil // an earlier attempt was stored after all
				}
				return err
			})
			// A merge patch, not an update: the agent writes the work too.
			patch, err := json.Marshal(map[string]any{"spec": configMapWork(namespace, "ha-updated", strconv.Itoa(i)).Spec})
			Expect(err).NotTo(HaveOccurred())
			w.write(fmt.Sprintf("patch ha-updated to %d", i), func() error {
				return c.Patch(ctx, updated, client.RawPatch(types.MergePatchType, patch))
			})
		}
	}()
	return w
}

// write makes one write, sending it again after a failure.
func (w *workWriter) write(what string, attempt func() error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	for range 3 {
		err := attempt()
		if err == nil {
			return
		}
		w.failures = append(w.failures, creatorFailure{time.Now(), what + ": " + err.Error()})
	}
	w.lost = append(w.lost, what)
}

// finish stops the writer and returns how many writes it made, the
// attempts that failed and the writes it gave up on.
func (w *workWriter) finish() (writes int, failures []creatorFailure, lost []string) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes, w.failures, w.lost
}

// configMapWork is a ManifestWork of one ConfigMap whose data holds value.
func configMapWork(namespace, name, value string) *workv1.ManifestWork {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data:       map[string]string{"value": value},
	}
	raw, err := json.Marshal(cm)
	Expect(err).NotTo(HaveOccurred())
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
}

// haReplicaSet is a ManifestWorkReplicaSet of one ConfigMap, rolled out one
// cluster at a time, each staying successful for soak before the next.
func haReplicaSet(soak time.Duration) *workv1alpha1.ManifestWorkReplicaSet {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(`apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata: {name: web, namespace: rollout}
spec:
  placementRefs:
    - name: fleet
      rolloutStrategy:
        type: Progressive
        progressive: {maxConcurrency: 1, minSuccessTime: `+soak.String()+`, progressDeadline: 2m}
  manifestWorkTemplate:
    workload:
      manifests:
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: web, namespace: default}, data: {version: "1"}}
`), &u.Object)).To(Succeed())
	rs := &workv1alpha1.ManifestWorkReplicaSet{}
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rs)).To(Succeed())
	return rs
}

// haPolicy is a policy that informs whether namespace prod exists, and a
// binding of it to Placement everywhere.
func haPolicy(name string) (*unstructured.Unstructured, *policyv1.PlacementBinding) {
	GinkgoHelper()
	p := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(`apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: `+name+`, namespace: policies}
spec:
  remediationAction: inform
  disabled: false
  policy-templates:
    - objectDefinition:
        apiVersion: policy.open-cluster-management.io/v1
        kind: ConfigurationPolicy
        metadata: {name: `+name+`}
        spec:
          remediationAction: inform
          severity: low
          object-templates:
            - complianceType: MustHave
              objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}
`), &p.Object)).To(Succeed())
	return p, &policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Namespace: p.GetNamespace(), Name: name},
		PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: "everywhere"},
		Subjects:     []policyv1.Subject{{APIGroup: policyv1.GroupVersion.Group, Kind: "Policy", Name: name}},
	}
}

var _ = Describe("Hub controllers in several replicas against one API server", Label("ha"), func() {
	It("keeps every ManifestWork write working while the leader is SIGKILLed during a rollout and during a policy propagation; a standby finishes both, once", func(ctx SpecContext) {
		klog.LogToStderr(false)
		klog.SetOutput(GinkgoWriter)

		api, err := framework.Start(ctx, framework.HubAPI)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(api.Stop)
		replicas := startHubReplicas(ctx, api, 3)
		onHub := func(args ...string) cliRun {
			GinkgoHelper()
			return runFlotilla(ctx, append(args, "--kubeconfig", api.AdminKubeconfig)...)
		}
		c := devClient(api.AdminKubeconfig)

		By("joining two clusters through the replicas")
		clusters := []string{"cluster-a", "cluster-b"}
		join := joinInfo(onHub("init", "-o", "json"))
		for _, name := range clusters {
			spoke, err := framework.Start(ctx, framework.Spoke)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(spoke.Stop)
			startJoin(ctx, spoke, join.Token, join.URL, name)
		}
		res := onHub("accept", "--clusters", "cluster-a,cluster-b", "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(0), res.stderr)
		for _, ns := range []string{"rollout", "policies"} {
			Expect(onHub("clusterset", "bind", "global", "-n", ns).code).To(Equal(0))
		}
		for ns, name := range map[string]string{"rollout": "fleet", "policies": "everywhere"} {
			res = onHub("create", "placement", name, "-n", ns, "--clustersets", "global", "--wait")
			Expect(res.code).To(Equal(0), res.stderr)
			Expect(res.stdout).To(ContainSubstring("Chosen clusters (2): "))
		}

		By("rolling a ManifestWorkReplicaSet out one cluster at a time, and killing the leader once the first cluster has it")
		writer := startWorkWriter(ctx, c, "cluster-a")
		Expect(c.Create(ctx, haReplicaSet(10*time.Second))).To(Succeed())
		Eventually(func() int { return len(fleetWorks(ctx, c)) }, time.Minute, 50*time.Millisecond).Should(Equal(1))
		killedRollout, took := replicas.failOver()
		GinkgoWriter.Printf("controllers running again %s after the leader was killed during the rollout\n", took.Round(time.Millisecond))

		By("refusing an invalid work and accepting valid ones while a standby took over")
		nameless := configMapWork("cluster-a", "nameless", "0")
		nameless.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default"}}`)
		Expect(c.Create(ctx, nameless)).To(MatchError(ContainSubstring("spec.workload.manifests[0] (ConfigMap in namespace default) has no metadata.name")))

		By("the new leader completing the rollout: one work per cluster")
		Eventually(func() string {
			rs := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "rollout", Name: "web"}, rs); err != nil {
				return err.Error()
			}
			cond := meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)
			if cond == nil {
				return "no condition"
			}
			return cond.Reason
		}, 2*time.Minute).Should(Equal(workv1alpha1.ReasonComplete))
		list := &workv1.ManifestWorkList{}
		Expect(c.List(ctx, list, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: "rollout.web"})).To(Succeed())
		perCluster := map[string]int{}
		for _, w := range list.Items {
			perCluster[w.Namespace]++
			Expect(meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable)).To(BeTrue(), "work %s/%s is Available", w.Namespace, w.Name)
		}
		Expect(perCluster).To(Equal(map[string]int{"cluster-a": 1, "cluster-b": 1}))

		By("propagating policies while the leader is killed: every policy replicated once to each cluster")
		const policies = 20
		created := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(created)
			for i := range policies {
				p, binding := haPolicy(fmt.Sprintf("ha-%d", i))
				Expect(c.Create(ctx, p)).To(Succeed())
				Expect(c.Create(ctx, binding)).To(Succeed())
				time.Sleep(150 * time.Millisecond) // the pace of the scenario, not a synchronisation
			}
		}()
		Eventually(func() int {
			list := &policyv1.PolicyList{}
			Expect(c.List(ctx, list, client.InNamespace("cluster-a"))).To(Succeed())
			return len(list.Items)
		}, time.Minute, 20*time.Millisecond).Should(BeNumerically(">", 0))
		killedPropagation, took := replicas.failOver()
		GinkgoWriter.Printf("controllers running again %s after the leader was killed during the propagation\n", took.Round(time.Millisecond))
		<-created
		Eventually(func() map[string]int {
			list := &policyv1.PolicyList{}
			Expect(c.List(ctx, list, client.HasLabels{policyv1.RootPolicyLabel})).To(Succeed())
			out := map[string]int{}
			for _, p := range list.Items {
				out[p.Namespace+"/"+p.Labels[policyv1.RootPolicyLabel]]++
			}
			return out
		}, 2*time.Minute).Should(And(HaveLen(2*policies), HaveEach(1)), "each policy replicated once to each cluster")

		By("every ManifestWork write during both failovers succeeded, at the latest when sent again")
		writes, failures, lost := writer.finish()
		failed := make([]string, len(failures))
		for i, f := range failures {
			failed[i] = f.err
		}
		Expect(lost).To(BeEmpty(), "of %d writes, failed attempts: %q", writes, failed)
		// The one attempt that can fail is a write whose admission call the
		// killed replica had in flight at the kill (docs/ha.md): the API
		// server does not retry it. Nothing else fails.
		Expect(len(failures)).To(BeNumerically("<=", 2), "at most one failed attempt per kill: %q", failed)
		for _, f := range failures {
			sinceKill := f.at.Sub(killedRollout)
			if f.at.After(killedPropagation) {
				sinceKill = f.at.Sub(killedPropagation)
			}
			Expect(sinceKill).To(And(BeNumerically(">=", 0), BeNumerically("<", time.Second)), "a write failed away from a kill: %s", f.err)
			Expect(f.err).To(And(ContainSubstring("failed calling webhook"), Or(ContainSubstring("connection reset by peer"), ContainSubstring("EOF"), ContainSubstring("connection lost"))),
				"the failure is the admission call in flight on the killed replica")
		}
		GinkgoWriter.Printf("%d ManifestWork writes during the failovers, %d attempts failed and succeeded when sent again: %q\n", writes, len(failures), failed)
		Expect(writes).To(BeNumerically(">", 20))
		Expect(replicas.leader()).NotTo(BeNil())
	})
})
