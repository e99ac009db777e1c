package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// The trust boundary of a cluster's agent on the hub (issue 14): with the
// agent's own certificate, everything it must not do is refused by the
// hub's API server itself, and everything it needs still works.
var _ = Describe("Registration: what a cluster's agent may change on the hub", func() {
	It("refuses the agent every change to its ManagedCluster but its status and agent annotations", func(ctx SpecContext) {
		c := newClusterName("trust")
		createCluster(ctx, c, func(mc *clusterv1.ManagedCluster) {
			mc.Labels = map[string]string{"env": "prod"}
			mc.Annotations = map[string]string{"owner": "platform"}
			mc.Spec.LeaseDurationSeconds = 60
			mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://spoke.example:6443"}}
			mc.Spec.Taints = []clusterv1.Taint{{Key: "maintenance", Effect: clusterv1.TaintEffectNoSelect}}
		})
		acceptCluster(ctx, c)
		agentCfg := agentConfig(ctx, c, "agent1")
		agent := crClient(agentCfg)
		Eventually(func() error { return agent.Get(ctx, client.ObjectKey{Name: c}, &clusterv1.ManagedCluster{}) }).Should(Succeed())
		before := getCluster(ctx, c)

		// Each change is tried with update (kubectl replace/edit) and with
		// a merge patch (kubectl patch/label/annotate).
		refused := []struct {
			field  string
			change func(*clusterv1.ManagedCluster)
		}{
			{"metadata.labels", func(mc *clusterv1.ManagedCluster) { mc.Labels["env"] = "dev" }},
			{"metadata.labels", func(mc *clusterv1.ManagedCluster) { mc.Labels["gpu"] = "true" }},
			{"metadata.labels", func(mc *clusterv1.ManagedCluster) { delete(mc.Labels, "env") }},
			{"metadata.annotations", func(mc *clusterv1.ManagedCluster) { mc.Annotations["owner"] = "attacker" }},
			{"metadata.annotations", func(mc *clusterv1.ManagedCluster) { mc.Annotations["example.com/new"] = "x" }},
			{"metadata.annotations", func(mc *clusterv1.ManagedCluster) { delete(mc.Annotations, "owner") }},
			{"spec.taints", func(mc *clusterv1.ManagedCluster) { mc.Spec.Taints = nil }},
			{"spec.taints", func(mc *clusterv1.ManagedCluster) {
				mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: "mine", Effect: clusterv1.TaintEffectNoSelect})
			}},
			{"spec.hubAcceptsClient", func(mc *clusterv1.ManagedCluster) { mc.Spec.HubAcceptsClient = false }},
			{"spec.leaseDurationSeconds", func(mc *clusterv1.ManagedCluster) { mc.Spec.LeaseDurationSeconds = 3600 }},
			{"spec.managedClusterClientConfigs", func(mc *clusterv1.ManagedCluster) {
				mc.Spec.ManagedClusterClientConfigs[0].URL = "https://attacker.example:6443"
			}},
			{"spec.managedClusterClientConfigs", func(mc *clusterv1.ManagedCluster) { mc.Spec.ManagedClusterClientConfigs = nil }},
		}
		for i, r := range refused {
			By(fmt.Sprintf("refusing update and patch of %s (change %d)", r.field, i))
			err := updateCluster(ctx, agent, c, r.change)
			Expect(err).To(beForbidden(), "update of %s by the agent", r.field)
			Expect(err.Error()).To(And(ContainSubstring(r.field), ContainSubstring("only")), "the refusal names the field and who may change it")

			mc := getCluster(ctx, c)
			orig := mc.DeepCopy()
			r.change(mc)
			err = agent.Patch(ctx, mc, client.MergeFrom(orig))
			Expect(err).To(beForbidden(), "patch of %s by the agent", r.field)
		}

		By("refusing a JSON patch that removes the taints, as kubectl patch --type json does")
		patch, _ := json.Marshal([]map[string]any{{"op": "remove", "path": "/spec/taints"}})
		Expect(agent.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}}, client.RawPatch(types.JSONPatchType, patch))).To(beForbidden())

		By("letting the agent change its agent.open-cluster-management.io/ annotations")
		Expect(updateCluster(ctx, agent, c, func(mc *clusterv1.ManagedCluster) {
			mc.Annotations["agent.open-cluster-management.io/note"] = "hello"
		})).To(Succeed())

		By("letting the agent write its status, claims included, while a status write cannot smuggle in labels")
		Expect(updateStatus(ctx, agent, c, func(mc *clusterv1.ManagedCluster) {
			mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "platform.open-cluster-management.io", Value: "Other"}}
			mc.Labels["env"] = "smuggled"
			mc.Spec.Taints = nil
		})).To(Succeed())

		By("finding every guarded field as the hub admin set it")
		after := getCluster(ctx, c)
		Expect(after.Labels).To(HaveKeyWithValue("env", "prod"))
		Expect(after.Labels).NotTo(HaveKey("gpu"))
		Expect(after.Annotations).To(HaveKeyWithValue("owner", "platform"))
		Expect(after.Annotations).NotTo(HaveKey("example.com/new"))
		Expect(after.Spec).To(Equal(before.Spec))
		Expect(after.Status.ClusterClaims).To(ContainElement(clusterv1.ManagedClusterClaim{Name: "platform.open-cluster-management.io", Value: "Other"}))

		By("letting the agent renew its lease and record events, as it must")
		lease := &coordinationv1.Lease{}
		Eventually(func() error {
			return agent.Get(ctx, client.ObjectKey{Namespace: c, Name: clusterv1.ManagedClusterLeaseName}, lease)
		}).Should(Succeed())
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		Expect(agent.Update(ctx, lease)).To(Succeed())
		kube := kubernetes.NewForConfigOrDie(agentCfg)
		_, err := kube.CoreV1().Events(c).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: "trust-"},
			InvolvedObject: corev1.ObjectReference{Kind: "ManagedCluster", Name: c, APIVersion: clusterv1.GroupVersion.String()},
			Reason:         "Test", Message: "an agent's event", Type: corev1.EventTypeNormal,
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("leaving the hub admin free to change what the agent may not")
		Expect(updateCluster(ctx, hubCP.Client, c, func(mc *clusterv1.ManagedCluster) {
			mc.Labels["env"] = "staging"
			mc.Spec.Taints = nil
		})).To(Succeed())
	})

	It("lets a bootstrap identity create a ManagedCluster with its client configs, as joining does", func(ctx SpecContext) {
		c := newClusterName("trust-join")
		_, boot := bootstrapClients(createBootstrapToken(ctx))
		mc := &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: c, Annotations: map[string]string{"agent.open-cluster-management.io/flotilla-agent-id": "a1"}},
			Spec: clusterv1.ManagedClusterSpec{
				ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://spoke.example:6443"}},
				LeaseDurationSeconds:        60,
			},
		}
		Expect(boot.Create(ctx, mc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}}))).To(Succeed())
		})
		Expect(getCluster(ctx, c).Spec.ManagedClusterClientConfigs).To(HaveLen(1))
	})
})

