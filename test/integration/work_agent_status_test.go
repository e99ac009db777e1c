package integration

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("Work agent: status", Ordered, func() {
	var spoke *framework.ControlPlane

	BeforeAll(func(ctx SpecContext) {
		spoke = newWorkSpoke(ctx)
	})

	It("reports status feedback and condition rules, and patches the status only when it changed", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-feedback")
		startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "feedback-"+c.name, deploymentManifest(ns, "web", 3))
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: ns, Name: "web"},
			FeedbackRules: []workv1.FeedbackRule{
				{Type: workv1.WellKnownStatusType},
				{Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{
					{Name: "isAvailable", Path: `.conditions[?(@.type=="Available")].status`},
					{Name: "paused", Path: ".paused"},
					{Name: "conditions", Path: ".conditions"},
					{Name: "huge", Path: ".huge"},
				}},
			},
			ConditionRules: []workv1.ConditionRule{
				{Condition: "AllReady", Type: workv1.CELConditionExpressionsType,
					CelExpressions:    []string{"has(object.status.readyReplicas) && object.status.readyReplicas == object.spec.replicas"},
					MessageExpression: `result ? "all " + string(object.spec.replicas) + " ready" : "waiting"`},
				{Condition: workv1.ManifestProgressing, Type: workv1.CELConditionExpressionsType,
					CelExpressions: []string{"!has(object.status.readyReplicas) || object.status.readyReplicas < object.spec.replicas"}},
			},
		}}
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(manifestCond(ctx, c.name, w.Name, 0, "AllReady")).Should(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ConditionRuleEvaluated), HaveField("Message", "waiting")))
		Expect(workCond(ctx, c.name, w.Name, workv1.WorkProgressing)()).To(haveStatusReason(metav1.ConditionTrue, workv1.ReasonProgressingApplying))
		Expect(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestStatusFeedbackSynced)()).To(
			haveStatusReason(metav1.ConditionTrue, workv1.ReasonNoStatusFeedbackSynced), "a Deployment nobody runs has no status yet")

		By("reading the values once the status changes, as the deployment controller would write it")
		dep := &appsv1.Deployment{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep)).To(Succeed())
		dep.Status = appsv1.DeploymentStatus{
			Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 2, UpdatedReplicas: 3,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: strings.Repeat("m", 1100)}},
		}
		Expect(spoke.Client.Status().Update(ctx, dep)).To(Succeed())
		integer := func(v int64) workv1.FieldValue { return workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(v)} }
		Eventually(func() []workv1.FeedbackValue {
			return manifestStatus(ctx, c.name, w.Name, 0)().StatusFeedback.Values
		}).Should(ConsistOf(
			workv1.FeedbackValue{Name: "ReadyReplicas", Value: integer(3)},
			workv1.FeedbackValue{Name: "Replicas", Value: integer(3)},
			workv1.FeedbackValue{Name: "AvailableReplicas", Value: integer(2)},
			workv1.FeedbackValue{Name: "isAvailable", Value: workv1.FieldValue{Type: workv1.String, String: ptr.To("True")}},
		))
		Expect(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestStatusFeedbackSynced)()).To(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonStatusFeedbackSyncFailed),
			HaveField("Message", ContainSubstring("conditions: the value is"))), "a list over 1 KiB is refused, the rest reported")
		Expect(manifestCond(ctx, c.name, w.Name, 0, "AllReady")()).To(And(haveStatus(metav1.ConditionTrue), HaveField("Message", "all 3 ready")))
		Expect(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestProgressing)()).To(haveStatus(metav1.ConditionFalse))
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkProgressing)).Should(haveStatusReason(metav1.ConditionFalse, workv1.ReasonProgressingCompleted))

		By("reporting small lists and booleans as they are")
		dep.Status.Conditions[0].Message = "ok"
		dep.Status.Conditions = append(dep.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue})
		Expect(spoke.Client.Status().Update(ctx, dep)).To(Succeed())
		Eventually(func() []string {
			var names []string
			for _, v := range manifestStatus(ctx, c.name, w.Name, 0)().StatusFeedback.Values {
				names = append(names, v.Name+"="+string(v.Value.Type))
			}
			return names
		}).Should(ContainElement("conditions=JsonRaw"))
		Eventually(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestStatusFeedbackSynced)).Should(haveStatusReason(metav1.ConditionTrue, workv1.ReasonStatusFeedbackSynced))

		By("leaving the status alone while nothing changes, across several resyncs")
		rv := getWork(ctx, hubCP, c.name, w.Name).ResourceVersion
		Consistently(func() string { return getWork(ctx, hubCP, c.name, w.Name).ResourceVersion }, 4*time.Second, 250*time.Millisecond).Should(Equal(rv))
	})

	It("fails a bad manifest alone, with the managed cluster's own reason, and applies the others", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-bad")
		startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "bad-"+c.name,
			configMap(ns, "good", map[string]string{"a": "1"}),
			manifest(map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": ns}}),
			configMap(ns, "Not_A_Name", map[string]string{"a": "1"}),
			configMap(ns+"-missing", "lost", map[string]string{"a": "1"}),
			configMap(ns, "ruled", map[string]string{"a": "1"}),
			manifest(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "nameless-ns"}}),
		)
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "ruled"},
			ConditionRules:     []workv1.ConditionRule{{Condition: "Ready", Type: workv1.CELConditionExpressionsType, CelExpressions: []string{"object.data.a =="}}},
		}}
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())

		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestWorkFailed), HaveField("Message", ContainSubstring("Failed to apply 4 of 6 manifests")),
		))
		By("saying the spoke does not serve the kind")
		Expect(manifestCond(ctx, c.name, w.Name, 1, workv1.ManifestApplied)()).To(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed),
			HaveField("Message", ContainSubstring("does not serve kind Widget in example.com/v1"))))
		By("passing on the API server's refusal of an invalid object")
		Expect(manifestCond(ctx, c.name, w.Name, 2, workv1.ManifestApplied)()).To(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed),
			HaveField("Message", And(ContainSubstring(`ConfigMap "Not_A_Name" is invalid`), ContainSubstring("metadata.name")))))
		By("passing on the missing namespace")
		Expect(manifestCond(ctx, c.name, w.Name, 3, workv1.ManifestApplied)()).To(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed),
			HaveField("Message", ContainSubstring(fmt.Sprintf(`namespaces "%s-missing" not found`, ns)))))
		Expect(manifestCond(ctx, c.name, w.Name, 5, workv1.ManifestApplied)()).To(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed), HaveField("Message", ContainSubstring("needs metadata.namespace"))))
		By("applying the others, and making the one with an invalid rule Degraded")
		Expect(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestApplied)()).To(haveStatus(metav1.ConditionTrue))
		Eventually(manifestCond(ctx, c.name, w.Name, 4, workv1.ManifestDegraded)).Should(And(
			haveStatusReason(metav1.ConditionTrue, workv1.ConditionRuleInvalid), HaveField("Message", ContainSubstring("Syntax error"))))
		Expect(manifestCond(ctx, c.name, w.Name, 4, "Ready")()).To(haveStatusReason(metav1.ConditionFalse, workv1.ConditionRuleInvalid))
		Expect(workCond(ctx, c.name, w.Name, workv1.WorkDegraded)()).To(haveStatusReason(metav1.ConditionTrue, workv1.ReasonManifestsDegraded))
		for _, name := range []string{"good", "ruled"} {
			Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})).To(Succeed())
		}

		By("applying the manifest whose namespace appears later")
		createSpokeNamespace(ctx, spoke, ns+"-missing")
		Eventually(manifestCond(ctx, c.name, w.Name, 3, workv1.ManifestApplied)).Should(haveStatus(metav1.ConditionTrue))
	})

	It("applies a custom resource once the same work installed its CRD", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-crd")
		startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		group := c.name + ".example.com"
		crd := manifest(map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gadgets." + group},
			"spec": map[string]any{
				"group": group, "scope": "Namespaced",
				"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{
					"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
			},
		})
		cr := manifest(map[string]any{"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g", "namespace": ns}, "spec": map[string]any{"size": 3}})
		w := newWork(c.name, "crd-"+c.name, cr, crd)
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		Expect(manifestStatus(ctx, c.name, w.Name, 0)().ResourceMeta).To(HaveField("Resource", "gadgets"))
	})

	It("reports a work's Applied within a second once the agent runs", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-latency")
		startWorkAgent(c, spoke, func(cfg *workConfig) { cfg.ResyncInterval = 10 * time.Second })
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		warm := newWork(c.name, "warm-"+c.name, configMap(ns, "warm", nil))
		Expect(hubCP.Client.Create(ctx, warm)).To(Succeed())
		Eventually(workCond(ctx, c.name, warm.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))

		var latencies []time.Duration
		for i := range 20 {
			w := newWork(c.name, fmt.Sprintf("lat-%d-%s", i, c.name), configMap(ns, fmt.Sprintf("cm-%d", i), map[string]string{"i": fmt.Sprint(i)}))
			start := time.Now()
			Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
			Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).WithPolling(10 * time.Millisecond).Should(haveStatus(metav1.ConditionTrue))
			latencies = append(latencies, time.Since(start))
		}
		slices.Sort(latencies)
		AddReportEntry("ManifestWork create to Applied=True on the hub, agent running (20 works, one at a time)",
			fmt.Sprintf("p50 %s, max %s", latencies[len(latencies)/2].Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond)))
	})
})
