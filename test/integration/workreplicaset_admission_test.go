package integration

import (
	"net"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/deploy"
	rsadmission "github.com/flotilla-io/flotilla/hub/workreplicaset/admission"
)

// authoredReplicaSet is a replica set in ns whose template is a
// Deployment of image.
func authoredReplicaSet(ns, name, image string) *workv1alpha1.ManifestWorkReplicaSet {
	GinkgoHelper()
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "prod"}},
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{rawManifest(map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "default"},
				"spec": map[string]any{
					"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
					"template": map[string]any{
						"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
						"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}},
					},
				},
			})}}},
		},
	}
}

// replicaSetEditor is a client acting as a new user who may write
// ManifestWorkReplicaSets and nothing else, and that user's name.
func replicaSetEditor(ctx SpecContext, prefix string) (client.Client, string) {
	GinkgoHelper()
	user := newClusterName(prefix)
	grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}, rbacv1.PolicyRule{
		APIGroups: []string{workv1alpha1.GroupName}, Resources: []string{"manifestworkreplicasets"}, Verbs: []string{"create", "get", "update", "patch", "delete"},
	})
	return impersonating(user), user
}

// changedBy is the author the hub stored on replica set ns/name, or
// "(none)".
func changedBy(ctx SpecContext, ns, name string) string {
	GinkgoHelper()
	rs := &workv1alpha1.ManifestWorkReplicaSet{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rs)).To(Succeed())
	if v, ok := rs.Annotations[workv1alpha1.ChangedByAnnotation]; ok {
		return v
	}
	return "(none)"
}

// patchReplicaSet merge-patches replica set ns/name as c, changing it with
// mutate; a merge patch does not conflict with the hub's own writes.
func patchReplicaSet(ctx SpecContext, c client.Client, ns, name string, mutate func(*workv1alpha1.ManifestWorkReplicaSet)) error {
	GinkgoHelper()
	rs := &workv1alpha1.ManifestWorkReplicaSet{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rs)).To(Succeed())
	base := rs.DeepCopy()
	mutate(rs)
	return c.Patch(ctx, rs, client.MergeFrom(base))
}

func setImage(image string) func(*workv1alpha1.ManifestWorkReplicaSet) {
	return func(rs *workv1alpha1.ManifestWorkReplicaSet) {
		rs.Spec.ManifestWorkTemplate = authoredReplicaSet(rs.Namespace, rs.Name, image).Spec.ManifestWorkTemplate
	}
}

func setAnnotation(key, value string) func(*workv1alpha1.ManifestWorkReplicaSet) {
	return func(rs *workv1alpha1.ManifestWorkReplicaSet) {
		metav1.SetMetaDataAnnotation(&rs.ObjectMeta, key, value)
	}
}

