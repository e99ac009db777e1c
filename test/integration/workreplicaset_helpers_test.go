package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Builders for the ManifestWorkReplicaSet specs. Clusters are created by
// the admin with their hub namespaces (createPolicyMember); no agent runs,
// so the specs write the status of the ManifestWorks as an agent would.
// Every template is one ConfigMap whose data.version tells the specs which
// template a cluster's work carries.

// createReplicaSet creates a replica set of the ConfigMap template at version,
// rolled out by the given PlacementRefs, and deletes it at the end. It
// leaves cascadeDeletionPolicy out, as a user may: the API server's default
// (Background) must apply.
func createReplicaSet(ctx SpecContext, ns, name, version string, refs ...workv1alpha1.LocalPlacementReference) {
	GinkgoHelper()
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			PlacementRefs:        refs,
			ManifestWorkTemplate: versionTemplate(version),
		},
	}
	Expect(hubCP.Client.Create(ctx, mwrs)).To(Succeed())
	Expect(mwrs.Spec.CascadeDeletionPolicy).To(Equal(workv1alpha1.Background))
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, mwrs))).To(Succeed())
	})
}

// versionTemplate is a ManifestWork spec of one ConfigMap with data.version.
func versionTemplate(version string) workv1.ManifestWorkSpec {
	return workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
		configMap("default", "mwrs-version", map[string]string{"version": version}),
	}}}
}

// placementRef is a PlacementRef with a strategy.
func placementRef(placement string, rs workv1alpha1.RolloutStrategy) workv1alpha1.LocalPlacementReference {
	return workv1alpha1.LocalPlacementReference{Name: placement, RolloutStrategy: rs}
}

// setTemplateVersion changes the template of a replica set to version.
func setTemplateVersion(ctx SpecContext, ns, name, version string) {
	GinkgoHelper()
	Eventually(func() error {
		mwrs := getReplicaSet(ctx, ns, name)
		mwrs.Spec.ManifestWorkTemplate = versionTemplate(version)
		return hubCP.Client.Update(ctx, mwrs)
	}).Should(Succeed())
}

func getReplicaSet(ctx context.Context, ns, name string) *workv1alpha1.ManifestWorkReplicaSet {
	GinkgoHelper()
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, mwrs)).To(Succeed())
	return mwrs
}

// replicaSetCondition returns, for Eventually, a condition of a replica set.
func replicaSetCondition(ctx context.Context, ns, name, condType string) func() *metav1.Condition {
	return func() *metav1.Condition {
		return meta.FindStatusCondition(getReplicaSet(ctx, ns, name).Status.Conditions, condType)
	}
}

// replicaSetWorks returns, for Eventually, the version each cluster's work
// of replica set ns/name carries, by cluster (the namespace of the work).
func replicaSetWorks(ctx context.Context, ns, name string) func() map[string]string {
	return func() map[string]string {
		list := &workv1.ManifestWorkList{}
		Expect(hubCP.Client.List(ctx, list, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: ns + "." + name})).To(Succeed())
		out := map[string]string{}
		for _, w := range list.Items {
			out[w.Namespace] = workVersion(w)
		}
		return out
	}
}

// workVersion is the data.version of the ConfigMap a work carries.
func workVersion(w workv1.ManifestWork) string {
	GinkgoHelper()
	Expect(w.Spec.Workload.Manifests).To(HaveLen(1))
	var cm struct {
		Data map[string]string `json:"data"`
	}
	Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &cm)).To(Succeed())
	return cm.Data["version"]
}

// workState is the status an agent reports for a work.
type workState struct{ applied, available, degraded, progressing bool }

// reportWork writes the status of cluster's work name as an agent would,
// for the work's current generation.
func reportWork(ctx SpecContext, cluster, name string, st workState) {
	GinkgoHelper()
	Eventually(func() error {
		w := &workv1.ManifestWork{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, w); err != nil {
			return err
		}
		for condType, on := range map[string]bool{workv1.WorkApplied: st.applied, workv1.WorkAvailable: st.available,
			workv1.WorkDegraded: st.degraded, workv1.WorkProgressing: st.progressing} {
			status := metav1.ConditionFalse
			if on {
				status = metav1.ConditionTrue
			}
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: condType, Status: status,
				Reason: "ReportedByTest", ObservedGeneration: w.Generation})
		}
		return hubCP.Client.Status().Update(ctx, w)
	}).Should(Succeed())
}

// healthy is the state of a work that succeeded.
var healthy = workState{applied: true, available: true}

// workExists returns, for Eventually, whether cluster's work name exists.
func workExists(ctx context.Context, cluster, name string) func() bool {
	return func() bool {
		err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, &workv1.ManifestWork{})
		if apierrors.IsNotFound(err) {
			return false
		}
		Expect(err).NotTo(HaveOccurred())
		return true
	}
}

// versions maps each cluster to the same version.
func versions(version string, clusters ...string) map[string]string {
	out := map[string]string{}
	for _, c := range clusters {
		out[c] = version
	}
	return out
}

// availableGroups returns, for Eventually, availableDecisionGroups of the
// replica set's first placement ("" before there is a summary).
func availableGroups(ctx context.Context, ns, name string) func() string {
	return func() string {
		ps := getReplicaSet(ctx, ns, name).Status.PlacementsSummary
		if len(ps) == 0 {
			return ""
		}
		return ps[0].AvailableDecisionGroups
	}
}
