package integration

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub/work"
	"github.com/flotilla-io/flotilla/test/framework"
)

// workNamespace creates a namespace for ManifestWorks, as a cluster's
// namespace, removed when the spec ends.
func workNamespace(ctx SpecContext, c client.Client) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: newClusterName("work")}}
	Expect(c.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(c.Delete(ctx, ns))).To(Succeed()) })
	return ns.Name
}

// rawManifest is a manifest from an object given as a map.
func rawManifest(obj map[string]any) workv1.Manifest {
	GinkgoHelper()
	data, err := json.Marshal(obj)
	Expect(err).NotTo(HaveOccurred())
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: data}}
}

// configMapManifest is a ConfigMap manifest whose compact JSON is exactly size bytes.
func configMapManifest(name string, size int) workv1.Manifest {
	GinkgoHelper()
	build := func(n int) workv1.Manifest {
		return rawManifest(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"data":     map[string]any{"blob": strings.Repeat("x", n)},
		})
	}
	m := build(size - len(build(0).Raw))
	Expect(m.Raw).To(HaveLen(size))
	return m
}

// admissionWork is a ManifestWork of the given manifests.
func admissionWork(ns, name string, manifests ...workv1.Manifest) *workv1.ManifestWork {
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
	}
}

var beInvalid = Satisfy(apierrors.IsInvalid)

var _ = Describe("Work: hub admission of ManifestWorks", func() {
	It("admits manifests of exactly 500 KiB and refuses one byte more, naming the limit and the largest manifest", func(ctx SpecContext) {
		ns := workNamespace(ctx, hubCP.Client)
		small := configMapManifest("small", 100*1024)

		atLimit := admissionWork(ns, "at-limit", small, configMapManifest("big", work.MaxManifestsSize-100*1024))
		Expect(hubCP.Client.Create(ctx, atLimit)).To(Succeed())

		over := admissionWork(ns, "over-limit", small, configMapManifest("big", work.MaxManifestsSize-100*1024+1))
		err := hubCP.Client.Create(ctx, over)
		Expect(err).To(beInvalid)
		Expect(err.Error()).To(ContainSubstring(`admission webhook "` + work.WebhookName + `" denied the request: ManifestWork ` + ns + `/over-limit is refused: ` +
			`the manifests total 512001 bytes of JSON, over the limit of 512000 bytes (500 KiB); ` +
			`the largest is spec.workload.manifests[1] (ConfigMap default/big, 409601 bytes): split the manifests over several ManifestWorks`))
		Expect(apierrors.ReasonForError(err)).To(Equal(metav1.StatusReasonInvalid))

		By("refusing an update that grows a work past the limit, and admitting one that keeps it")
		grown := atLimit.DeepCopy()
		grown.Spec.Workload.Manifests[0] = configMapManifest("small", 100*1024+1)
		Expect(hubCP.Client.Update(ctx, grown)).To(And(beInvalid, MatchError(ContainSubstring("over the limit of 512000 bytes"))))
		labelled := atLimit.DeepCopy()
		labelled.Labels = map[string]string{"team": "a"}
		Expect(hubCP.Client.Update(ctx, labelled)).To(Succeed())
	})

	DescribeTable("refuses incomplete manifests, saying which and what is missing",
		func(ctx SpecContext, bad map[string]any, want string) {
			ns := workNamespace(ctx, hubCP.Client)
			good := rawManifest(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "prod"}})
			err := hubCP.Client.Create(ctx, admissionWork(ns, "incomplete", good, rawManifest(bad)))
			Expect(err).To(beInvalid)
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("no metadata.name", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "default"}},
			"spec.workload.manifests[1] (ConfigMap in namespace default) has no metadata.name: every manifest must name the object it applies"),
		Entry("generateName instead of a name", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"generateName": "s-"}},
			"spec.workload.manifests[1] (Secret) has no metadata.name: every manifest must name the object it applies (generateName is not supported)"),
		Entry("no metadata", map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
			"spec.workload.manifests[1] (ConfigMap) has no metadata.name"),
		// The CRD marks manifests as embedded resources, so the API server's
		// own schema validation names these before the webhook is asked.
		Entry("no kind", map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": "x"}},
			"spec.workload.manifests[1].kind: Required value"),
		Entry("no apiVersion", map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "x"}},
			"spec.workload.manifests[1].apiVersion: Required value"),
	)

	It("is registered to fail closed, for ManifestWork writes only (not their status)", func(ctx SpecContext) {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: work.WebhookName}, vwc)).To(Succeed())
		Expect(vwc.Webhooks).To(HaveLen(1))
		hook := vwc.Webhooks[0]
		Expect(*hook.FailurePolicy).To(Equal(admissionregistrationv1.Fail))
		Expect(*hook.ClientConfig.URL).To(MatchRegexp(`^https://127\.0\.0\.1:\d+` + work.WebhookPath + `$`))
		Expect(hook.ClientConfig.CABundle).To(Equal(hubCP.CAData))
		Expect(hook.Rules).To(ConsistOf(HaveField("Rule.Resources", ConsistOf("manifestworks"))))
		Expect(hook.Rules[0].Operations).To(ConsistOf(admissionregistrationv1.Create, admissionregistrationv1.Update))
		// Updates that leave the spec alone (an agent's finalizer, labels) are not
		// sent to the webhook at all.
		Expect(hook.MatchConditions).To(ConsistOf(HaveField("Expression", ContainSubstring("object.spec != oldObject.spec"))))
	})

	It("serves admission as soon as a hub is ready, each of several hubs in one process on its own port", func(ctx SpecContext) {
		other, err := framework.Start(ctx, framework.Hub)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(other.Stop)

		urls := map[string]bool{}
		for _, h := range []*framework.ControlPlane{hubCP, other} {
			ns := workNamespace(ctx, h.Client)
			// No Eventually: a hub that reports ready must already refuse.
			err := h.Client.Create(ctx, admissionWork(ns, "nameless", rawManifest(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{}})))
			Expect(err).To(And(beInvalid, MatchError(ContainSubstring("has no metadata.name"))))
			vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			Expect(h.Client.Get(ctx, client.ObjectKey{Name: work.WebhookName}, vwc)).To(Succeed())
			urls[*vwc.Webhooks[0].ClientConfig.URL] = true
		}
		Expect(urls).To(HaveLen(2))
	})
})