var _ = Describe("Registration: which CSRs a cluster's agent may see and create", func() {
	It("shows the agent only its own cluster's CSRs and refuses CSRs for another cluster", func(ctx SpecContext) {
		a, b := newClusterName("csr-a"), newClusterName("csr-b")
		for _, c := range []string{a, b} {
			createCluster(ctx, c)
			acceptCluster(ctx, c)
		}
		kubeA := kubernetes.NewForConfigOrDie(agentConfig(ctx, a, "agent1"))
		agentConfig(ctx, b, "agent1") // b has a CSR of its own
		csrsA := kubeA.CertificatesV1().CertificateSigningRequests()
		own := metav1.ListOptions{LabelSelector: labels.Set{clusterv1.ClusterNameLabel: a}.String()}
		other := metav1.ListOptions{LabelSelector: labels.Set{clusterv1.ClusterNameLabel: b}.String()}

		By("listing and watching its own cluster's CSRs with the label selector, as OCM's agent does")
		var list *certificatesv1.CertificateSigningRequestList
		Eventually(func() (err error) { list, err = csrsA.List(ctx, own); return err }).Should(Succeed())
		Expect(list.Items).NotTo(BeEmpty())
		for _, csr := range list.Items {
			Expect(csr.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, a))
		}
		w, err := csrsA.Watch(ctx, own)
		Expect(err).NotTo(HaveOccurred())
		w.Stop()
		byName := own
		byName.FieldSelector = fields.OneTermEqualSelector("metadata.name", list.Items[0].Name).String()
		Expect(csrsA.List(ctx, byName)).To(HaveField("Items", HaveLen(1)))
		Eventually(func() error { _, err := csrsA.Get(ctx, list.Items[0].Name, metav1.GetOptions{}); return err }).Should(Succeed())

		By("refusing list and watch without the selector, with another cluster's, or with a wider one")
		bList, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, other)
		Expect(err).NotTo(HaveOccurred())
		Expect(bList.Items).NotTo(BeEmpty())
		for _, opts := range []metav1.ListOptions{
			{},
			other,
			{LabelSelector: clusterv1.ClusterNameLabel},
			{LabelSelector: clusterv1.ClusterNameLabel + " in (" + a + "," + b + ")"},
			{LabelSelector: clusterv1.ClusterNameLabel + "!=" + b},
			{FieldSelector: fields.OneTermEqualSelector("metadata.name", bList.Items[0].Name).String()},
		} {
			_, err := csrsA.List(ctx, opts)
			Expect(err).To(beForbidden(), "list CSRs with %+v", opts)
			Expect(err.Error()).To(ContainSubstring(clusterv1.ClusterNameLabel+"="+a), "the refusal says which selector is allowed")
			w, err := csrsA.Watch(ctx, opts)
			if w != nil {
				w.Stop()
			}
			Expect(err).To(beForbidden(), "watch CSRs with %+v", opts)
		}

		By("refusing get of another cluster's CSR")
		_, err = csrsA.Get(ctx, bList.Items[0].Name, metav1.GetOptions{})
		Expect(err).To(beForbidden())

		By("refusing CSRs labelled for, or naming, another cluster")
		for _, tc := range []struct{ label, subject string }{{b, b}, {b, a}, {a, b}} {
			_, csrPEM := newCSR(agentSubject(tc.subject, "agent1"))
			_, err := csrsA.Create(ctx, &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{GenerateName: tc.label + "-", Labels: map[string]string{clusterv1.ClusterNameLabel: tc.label}},
				Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: csrPEM, SignerName: certificatesv1.KubeAPIServerClientSignerName,
					Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
					ExpirationSeconds: ptr.To[int32](3600),
				},
			}, metav1.CreateOptions{})
			Expect(err).To(beForbidden(), "a CSR labelled %s for a subject of %s", tc.label, tc.subject)
			Expect(err.Error()).To(ContainSubstring(a))
		}
		cn, _ := agentSubject(a, "agent1")
		_, csrPEM := newCSR(cn, []string{"system:masters"})
		_, err = csrsA.Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: a + "-", Labels: map[string]string{clusterv1.ClusterNameLabel: a}},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request: csrPEM, SignerName: certificatesv1.KubeAPIServerClientSignerName,
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
			},
		}, metav1.CreateOptions{})
		Expect(err).To(beForbidden(), "a CSR for group system:masters")
		Expect(strings.ToLower(err.Error())).To(ContainSubstring("system:masters"))

		By("letting the agent create its own renewal CSR")
		createClusterCSR(ctx, kubeA, a, func() []byte { _, p := newCSR(agentSubject(a, "agent2")); return p }())

		By("letting a bootstrap identity create a CSR for any cluster, as joining does")
		bootKube, _ := bootstrapClients(createBootstrapToken(ctx))
		createCSR(ctx, bootKube, newClusterName("csr-new"), b)
	})
})