var _ = Describe("Work: hub admission of ManifestWorkReplicaSets", func() {
	It("records the user who changed what shapes the works, replacing a forged value, and keeps it over other changes", func(ctx SpecContext) {
		ns := newNamespace(ctx, "rs-author")
		alice, aliceName := replicaSetEditor(ctx, "alice")
		bob, bobName := replicaSetEditor(ctx, "bob")

		By("a create by alice, who claims to be someone else")
		rs := authoredReplicaSet(ns, "web", "nginx:1.27")
		rs.Annotations = map[string]string{workv1alpha1.ChangedByAnnotation: "mallory", "team": "web"}
		Expect(alice.Create(ctx, rs)).To(Succeed())
		Expect(rs.Annotations).To(HaveKeyWithValue(workv1alpha1.ChangedByAnnotation, aliceName), "the stored object the create returns")
		Expect(rs.Annotations).To(HaveKeyWithValue("team", "web"))

		By("a new image by bob")
		Expect(patchReplicaSet(ctx, bob, ns, "web", setImage("nginx:1.28"))).To(Succeed())
		Expect(changedBy(ctx, ns, "web")).To(Equal(bobName))

		By("alice changing only labels and the author: the author stays bob")
		Expect(patchReplicaSet(ctx, alice, ns, "web", func(rs *workv1alpha1.ManifestWorkReplicaSet) {
			rs.Labels = map[string]string{"tier": "front"}
			rs.Annotations[workv1alpha1.ChangedByAnnotation] = aliceName
		})).To(Succeed())
		Expect(changedBy(ctx, ns, "web")).To(Equal(bobName))

		By("alice pausing the rollout and removing the author: it is put back")
		Expect(patchReplicaSet(ctx, alice, ns, "web", func(rs *workv1alpha1.ManifestWorkReplicaSet) {
			rs.Annotations[workv1alpha1.PausedAnnotation] = "true"
			delete(rs.Annotations, workv1alpha1.ChangedByAnnotation)
		})).To(Succeed())
		Expect(changedBy(ctx, ns, "web")).To(Equal(bobName))

		By("alice adding overrides, claiming bob did: the author is alice")
		Expect(patchReplicaSet(ctx, alice, ns, "web", func(rs *workv1alpha1.ManifestWorkReplicaSet) {
			rs.Spec.Overrides = []workv1alpha1.ClusterOverride{{
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu-west"}},
				Images:          []workv1alpha1.ImageOverride{{Tag: "1.28-eu"}},
			}}
			rs.Annotations[workv1alpha1.ChangedByAnnotation] = bobName
		})).To(Succeed())
		Expect(changedBy(ctx, ns, "web")).To(Equal(aliceName))

		By("a full update by bob that sends the same template again, with a forged author: alice stays")
		Eventually(func() error {
			cur := &workv1alpha1.ManifestWorkReplicaSet{}
			Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, cur)).To(Succeed())
			cur.Annotations[workv1alpha1.ChangedByAnnotation] = "mallory"
			return bob.Update(ctx, cur)
		}).Should(Succeed())
		Expect(changedBy(ctx, ns, "web")).To(Equal(aliceName))

		By("a dry run records the author in its answer, and stores nothing")
		probe := authoredReplicaSet(ns, "dry", "nginx:1.27")
		Expect(bob.Create(ctx, probe, client.DryRunAll)).To(Succeed())
		Expect(probe.Annotations).To(HaveKeyWithValue(workv1alpha1.ChangedByAnnotation, bobName))
		Expect(apierrors.IsNotFound(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(probe), &workv1alpha1.ManifestWorkReplicaSet{}))).To(BeTrue())
	})

	It("refuses a health check that cannot run, naming the field and saying why, on create and update", func(ctx SpecContext) {
		ns := newNamespace(ctx, "rs-health")
		refused := func(err error, field, why string) {
			GinkgoHelper()
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(`admission webhook "` + rsadmission.WebhookName + `" denied the request: ManifestWorkReplicaSet ` + ns + "/"))
			Expect(err.Error()).To(ContainSubstring(field + ": "))
			Expect(err.Error()).To(ContainSubstring(why))
			status := err.(apierrors.APIStatus).Status()
			Expect(status.Details).NotTo(BeNil())
			Expect(status.Details.Causes).To(ContainElement(HaveField("Field", field)))
		}

		bad := authoredReplicaSet(ns, "bad", "nginx:1.27")
		bad.Spec.HealthCheck = &workv1alpha1.HealthCheck{Expression: "values.AvailableReplicas =="}
		refused(hubCP.Client.Create(ctx, bad), "spec.healthCheck.expression", "does not compile: ERROR: <input>:1:")
		Expect(apierrors.IsNotFound(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(bad), &workv1alpha1.ManifestWorkReplicaSet{}))).To(BeTrue())

		notBool := authoredReplicaSet(ns, "not-bool", "nginx:1.27")
		notBool.Spec.HealthCheck = &workv1alpha1.HealthCheck{Expression: "values.AvailableReplicas"}
		Expect(hubCP.Client.Create(ctx, notBool)).To(Succeed(), "an expression of type dyn may yield a bool: its run says")
		unknown := authoredReplicaSet(ns, "unknown", "nginx:1.27")
		unknown.Spec.HealthCheck = &workv1alpha1.HealthCheck{Expression: "object.status.availableReplicas == 3"}
		refused(hubCP.Client.Create(ctx, unknown), "spec.healthCheck.expression", "undeclared reference to 'object'")

		good := authoredReplicaSet(ns, "good", "nginx:1.27")
		good.Spec.HealthCheck = &workv1alpha1.HealthCheck{
			Feedback:   []workv1alpha1.FeedbackCheck{{Name: "AvailableReplicas", EqualsValue: "Replicas"}},
			Expression: "values.?updatedReplicas.orValue(0) == values.Replicas",
		}
		Expect(hubCP.Client.Create(ctx, good)).To(Succeed())

		By("refusing an update that breaks it")
		err := patchReplicaSet(ctx, hubCP.Client, ns, "good", func(rs *workv1alpha1.ManifestWorkReplicaSet) {
			rs.Spec.HealthCheck.Feedback = append(rs.Spec.HealthCheck.Feedback, workv1alpha1.FeedbackCheck{Name: "ReadyReplicas"})
		})
		refused(err, "spec.healthCheck.feedback[1]", "set one of equalsValue (another feedback value, e.g. Replicas) and equals (a literal)")
		err = patchReplicaSet(ctx, hubCP.Client, ns, "good", func(rs *workv1alpha1.ManifestWorkReplicaSet) {
			rs.Spec.HealthCheck.Expression = "values.Replicas + 1"
		})
		refused(err, "spec.healthCheck.expression", "yields int, not bool")
		Expect(patchReplicaSet(ctx, hubCP.Client, ns, "good", setImage("nginx:1.28"))).To(Succeed(), "an update that leaves a good health check alone")
	})

	It("is registered to fail closed, yet a rollout can be paused and a replica set deleted while it cannot be called", func(ctx SpecContext) {
		mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: rsadmission.WebhookName}, mwc)).To(Succeed())
		Expect(mwc.Webhooks).To(HaveLen(1))
		hook := mwc.Webhooks[0]
		Expect(*hook.FailurePolicy).To(Equal(admissionregistrationv1.Fail))
		Expect(*hook.ClientConfig.URL).To(MatchRegexp(`^https://127\.0\.0\.1:\d+` + rsadmission.WebhookPath + `$`))
		Expect(hook.ClientConfig.CABundle).To(Equal(hubCP.CAData))
		Expect(hook.Rules).To(ConsistOf(HaveField("Rule.Resources", ConsistOf("manifestworkreplicasets"))))

		By("the same configuration at an address where nothing listens, for this spec's namespace")
		ns := newNamespace(ctx, "rs-down")
		rs := authoredReplicaSet(ns, "web", "nginx:1.27")
		Expect(hubCP.Client.Create(ctx, rs)).To(Succeed())
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		port := l.Addr().(*net.TCPAddr).Port
		Expect(l.Close()).To(Succeed())
		down := rsadmission.WebhookConfiguration("https://127.0.0.1:"+strconv.Itoa(port), "", hubCP.CAData)
		// Named to come before the hub's own, which the API server calls
		// first otherwise (mutating webhooks go by name) and which would put
		// a forged author back before this one is asked.
		down.Name = "down-test." + ns + ".flotilla.io"
		down.Webhooks[0].Name = down.Name
		down.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}
		Expect(hubCP.Client.Create(ctx, down)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, down))).To(Succeed()) })

		By("refusing a new image, as no hub can record who made it")
		Eventually(func() error { return patchReplicaSet(ctx, hubCP.Client, ns, "web", setImage("nginx:1.28")) }).
			Should(MatchError(ContainSubstring(`failed calling webhook "` + down.Name + `"`)))
		Expect(patchReplicaSet(ctx, hubCP.Client, ns, "web", setAnnotation(workv1alpha1.ChangedByAnnotation, "mallory"))).
			To(MatchError(ContainSubstring("failed calling webhook")), "a change of the author alone")

		By("pausing, labelling and deleting it without a call")
		Expect(patchReplicaSet(ctx, hubCP.Client, ns, "web", setAnnotation(workv1alpha1.PausedAnnotation, "true"))).To(Succeed())
		Expect(patchReplicaSet(ctx, hubCP.Client, ns, "web", func(rs *workv1alpha1.ManifestWorkReplicaSet) { rs.Labels = map[string]string{"tier": "front"} })).To(Succeed())
		Expect(hubCP.Client.Delete(ctx, rs)).To(Succeed())
		Eventually(exists(ctx, rs), "30s").Should(BeFalse(), "the hub removes its finalizer with an update the webhook is not asked about")
	})

	It("grants the hub chart's ServiceAccount its own MutatingWebhookConfiguration and no other", func(ctx SpecContext) {
		objs, err := deploy.Render(deploy.HubChart, deploy.HubNamespace, map[string]any{"apiServer": "https://hub.example.com:6443"})
		Expect(err).NotTo(HaveOccurred())
		var rules []rbacv1.PolicyRule
		for _, o := range objs {
			if o.GetKind() != "ClusterRole" || o.GetName() != "open-cluster-management:flotilla-hub" {
				continue
			}
			role := &rbacv1.ClusterRole{}
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role)).To(Succeed())
			rules = role.Rules
		}
		Expect(rules).NotTo(BeEmpty(), "the chart's ClusterRole")
		// The whole role, as the chart binds it: no other rule may grant more.
		user := newClusterName("charted-hub")
		subject := rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}
		grant(ctx, subject, rules...)
		mwc := func(verb, name string) authorizationv1.ResourceAttributes {
			return authorizationv1.ResourceAttributes{Group: admissionregistrationv1.GroupName, Resource: "mutatingwebhookconfigurations", Verb: verb, Name: name}
		}
		for _, attrs := range []authorizationv1.ResourceAttributes{mwc("create", ""), mwc("get", rsadmission.WebhookName), mwc("update", rsadmission.WebhookName)} {
			Expect(allowed(ctx, subject, attrs)).To(BeTrue(), "%+v", attrs)
		}
		for _, attrs := range []authorizationv1.ResourceAttributes{
			mwc("get", "someone-elses.example.com"), mwc("update", "someone-elses.example.com"), mwc("patch", "someone-elses.example.com"),
			mwc("delete", rsadmission.WebhookName), mwc("patch", rsadmission.WebhookName), mwc("delete", "someone-elses.example.com"),
			mwc("list", ""), mwc("watch", ""), mwc("deletecollection", ""),
		} {
			Expect(allowed(ctx, subject, attrs)).To(BeFalse(), "%+v", attrs)
		}

		By("as that user, making the hub's configuration, pointing it elsewhere and back, and refused another's")
		own := &admissionregistrationv1.MutatingWebhookConfiguration{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: rsadmission.WebhookName}, own)).To(Succeed())
		hubURL := *own.Webhooks[0].ClientConfig.URL
		hubURL = hubURL[:len(hubURL)-len(rsadmission.WebhookPath)]
		DeferCleanup(func(ctx SpecContext) {
			Expect(rsadmission.Install(ctx, kubernetesFor(hubCP.Config), hubURL, "", hubCP.CAData)).To(Succeed())
		})
		cfg := rest.CopyConfig(hubCP.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		kube := kubernetesFor(cfg)
		Expect(hubCP.Client.Delete(ctx, own)).To(Succeed())
		Expect(rsadmission.Install(ctx, kube, hubURL, "", hubCP.CAData)).To(Succeed())
		Expect(rsadmission.Install(ctx, kube, "https://127.0.0.1:1", "", hubCP.CAData)).To(Succeed())
		Expect(rsadmission.Install(ctx, kube, hubURL, "", hubCP.CAData)).To(Succeed())
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: rsadmission.WebhookName}, own)).To(Succeed())
		Expect(*own.Webhooks[0].ClientConfig.URL).To(Equal(hubURL + rsadmission.WebhookPath))
		_, err = kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "someone-elses.example.com", metav1.GetOptions{})
		Expect(err).To(beForbidden())
		Expect(rsadmission.WaitCalled(ctx, hubCP.Client, newNamespace(ctx, "rs-rbac"))).To(Succeed(), "the hub's webhook is called again")
	})
})

// kubernetesFor is a clientset for cfg.
func kubernetesFor(cfg *rest.Config) kubernetes.Interface {
	GinkgoHelper()
	kube, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	return kube
}
