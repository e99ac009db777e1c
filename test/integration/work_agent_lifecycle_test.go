package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/work"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// spokeState is what a spoke object is: its UID and resource version.
type spokeState struct {
	uid types.UID
	rv  string
}

// stateOf reads the UID and resource version of each object.
func stateOf(ctx SpecContext, spoke *framework.ControlPlane, objs ...client.Object) []spokeState {
	GinkgoHelper()
	var out []spokeState
	for _, obj := range objs {
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		out = append(out, spokeState{obj.GetUID(), obj.GetResourceVersion()})
	}
	return out
}

var _ = Describe("Work agent: lifecycle", Ordered, func() {
	It("applies works for a joined agent, and a restarted agent neither re-creates nor deletes", func(ctx SpecContext) {
		env := newAgentEnv(ctx)
		name := newClusterName("work-joined")
		deleteClusterAfterSpec(name)
		DeferCleanup(func(ctx SpecContext) { releaseWorks(ctx, hubCP, name) })
		opts := env.options(name)
		opts.WorkResyncInterval = time.Second
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		a := startAgent(opts)
		acceptAgent(ctx, name)
		Eventually(clusterCondition(ctx, name, clusterv1.ManagedClusterConditionJoined)).Should(haveStatus(metav1.ConditionTrue))

		ns := name + "-app"
		w := newWork(name, "joined-"+name, namespaceManifest(ns), configMap(ns, "settings", map[string]string{"k": "v"}), deploymentManifest(ns, "web", 1))
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(workCond(ctx, name, w.Name, workv1.WorkApplied), time.Minute).Should(haveStatus(metav1.ConditionTrue))
		Eventually(workCond(ctx, name, w.Name, workv1.WorkAvailable)).Should(haveStatus(metav1.ConditionTrue))
		amw := &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: work.AppliedManifestWorkName(work.HubHash(hubCP.URL), w.Name)}}
		Expect(env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(amw), amw)).To(Succeed())
		agentID := string(env.hubSecret(ctx, opts.Namespace)["agent-name"])
		Expect(amw.Spec.AgentID).To(Equal(agentID), "the AppliedManifestWork names the agent")

		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}},
			amw,
		}
		before := stateOf(ctx, env.spoke, objs...)
		workRV := getWork(ctx, hubCP, name, w.Name).ResourceVersion

		By("restarting the agent")
		a.stop()
		a = startAgent(opts)
		Eventually(a.logs.count("Applying ManifestWorks")).Should(BeNumerically(">=", 1))
		Consistently(func() []spokeState { return stateOf(ctx, env.spoke, objs...) }, 4*time.Second, 250*time.Millisecond).Should(Equal(before),
			"the same objects, unchanged, through several resyncs")
		Expect(getWork(ctx, hubCP, name, w.Name).ResourceVersion).To(Equal(workRV), "and the same status: nothing to write")

		By("applying a change through the restarted agent")
		Eventually(func() error {
			w := getWork(ctx, hubCP, name, w.Name)
			w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, configMap(ns, "more", nil))
			return hubCP.Client.Update(ctx, w)
		}).Should(Succeed())
		Eventually(func() error {
			return env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "more"}, &corev1.ConfigMap{})
		}).Should(Succeed())
	})

	It("leaves the spoke as it is while the hub is down, and catches up when it is back", func(ctx SpecContext) {
		hub, err := framework.Start(ctx, framework.Hub)
		Expect(err).NotTo(HaveOccurred())
		running := true
		DeferCleanup(func() {
			if running {
				hub.Stop()
			}
		})
		spoke := newWorkSpoke(ctx)
		c := acceptedCluster(ctx, hub, newClusterName("work-outage"))
		// A grace period far shorter than the outage: an unreachable hub
		// must not count as a work gone.
		startWorkAgentOn(hub, c, spoke, func(cfg *workConfig) { cfg.EvictionGracePeriod = time.Second })
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "outage", configMap(ns, "settings", map[string]string{"k": "v"}), deploymentManifest(ns, "web", 2))
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: ns, Name: "web"},
			FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
		}}
		Expect(hub.Client.Create(ctx, w)).To(Succeed())
		applied := func() bool {
			got := &workv1.ManifestWork{}
			if err := hub.Client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
				return false
			}
			return meta.IsStatusConditionTrue(got.Status.Conditions, workv1.WorkApplied)
		}
		Eventually(applied).Should(BeTrue())
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		amw := &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: work.AppliedManifestWorkName(work.HubHash(hub.URL), w.Name)}}
		before := stateOf(ctx, spoke, cm, dep, amw)

		By("stopping the hub")
		hub.Halt()
		running = false
		Consistently(func() []spokeState { return stateOf(ctx, spoke, cm, dep, amw) }, 5*time.Second, 250*time.Millisecond).Should(Equal(before),
			"nothing deleted, re-created or changed, though the grace period passed")
		Expect(amw.Status.EvictionStartTime).To(BeNil())

		By("changing the Deployment's status while the hub is away, as its controller would")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		dep.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}
		Expect(spoke.Client.Status().Update(ctx, dep)).To(Succeed())

		By("starting the hub again: the status catches up")
		hub, err = hub.Resume(ctx)
		Expect(err).NotTo(HaveOccurred())
		running = true
		Eventually(func() []workv1.FeedbackValue {
			got := &workv1.ManifestWork{}
			if err := hub.Client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil || len(got.Status.ResourceStatus.Manifests) < 2 {
				return nil
			}
			return got.Status.ResourceStatus.Manifests[1].StatusFeedback.Values
		}, time.Minute).Should(ContainElement(workv1.FeedbackValue{Name: "ReadyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}}))
		after := stateOf(ctx, spoke, cm, amw)
		Expect(after).To(Equal([]spokeState{before[0], before[2]}), "the ConfigMap and the record are as they were")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		Expect(dep.UID).To(Equal(before[1].uid))
		Consistently(applied, 2*time.Second, 250*time.Millisecond).Should(BeTrue())
	})
})
