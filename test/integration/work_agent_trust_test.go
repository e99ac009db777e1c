package integration

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub/registration"
)

// The trust boundary of a cluster's agent on its ManifestWorks (issue 42):
// with the agent's own certificate, it may write their status and its
// finalizer, and delete a work only when the work's TTL asks it to; the
// hub's API server refuses every other change, naming the field.
var _ = Describe("Work: what a cluster's agent may change on its ManifestWorks", func() {
	It("refuses the agent every change to a work but its status and its finalizer, and every deletion but an expired one's", func(ctx SpecContext) {
		c := newClusterName("worktrust")
		createCluster(ctx, c)
		acceptCluster(ctx, c)
		agent := crClient(agentConfig(ctx, c, "agent1"))

		const adminFinalizer = "example.com/keep"
		w := newWork(c, "guarded", namespaceManifest("guarded"))
		w.Labels = map[string]string{"team": "apps"}
		w.Annotations = map[string]string{"owner": "platform"}
		w.Finalizers = []string{adminFinalizer}
		Eventually(func() error { return hubCP.Client.Create(ctx, w.DeepCopy()) }).Should(Succeed())
		DeferCleanup(func(ctx SpecContext) { releaseWork(ctx, c, w.Name) })
		Eventually(func() error { return agent.Get(ctx, client.ObjectKeyFromObject(w), &workv1.ManifestWork{}) }).Should(Succeed())

		By("letting the agent add its finalizer, with a merge patch as Flotilla's agent does and with an update as OCM's may")
		Expect(changeWork(ctx, agent, c, w.Name, patchWork, func(w *workv1.ManifestWork) {
			controllerutil.AddFinalizer(w, workv1.ManifestWorkFinalizer)
		})).To(Succeed())
		Expect(changeWork(ctx, agent, c, w.Name, updateWork, func(w *workv1.ManifestWork) {
			controllerutil.RemoveFinalizer(w, workv1.ManifestWorkFinalizer)
		})).To(Succeed())
		Expect(changeWork(ctx, agent, c, w.Name, updateWork, func(w *workv1.ManifestWork) {
			controllerutil.AddFinalizer(w, workv1.ManifestWorkFinalizer)
		})).To(Succeed())

		By("letting the agent write the status through its subresource")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &workv1.ManifestWork{}
			if err := agent.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
				return err
			}
			meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "Test", Message: "the agent's status"})
			return agent.Status().Update(ctx, got)
		})).To(Succeed())

		refused := []struct {
			field  string
			change func(*workv1.ManifestWork)
		}{
			{"spec", func(w *workv1.ManifestWork) {
				w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, namespaceManifest("smuggled"))
			}},
			{"spec", func(w *workv1.ManifestWork) { w.Spec.Workload.Manifests = nil }},
			{"spec", func(w *workv1.ManifestWork) {
				w.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
			}},
			{"metadata.labels", func(w *workv1.ManifestWork) { w.Labels["team"] = "other" }},
			{"metadata.labels", func(w *workv1.ManifestWork) { delete(w.Labels, "team") }},
			{"metadata.annotations", func(w *workv1.ManifestWork) { w.Annotations["owner"] = "attacker" }},
			{"metadata.annotations", func(w *workv1.ManifestWork) { metav1.SetMetaDataAnnotation(&w.ObjectMeta, "example.com/new", "x") }},
			{"metadata.finalizers other than " + workv1.ManifestWorkFinalizer, func(w *workv1.ManifestWork) {
				controllerutil.RemoveFinalizer(w, adminFinalizer)
			}},
			{"metadata.finalizers other than " + workv1.ManifestWorkFinalizer, func(w *workv1.ManifestWork) {
				controllerutil.AddFinalizer(w, "example.com/mine")
			}},
			{"metadata.ownerReferences", func(w *workv1.ManifestWork) {
				w.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "0a0b0c0d"}}
			}},
		}
		for i, r := range refused {
			for _, write := range []workWrite{updateWork, patchWork} {
				By(fmt.Sprintf("refusing %s of %s (change %d)", write.name, r.field, i))
				err := changeWork(ctx, agent, c, w.Name, write, r.change)
				Expect(err).To(beForbidden(), "%s of %s by the agent", write.name, r.field)
				Expect(err.Error()).To(And(ContainSubstring("may not change "+r.field+" of ManifestWork "+c+"/"+w.Name), ContainSubstring("only")),
					"the refusal names the field and who may change it")
			}
		}

		By("finding the work as its author wrote it, with the agent's finalizer and status")
		got := getWork(ctx, hubCP, c, w.Name)
		Expect(got.Spec).To(Equal(w.Spec))
		Expect(got.Labels).To(Equal(w.Labels))
		Expect(got.Annotations).To(Equal(w.Annotations))
		Expect(got.OwnerReferences).To(BeEmpty())
		Expect(got.Finalizers).To(ConsistOf(adminFinalizer, workv1.ManifestWorkFinalizer))
		Expect(meta.IsStatusConditionTrue(got.Status.Conditions, workv1.WorkApplied)).To(BeTrue())

		By("refusing the agent to delete a work that did not ask for it, naming who may")
		err := agent.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: w.Name}})
		Expect(err).To(beForbidden())
		Expect(err.Error()).To(ContainSubstring("may not delete ManifestWork " + c + "/" + w.Name))
		Expect(getWork(ctx, hubCP, c, w.Name).DeletionTimestamp).To(BeNil())

		By("leaving the work's author free to change what the agent may not")
		Expect(changeWork(ctx, hubCP.Client, c, w.Name, patchWork, func(w *workv1.ManifestWork) {
			w.Labels["team"] = "platform"
			w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, namespaceManifest("added"))
		})).To(Succeed())
	})

	It("lets the agent delete a work whose ttlSecondsAfterFinished asks for it once it reported it Complete, and no sooner", func(ctx SpecContext) {
		c := newClusterName("workttl")
		createCluster(ctx, c)
		acceptCluster(ctx, c)
		agent := crClient(agentConfig(ctx, c, "agent1"))
		w := newWork(c, "expiring", namespaceManifest("expiring"))
		w.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeForeground, TTLSecondsAfterFinished: ptr.To[int64](0)}
		Eventually(func() error { return hubCP.Client.Create(ctx, w.DeepCopy()) }).Should(Succeed())
		DeferCleanup(func(ctx SpecContext) { releaseWork(ctx, c, w.Name) })
		Eventually(func() error {
			return changeWork(ctx, agent, c, w.Name, patchWork, func(w *workv1.ManifestWork) { controllerutil.AddFinalizer(w, workv1.ManifestWorkFinalizer) })
		}).Should(Succeed())

		By("refusing the deletion while the work is not Complete")
		err := agent.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: w.Name}})
		Expect(err).To(beForbidden())
		Expect(err.Error()).To(ContainSubstring("ttlSecondsAfterFinished"))

		By("deleting it once Complete, and removing the agent's finalizer so that it goes")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &workv1.ManifestWork{}
			if err := agent.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
				return err
			}
			meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{Type: workv1.WorkComplete, Status: metav1.ConditionTrue, Reason: "Test", Message: "done"})
			return agent.Status().Update(ctx, got)
		})).To(Succeed())
		Expect(agent.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: w.Name}})).To(Succeed())
		Expect(changeWork(ctx, agent, c, w.Name, patchWork, func(w *workv1.ManifestWork) {
			controllerutil.RemoveFinalizer(w, workv1.ManifestWorkFinalizer)
		})).To(Succeed())
		Eventually(exists(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: w.Name}})).Should(BeFalse())
	})

	It("refuses the agent to remove the hub's finalizer from its ManagedCluster", func(ctx SpecContext) {
		c := newClusterName("clusterfin")
		createCluster(ctx, c)
		acceptCluster(ctx, c)
		Eventually(func() []string { return getCluster(ctx, c).Finalizers }).Should(ContainElement(registration.ClusterFinalizer))
		agent := crClient(agentConfig(ctx, c, "agent1"))
		Eventually(func() error { return agent.Get(ctx, client.ObjectKey{Name: c}, &clusterv1.ManagedCluster{}) }).Should(Succeed())

		for _, change := range []func(*clusterv1.ManagedCluster){
			func(mc *clusterv1.ManagedCluster) { controllerutil.RemoveFinalizer(mc, registration.ClusterFinalizer) },
			func(mc *clusterv1.ManagedCluster) { controllerutil.AddFinalizer(mc, "example.com/mine") },
		} {
			err := updateCluster(ctx, agent, c, change)
			Expect(err).To(beForbidden())
			Expect(err.Error()).To(And(ContainSubstring("may not change metadata.finalizers of ManagedCluster "+c), ContainSubstring("only")))
			mc := getCluster(ctx, c)
			orig := mc.DeepCopy()
			change(mc)
			Expect(agent.Patch(ctx, mc, client.MergeFrom(orig))).To(beForbidden())
		}
		Expect(getCluster(ctx, c).Finalizers).To(ConsistOf(registration.ClusterFinalizer))
	})
})

