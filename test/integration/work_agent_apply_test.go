package integration

import (
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/work"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("Work agent: applying", Ordered, func() {
	var spoke *framework.ControlPlane

	BeforeAll(func(ctx SpecContext) {
		spoke = newWorkSpoke(ctx)
	})

	It("applies manifests in kind order, each owned by the AppliedManifestWork, and reports them", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-apply")
		a := startWorkAgent(c, spoke)
		ns := c.name + "-app"
		w := newWork(c.name, "ordered-"+c.name,
			deploymentManifest(ns, "web", 1),
			configMap(ns, "settings", map[string]string{"color": "blue"}),
			manifest(map[string]any{
				"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
				"metadata": map[string]any{"name": c.name + "-reader"},
				"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}},
			}),
			namespaceManifest(ns),
		)
		created := time.Now()
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())

		By("reporting Applied on the hub")
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatusReason(metav1.ConditionTrue, workv1.ReasonAppliedManifestWorkComplete))
		AddReportEntry("ManifestWork create to Applied=True on the hub", time.Since(created).Round(time.Millisecond).String())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkAvailable)).Should(haveStatus(metav1.ConditionTrue))
		Expect(getWork(ctx, hubCP, c.name, w.Name).Finalizers).To(ContainElement(workv1.ManifestWorkFinalizer))

		By("recording the work in AppliedManifestWork <hubHash>-<work>")
		amw := a.applied(ctx, w.Name)
		Expect(amw.Spec).To(Equal(workv1.AppliedManifestWorkSpec{HubHash: work.HubHash(hubCP.URL), AgentID: "agent1", ManifestWorkName: w.Name}))
		Expect(amw.Status.AppliedResources).To(ConsistOf(
			HaveField("ResourceIdentifier", workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: ns, Name: "web"}),
			HaveField("ResourceIdentifier", workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "settings"}),
			HaveField("ResourceIdentifier", workv1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: c.name + "-reader"}),
			HaveField("ResourceIdentifier", workv1.ResourceIdentifier{Resource: "namespaces", Name: ns}),
		))

		By("owning every object with a non-controller ownerReference to it")
		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: c.name + "-reader"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}},
		}
		var revisions []int
		for _, obj := range objs {
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			Expect(ownedBy(obj, amw)).To(BeTrue(), "%T %s is owned by %s", obj, obj.GetName(), amw.Name)
			rv, err := strconv.Atoi(obj.GetResourceVersion())
			Expect(err).NotTo(HaveOccurred())
			revisions = append(revisions, rv)
		}
		By("in kind order: one etcd numbers every write, so creation order shows in the resource versions")
		Expect(revisions[0] < revisions[1] && revisions[1] < revisions[2] && revisions[2] < revisions[3]).To(BeTrue(),
			"Namespace, ClusterRole, ConfigMap, Deployment were created in that order: %v", revisions)

		By("describing each manifest by ordinal, group, version, kind, resource, name and namespace")
		Expect(manifestStatus(ctx, c.name, w.Name, 0)()).To(HaveField("ResourceMeta", workv1.ManifestResourceMeta{
			Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Name: "web", Namespace: ns,
		}))
		Expect(manifestStatus(ctx, c.name, w.Name, 2)()).To(HaveField("ResourceMeta", workv1.ManifestResourceMeta{
			Ordinal: 2, Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Resource: "clusterroles", Name: c.name + "-reader",
		}))
		for i := range int32(4) {
			Expect(manifestCond(ctx, c.name, w.Name, i, workv1.ManifestApplied)()).To(haveStatusReason(metav1.ConditionTrue, workv1.ReasonAppliedManifestComplete))
			Expect(manifestCond(ctx, c.name, w.Name, i, workv1.ManifestAvailable)()).To(haveStatusReason(metav1.ConditionTrue, workv1.ReasonResourceAvailable))
		}
	})

	It("merges the manifest onto a live object with Update, keeping the fields the manifest does not set", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-update")
		startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		By("finding an object that someone else made")
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared", Labels: map[string]string{"owner": "team-a"}},
			Data:       map[string]string{"color": "red", "extra": "keep me"},
		}
		Expect(spoke.Client.Create(ctx, cm)).To(Succeed())

		w := newWork(c.name, "update-"+c.name, configMap(ns, "shared", map[string]string{"color": "blue"}))
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"color": "blue", "extra": "keep me"}))
			g.Expect(cm.Labels).To(HaveKeyWithValue("owner", "team-a"))
			g.Expect(cm.OwnerReferences).To(HaveLen(1))
		}).Should(Succeed())

		By("updating the object when the manifest changes, which is no drift")
		Eventually(func() error {
			w := getWork(ctx, hubCP, c.name, w.Name)
			w.Spec.Workload.Manifests[0] = configMap(ns, "shared", map[string]string{"color": "green"})
			return hubCP.Client.Update(ctx, w)
		}).Should(Succeed())
		Eventually(func() map[string]string {
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			return cm.Data
		}).Should(Equal(map[string]string{"color": "green", "extra": "keep me"}))
		Eventually(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestApplied)).Should(And(
			haveStatus(metav1.ConditionTrue), HaveField("ObservedGeneration", int64(2))))
		Expect(manifestStatus(ctx, c.name, w.Name, 0)()).To(HaveField("Drift", BeNil()))
	})

	It("applies server-side as work-agent, fails on conflicts unless forced, and takes the field manager given", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-ssa")
		startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		By("finding a field owned by another field manager")
		other := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "contested", "namespace": ns},
			"data":     map[string]any{"level": "low"},
		}}
		Expect(spoke.Client.Patch(ctx, other, client.Apply, client.FieldOwner("someone-else"))).To(Succeed())

		ssa := func(force bool, manager string) []workv1.ManifestConfigOption {
			return []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "contested"},
				UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply,
					ServerSideApply: &workv1.ServerSideApplyConfig{Force: force, FieldManager: manager}},
			}, {
				ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "fresh"},
				UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply},
			}}
		}
		w := newWork(c.name, "ssa-"+c.name,
			configMap(ns, "contested", map[string]string{"level": "high"}),
			configMap(ns, "fresh", map[string]string{"a": "b"}))
		w.Spec.ManifestConfigs = ssa(false, "")
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())

		By("failing the conflicting manifest with AppliedManifestFailed, naming the conflict")
		Eventually(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestApplied)).Should(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed),
			HaveField("Message", And(ContainSubstring("conflict"), ContainSubstring("someone-else"), ContainSubstring(".data.level")))))
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionFalse))
		By("applying the other as field manager work-agent")
		Eventually(manifestCond(ctx, c.name, w.Name, 1, workv1.ManifestApplied)).Should(haveStatus(metav1.ConditionTrue))
		fresh := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fresh"}, fresh)).To(Succeed())
		Expect(fresh.ManagedFields).To(ContainElement(And(HaveField("Manager", "work-agent"), HaveField("Operation", metav1.ManagedFieldsOperationApply))))
		contested := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "contested"}, contested)).To(Succeed())
		Expect(contested.Data).To(HaveKeyWithValue("level", "low"))

		By("taking the field over when forced, as the field manager given")
		Eventually(func() error {
			w := getWork(ctx, hubCP, c.name, w.Name)
			w.Spec.ManifestConfigs = ssa(true, "work-agent-edge")
			return hubCP.Client.Update(ctx, w)
		}).Should(Succeed())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "contested"}, contested)).To(Succeed())
		Expect(contested.Data).To(HaveKeyWithValue("level", "high"))
		Expect(contested.ManagedFields).To(ContainElement(And(HaveField("Manager", "work-agent-edge"), HaveField("Operation", metav1.ManagedFieldsOperationApply))))
	})

	It("only creates with CreateOnly, and only reads with ReadOnly", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-strategies")
		a := startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "observed"}, Data: map[string]string{"size": "7"}}
		Expect(spoke.Client.Create(ctx, existing)).To(Succeed())

		w := newWork(c.name, "strategies-"+c.name,
			configMap(ns, "seed", map[string]string{"v": "1"}),
			configMap(ns, "observed", map[string]string{"size": "1"}),
			configMap(ns, "absent", map[string]string{"x": "y"}))
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "seed"},
			UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly},
		}, {
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "observed"},
			UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeReadOnly},
			FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "anything", Path: ".missing"}}}},
		}, {
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "absent"},
			UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeReadOnly},
		}}
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestAvailable)).Should(haveStatus(metav1.ConditionTrue))
		Eventually(manifestCond(ctx, c.name, w.Name, 1, workv1.ManifestAvailable)).Should(haveStatus(metav1.ConditionTrue))
		Eventually(manifestCond(ctx, c.name, w.Name, 2, workv1.ManifestAvailable)).Should(haveStatusReason(metav1.ConditionFalse, workv1.ReasonResourceNotAvailable))
		Expect(manifestCond(ctx, c.name, w.Name, 1, workv1.ManifestApplied)()).To(haveStatus(metav1.ConditionTrue))

		By("never creating, updating or owning the read-only objects")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(existing), existing)).To(Succeed())
		Expect(existing.Data).To(HaveKeyWithValue("size", "7"))
		Expect(existing.OwnerReferences).To(BeEmpty())
		Expect(spokeGone(ctx, spoke, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "absent"}})()).To(BeTrue())
		Expect(a.applied(ctx, w.Name).Status.AppliedResources).To(ConsistOf(
			HaveField("ResourceIdentifier", workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "seed"})))

		By("never updating the CreateOnly object, even when it was changed on the spoke")
		seed := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "seed"}, seed)).To(Succeed())
		seed.Data["v"] = "changed here"
		Expect(spoke.Client.Update(ctx, seed)).To(Succeed())
		Consistently(func() string {
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(seed), seed)).To(Succeed())
			return seed.Data["v"]
		}, 3*time.Second, 200*time.Millisecond).Should(Equal("changed here"), "three resyncs later")
	})

	It("refuses a work whose AppliedManifestWork name another cluster's agent on the same spoke holds", func(ctx SpecContext) {
		first, second := newWorkCluster(ctx, "work-name-a"), newWorkCluster(ctx, "work-name-b")
		startWorkAgent(first, spoke)
		startWorkAgent(second, spoke)
		name := "shared-" + first.name
		for _, c := range []workCluster{first, second} {
			createSpokeNamespace(ctx, spoke, c.name)
		}
		Expect(hubCP.Client.Create(ctx, newWork(first.name, name, configMap(first.name, "mine", nil)))).To(Succeed())
		Eventually(workCond(ctx, first.name, name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		Expect(hubCP.Client.Create(ctx, newWork(second.name, name, configMap(second.name, "theirs", nil)))).To(Succeed())
		Eventually(workCond(ctx, second.name, name, workv1.WorkApplied)).Should(And(haveStatus(metav1.ConditionFalse),
			HaveField("Message", And(ContainSubstring("belongs to another cluster's agent"), ContainSubstring(first.name)))))
		Expect(spokeGone(ctx, spoke, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: second.name, Name: "theirs"}})()).To(BeTrue())
		Consistently(workCond(ctx, first.name, name, workv1.WorkApplied), 2*time.Second, 200*time.Millisecond).Should(haveStatus(metav1.ConditionTrue),
			"the first cluster's work is left alone")
	})

	It("applies nothing that the executor may not apply, and says so", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-exec")
		startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		Expect(spoke.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}})).To(Succeed())
		w := newWork(c.name, "exec-"+c.name, configMap(ns, "one", map[string]string{"a": "1"}), configMap(ns, "two", map[string]string{"b": "2"}))
		w.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{
			Type: workv1.ExecutorSubjectTypeServiceAccount, ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: ns, Name: "deployer"},
		}}
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())

		By("reporting the refusal on the work and on each manifest")
		executor := "system:serviceaccount:" + ns + ":deployer"
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestWorkFailed),
			HaveField("Message", And(ContainSubstring("executor "+executor+" is not allowed to"), ContainSubstring(`create configmaps "one" in namespace "`+ns+`"`)))))
		Expect(manifestCond(ctx, c.name, w.Name, 1, workv1.ManifestApplied)()).To(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed), HaveField("Message", ContainSubstring("not allowed"))))
		By("applying nothing, not even an AppliedManifestWork")
		Consistently(func() bool {
			return spokeGone(ctx, spoke, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "one"}})() &&
				spokeGone(ctx, spoke, &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: work.AppliedManifestWorkName(work.HubHash(hubCP.URL), w.Name)}})()
		}, 2*time.Second, 200*time.Millisecond).Should(BeTrue())

		By("applying once the executor may")
		Expect(spoke.Client.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update"}}},
		})).To(Succeed())
		Expect(spoke.Client.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "deployer"}},
		})).To(Succeed())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "two"}, &corev1.ConfigMap{})).To(Succeed())
	})
})