// updateStatus applies change to a fresh copy of ManagedCluster name and
// writes it through the status subresource with cl.
func updateStatus(ctx SpecContext, cl client.Client, name string, change func(*clusterv1.ManagedCluster)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		change(mc)
		return cl.Status().Update(ctx, mc)
	})
}

var _ = Describe("CLI accept: a spoofing CSR beside the real one", func() {
	It("approves the real cluster's CSR, and says it ignored the spoof and who made it", func(ctx SpecContext) {
		c := newClusterName("spoofed")
		token := createBootstrapToken(ctx)
		kube, boot := bootstrapClients(token)
		createManagedCluster(ctx, boot, c)
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}}))).To(Succeed())
		})
		spoof := createCSR(ctx, kube, c, newClusterName("elsewhere"))
		real := createCSR(ctx, kube, c, c)

		res := onHub(ctx, "accept", "--clusters", c)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("approved CSR " + real))
		Expect(res.Stderr).To(ContainSubstring("ignored CSR " + spoof))
		tokenID, _, _ := strings.Cut(token, ".")
		Expect(res.Stderr).To(ContainSubstring("requested by system:bootstrap:" + tokenID))
		Expect(csrApproved(ctx, real)).To(BeTrue())
		Expect(csrApproved(ctx, spoof)).To(BeFalse())
		Expect(hubAcceptsClient(ctx, c)).To(BeTrue())
	})
})