// workWrite is how a client sends a change to a ManifestWork.
type workWrite struct {
	name  string
	write func(ctx SpecContext, cl client.Client, before, after *workv1.ManifestWork) error
}

var (
	updateWork = workWrite{"update", func(ctx SpecContext, cl client.Client, _, after *workv1.ManifestWork) error {
		return cl.Update(ctx, after)
	}}
	patchWork = workWrite{"merge patch", func(ctx SpecContext, cl client.Client, before, after *workv1.ManifestWork) error {
		return cl.Patch(ctx, after, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}}
)

// changeWork applies change to a fresh copy of ManifestWork c/name read
// with cl, and writes it with cl, again while it conflicts.
func changeWork(ctx SpecContext, cl client.Client, c, name string, how workWrite, change func(*workv1.ManifestWork)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &workv1.ManifestWork{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: c, Name: name}, w); err != nil {
			return err
		}
		before := w.DeepCopy()
		change(w)
		return how.write(ctx, cl, before, w)
	})
}

// releaseWork deletes ManifestWork c/name as the hub admin, with its
// finalizers, so that its namespace can go.
func releaseWork(ctx SpecContext, c, name string) {
	GinkgoHelper()
	err := changeWork(ctx, hubCP.Client, c, name, patchWork, func(w *workv1.ManifestWork) { w.Finalizers = nil })
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: name}}))).To(Succeed())
}
