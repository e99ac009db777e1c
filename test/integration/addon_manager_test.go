package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// The add-on manager specs run against the suite's hub, which runs the
// add-on manager. No agent runs: where an add-on must be deployed, the
// spec plays the add-on's own (addon-framework) manager and the work
// agent, writing what they would write by the contract.

var amADCGR = addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceDeploymentConfigs}

// amCreateCMA creates ClusterManagementAddOn cma and deletes it at the end.
func amCreateCMA(ctx SpecContext, cma *addonv1alpha1.ClusterManagementAddOn) {
	GinkgoHelper()
	Expect(hubCP.Client.Create(ctx, cma)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, cma))).To(Succeed()) })
}

// amPlacementsCMA is a ClusterManagementAddOn installed by placements.
func amPlacementsCMA(name string, defaults []addonv1alpha1.ConfigMeta, placements ...addonv1alpha1.PlacementStrategy) *addonv1alpha1.ClusterManagementAddOn {
	return &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: defaults,
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyPlacements, Placements: placements}},
	}
}

func amPlacement(ns, name string, rs workv1alpha1.RolloutStrategy, configs ...addonv1alpha1.AddOnConfig) addonv1alpha1.PlacementStrategy {
	return addonv1alpha1.PlacementStrategy{PlacementRef: addonv1alpha1.PlacementRef{Namespace: ns, Name: name}, Configs: configs, RolloutStrategy: rs}
}

// amDefaultADC is a CMA default AddOnDeploymentConfig ns/name.
func amDefaultADC(ns, name string) []addonv1alpha1.ConfigMeta {
	return []addonv1alpha1.ConfigMeta{{ConfigGroupResource: amADCGR, DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: ns, Name: name}}}
}

func amADCConfig(ns, name string) addonv1alpha1.AddOnConfig {
	return addonv1alpha1.AddOnConfig{ConfigGroupResource: amADCGR, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: ns, Name: name}}
}

// amCreateADC creates an AddOnDeploymentConfig with one customized variable.
func amCreateADC(ctx SpecContext, ns, name, value string) {
	GinkgoHelper()
	Expect(hubCP.Client.Create(ctx, &addonv1alpha1.AddOnDeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       addonv1alpha1.AddOnDeploymentConfigSpec{CustomizedVariables: []addonv1alpha1.CustomizedVariable{{Name: "LEVEL", Value: value}}},
	})).To(Succeed())
}

func amSetADC(ctx SpecContext, ns, name, value string) {
	GinkgoHelper()
	Eventually(func() error {
		adc := &addonv1alpha1.AddOnDeploymentConfig{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, adc); err != nil {
			return err
		}
		adc.Spec.CustomizedVariables = []addonv1alpha1.CustomizedVariable{{Name: "LEVEL", Value: value}}
		return hubCP.Client.Update(ctx, adc)
	}).Should(Succeed())
}

// amContractHash is the spec hash of ADC ns/name computed as the contract
// says, independently of the hub's code: the object as served, less
// apiVersion, kind, metadata and status, by encoding/json, SHA-256, hex.
func amContractHash(ctx SpecContext, ns, name string) string {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(addonv1alpha1.GroupVersion.WithKind("AddOnDeploymentConfig"))
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	obj := u.DeepCopy().Object
	for _, k := range []string{"apiVersion", "kind", "metadata", "status"} {
		delete(obj, k)
	}
	b, err := json.Marshal(obj)
	Expect(err).NotTo(HaveOccurred())
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func amMCA(ctx context.Context, cluster, name string) *addonv1alpha1.ManagedClusterAddOn {
	GinkgoHelper()
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mca)).To(Succeed())
	return mca
}

// amInstalledOn returns, for Eventually, the clusters that have MCA name
// (not being deleted).
func amInstalledOn(ctx context.Context, name string, clusters ...string) func() []string {
	return func() []string {
		var out []string
		for _, c := range clusters {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: name}, mca)
			if apierrors.IsNotFound(err) || (err == nil && !mca.DeletionTimestamp.IsZero()) {
				continue
			}
			Expect(err).NotTo(HaveOccurred())
			out = append(out, c)
		}
		return out
	}
}

func amCondition(ctx context.Context, cluster, name, condType string) func() *metav1.Condition {
	return func() *metav1.Condition {
		return meta.FindStatusCondition(amMCA(ctx, cluster, name).Status.Conditions, condType)
	}
}

// amDesiredOf returns, for Eventually, MCA cluster/name's desired configs:
// "<namespace>/<name>@<specHash>" per reference.
func amDesired(ctx context.Context, cluster, name string) func() []string {
	return func() []string {
		var out []string
		for _, r := range amMCA(ctx, cluster, name).Status.ConfigReferences {
			if r.DesiredConfig != nil {
				out = append(out, r.DesiredConfig.Namespace+"/"+r.DesiredConfig.Name+"@"+r.DesiredConfig.SpecHash)
			}
		}
		return out
	}
}

func amRef(ns, name, hash string) string { return ns + "/" + name + "@" + hash }

// amDeployAsFramework plays the add-on's own manager and the work agent on
// cluster: ManifestApplied on the MCA, and a deploy work carrying the
// MCA's desired configs' hashes, reported Applied and Available.
func amDeploy(ctx SpecContext, cluster, name string) {
	GinkgoHelper()
	mca := amMCA(ctx, cluster, name)
	hashes := map[string]string{}
	for _, r := range mca.Status.ConfigReferences {
		hashes[addon.ConfigKey(r.Group, r.Resource, r.DesiredConfig.Namespace, r.DesiredConfig.Name)] = r.DesiredConfig.SpecHash
	}
	raw, err := json.Marshal(hashes)
	Expect(err).NotTo(HaveOccurred())
	work := addon.DeployWorkName(name, 0)
	Eventually(func() error {
		w := &workv1.ManifestWork{}
		err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: work}, w)
		if apierrors.IsNotFound(err) {
			w = &workv1.ManifestWork{
				ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: work, Labels: map[string]string{addon.AddOnNameLabel: name},
					Annotations: map[string]string{addon.ConfigSpecHashAnnotation: string(raw)}},
				Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
					configMap("default", name, map[string]string{"hashes": string(raw)})}}},
			}
			return hubCP.Client.Create(ctx, w)
		}
		if err != nil {
			return err
		}
		w.Annotations[addon.ConfigSpecHashAnnotation] = string(raw)
		w.Spec.Workload.Manifests = []workv1.Manifest{configMap("default", name, map[string]string{"hashes": string(raw)})}
		return hubCP.Client.Update(ctx, w)
	}).Should(Succeed())
	Eventually(func() error {
		mca := amMCA(ctx, cluster, name)
		meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addon.ConditionManifestApplied, Status: metav1.ConditionTrue,
			Reason: "AddonManifestApplied", Message: "manifests of addon are applied successfully"})
		return hubCP.Client.Status().Update(ctx, mca)
	}).Should(Succeed())
	reportWork(ctx, cluster, work, healthy)
}

var _ = Describe("addon manager", func() {
	It("installs by Placements on the chosen clusters, with the cluster's add-on annotations, and removes the add-on where the placement no longer chooses", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "am-inst")
		c1, c2, c3 := newClusterName("am-inst"), newClusterName("am-inst"), newClusterName("am-inst")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, c2, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, c3, set, map[string]string{"env": "dev"})
		Expect(updateCluster(ctx, hubCP.Client, c1, func(mc *clusterv1.ManagedCluster) {
			mc.Annotations = map[string]string{addon.AnnotationPrefix + "enable-hosted-mode-addons": "false", "other.example.com/keep-out": "x"}
		})).To(Succeed())
		prodPlacement(ctx, ns, "prod")
		Eventually(chosen(ctx, ns, "prod")).Should(ConsistOf(c1, c2))
		name := newClusterName("am-inst")
		By("deleting a user-made install on a cluster the placement does not choose")
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c3, Name: name}})).To(Succeed())
		cma := amPlacementsCMA(name, nil, amPlacement(ns, "prod", workv1alpha1.RolloutStrategy{}))
		amCreateCMA(ctx, cma)

		Eventually(amInstalledOn(ctx, name, c1, c2, c3)).Should(ConsistOf(c1, c2))
		mca := amMCA(ctx, c1, name)
		// Created with an empty spec: what it reads is the CRD's default.
		Expect(mca.Spec).To(Equal(addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: addon.DefaultInstallNamespace}))
		Expect(metav1.GetControllerOf(mca)).To(And(Not(BeNil()), HaveField("Kind", "ClusterManagementAddOn"), HaveField("Name", name), HaveField("UID", cma.UID)))
		Expect(mca.Annotations).To(Equal(map[string]string{addon.AnnotationPrefix + "enable-hosted-mode-addons": "false"}))
		Expect(amMCA(ctx, c2, name).Annotations).To(BeEmpty())

		By("mirroring a change of the cluster's add-on annotations")
		Expect(updateCluster(ctx, hubCP.Client, c1, func(mc *clusterv1.ManagedCluster) {
			mc.Annotations = map[string]string{addon.AnnotationPrefix + "other": "y"}
		})).To(Succeed())
		Eventually(func() map[string]string { return amMCA(ctx, c1, name).Annotations }).Should(Equal(map[string]string{addon.AnnotationPrefix + "other": "y"}))

		By("removing the add-on from a cluster the placement drops")
		relabelCluster(ctx, c2, map[string]string{"env": "dev"})
		Eventually(amInstalledOn(ctx, name, c1, c2, c3)).Should(ConsistOf(c1))
		Eventually(func() []addonv1alpha1.InstallProgression { return amCMA(ctx, name).Status.InstallProgressions }).Should(ConsistOf(
			And(HaveField("PlacementRef", addonv1alpha1.PlacementRef{Namespace: ns, Name: "prod"}),
				HaveField("Conditions", ContainElement(HaveField("Message", "selected clusters 1. configured addons 1/1 completed with no errors, 0 failed 0 timeout."))))))

		By("removing the installs with the ClusterManagementAddOn (garbage collection by the ownerReference)")
		Expect(hubCP.Client.Delete(ctx, cma)).To(Succeed())
		Eventually(amInstalledOn(ctx, name, c1, c2, c3)).Should(BeEmpty())
	})

	It("installs nowhere through a Placement that chooses no cluster, and says so in installProgressions", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "am-none")
		c1 := newClusterName("am-none")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "dev"})
		prodPlacement(ctx, ns, "prod")
		Eventually(placementCondition(ctx, ns, "prod", clusterv1beta1.PlacementConditionSatisfied)).Should(Not(BeNil()))
		Expect(chosen(ctx, ns, "prod")()).To(BeEmpty())
		name := newClusterName("am-none")
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: name}})).To(Succeed())
		amCreateCMA(ctx, amPlacementsCMA(name, nil, amPlacement(ns, "prod", workv1alpha1.RolloutStrategy{})))

		Eventually(func() []addonv1alpha1.InstallProgression { return amCMA(ctx, name).Status.InstallProgressions }).Should(ConsistOf(
			HaveField("Conditions", ContainElement(And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "Progressing"),
				HaveField("Message", "selected clusters 0. configured addons 0/0 progressing..., 0 failed 0 timeout."))))))
		Eventually(amInstalledOn(ctx, name, c1)).Should(BeEmpty())
	})

	It("resolves default < placement < ManagedClusterAddOn configs with the contract's spec hashes, and follows a config's change", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "am-cfg")
		c1, c2, manual := newClusterName("am-cfg"), newClusterName("am-cfg"), newClusterName("am-cfg")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, c2, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, manual, set, map[string]string{"env": "dev"})
		amCreateADC(ctx, ns, "default", "1")
		amCreateADC(ctx, ns, "placed", "2")
		amCreateADC(ctx, ns, "own", "3")
		prodPlacement(ctx, ns, "prod")
		Eventually(chosen(ctx, ns, "prod")).Should(ConsistOf(c1, c2))
		name := newClusterName("am-cfg")
		cma := amPlacementsCMA(name, amDefaultADC(ns, "default"), amPlacement(ns, "prod", workv1alpha1.RolloutStrategy{}, amADCConfig(ns, "placed")))
		amCreateCMA(ctx, cma)
		hDefault, hPlaced, hOwn := amContractHash(ctx, ns, "default"), amContractHash(ctx, ns, "placed"), amContractHash(ctx, ns, "own")
		Expect(hDefault).NotTo(Equal(hPlaced))

		By("writing the default with its hash into the ClusterManagementAddOn's status")
		Eventually(func() []addonv1alpha1.DefaultConfigReference { return amCMA(ctx, name).Status.DefaultConfigReferences }).Should(Equal(
			[]addonv1alpha1.DefaultConfigReference{{ConfigGroupResource: amADCGR, DesiredConfig: &addonv1alpha1.ConfigSpecHash{
				ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: ns, Name: "default"}, SpecHash: hDefault}}}))

		By("giving the placed clusters the placement's config")
		Eventually(amDesired(ctx, c1, name)).Should(Equal([]string{amRef(ns, "placed", hPlaced)}))
		Eventually(amCondition(ctx, c1, name, addon.ConditionConfigured)).Should(And(haveCondition(metav1.ConditionTrue, "ConfigurationsConfigured"), HaveField("Message", "Configurations configured")))
		adc := &addonv1alpha1.AddOnDeploymentConfig{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "placed"}, adc)).To(Succeed())
		Expect(amMCA(ctx, c1, name).Status.ConfigReferences[0].LastObservedGeneration).To(Equal(adc.Generation))

		By("letting a ManagedClusterAddOn's own config win over the placement's")
		Eventually(func() error {
			mca := amMCA(ctx, c2, name)
			mca.Spec.Configs = []addonv1alpha1.AddOnConfig{amADCConfig(ns, "own")}
			return hubCP.Client.Update(ctx, mca)
		}).Should(Succeed())
		Eventually(func() error {
			mca := amMCA(ctx, c2, name)
			mca.Status.SupportedConfigs = []addonv1alpha1.ConfigGroupResource{amADCGR}
			return hubCP.Client.Status().Update(ctx, mca)
		}).Should(Succeed())
		Eventually(amDesired(ctx, c2, name)).Should(Equal([]string{amRef(ns, "own", hOwn)}))

		By("giving a Manual install of a Manual add-on the default")
		manualName := newClusterName("am-cfg")
		amCreateCMA(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: manualName},
			Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: amDefaultADC(ns, "default")}})
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: manual, Name: manualName}})).To(Succeed())
		Eventually(amDesired(ctx, manual, manualName)).Should(Equal([]string{amRef(ns, "default", hDefault)}))
		Expect(metav1.GetControllerOf(amMCA(ctx, manual, manualName))).To(HaveField("Name", manualName))

		By("following a change of the config's spec with a new hash")
		amSetADC(ctx, ns, "placed", "20")
		hPlaced2 := amContractHash(ctx, ns, "placed")
		Expect(hPlaced2).NotTo(Equal(hPlaced))
		Eventually(amDesired(ctx, c1, name)).Should(Equal([]string{amRef(ns, "placed", hPlaced2)}))

		By("saying which config is missing")
		Eventually(func() error {
			mca := amMCA(ctx, manual, manualName)
			mca.Spec.Configs = []addonv1alpha1.AddOnConfig{amADCConfig(ns, "missing")}
			mca.Status.SupportedConfigs = []addonv1alpha1.ConfigGroupResource{amADCGR}
			if err := hubCP.Client.Update(ctx, mca); err != nil {
				return err
			}
			return nil
		}).Should(Succeed())
		Eventually(func() error {
			mca := amMCA(ctx, manual, manualName)
			mca.Status.SupportedConfigs = []addonv1alpha1.ConfigGroupResource{amADCGR}
			return hubCP.Client.Status().Update(ctx, mca)
		}).Should(Succeed())
		Eventually(amCondition(ctx, manual, manualName, addon.ConditionConfigured)).Should(And(haveCondition(metav1.ConditionFalse, "ConfigurationsNotConfigured"),
			HaveField("Message", ContainSubstring(ns+"/missing (AddOnDeploymentConfig) does not exist"))))
	})

	It("says ConfigurationUnsupported for a config type the add-on does not support, and configures it once supported", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "am-uns")
		c1 := newClusterName("am-uns")
		createPolicyMember(ctx, c1, set, nil)
		amCreateADC(ctx, ns, "own", "1")
		name := newClusterName("am-uns")
		amCreateCMA(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}})
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: name},
			Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: []addonv1alpha1.AddOnConfig{amADCConfig(ns, "own")}}})).To(Succeed())

		Eventually(amCondition(ctx, c1, name, addon.ConditionProgressing)).Should(And(haveCondition(metav1.ConditionFalse, "ConfigurationUnsupported"),
			HaveField("Message", "Configuration with gvr addon.open-cluster-management.io/addondeploymentconfigs is not supported for this addon")))
		Expect(amMCA(ctx, c1, name).Status.ConfigReferences).To(BeEmpty())

		By("configuring it once the add-on's manager lists the type as supported")
		Eventually(func() error {
			mca := amMCA(ctx, c1, name)
			mca.Status.SupportedConfigs = []addonv1alpha1.ConfigGroupResource{amADCGR}
			return hubCP.Client.Status().Update(ctx, mca)
		}).Should(Succeed())
		Eventually(amDesired(ctx, c1, name)).Should(Equal([]string{amRef(ns, "own", amContractHash(ctx, ns, "own"))}))
		Eventually(amCondition(ctx, c1, name, addon.ConditionProgressing)).Should(And(haveCondition(metav1.ConditionFalse, "WaitingForManifestApplied"),
			HaveField("Message", "Waiting for ManagedClusterAddOn ManifestApplied condition")))
	})

	It("paces desired configs one cluster at a time under Progressive, recording lastAppliedConfig once each cluster's works carry them", func(ctx SpecContext) {
		ns, c1, c2, c3 := rolloutClusters(ctx, "am-prog")
		amCreateADC(ctx, ns, "cfg", "1")
		h1 := amContractHash(ctx, ns, "cfg")
		name := newClusterName("am-prog")
		amCreateCMA(ctx, amPlacementsCMA(name, amDefaultADC(ns, "cfg"), amPlacement(ns, "prod", workv1alpha1.RolloutStrategy{
			Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}})))
		Eventually(amInstalledOn(ctx, name, c1, c2, c3)).Should(ConsistOf(c1, c2, c3))

		configured := func() map[string]bool {
			out := map[string]bool{}
			for _, c := range []string{c1, c2, c3} {
				out[c] = len(amDesired(ctx, c, name)()) > 0 && amDesired(ctx, c, name)()[0] == amRef(ns, "cfg", h1)
			}
			return out
		}
		step := func(want map[string]bool) {
			GinkgoHelper()
			Eventually(configured).Should(Equal(want))
			Consistently(configured, time.Second).Should(Equal(want))
		}
		step(map[string]bool{c1: true, c2: false, c3: false})
		Expect(amCondition(ctx, c2, name, addon.ConditionConfigured)()).To(And(haveCondition(metav1.ConditionFalse, "ConfigurationsNotConfigured"),
			HaveField("Message", "Configurations updated and not configured yet")))
		Expect(amCondition(ctx, c1, name, addon.ConditionProgressing)()).To(haveCondition(metav1.ConditionFalse, "WaitingForManifestApplied"))

		amDeploy(ctx, c1, name)
		Eventually(amCondition(ctx, c1, name, addon.ConditionProgressing)).Should(And(haveCondition(metav1.ConditionFalse, "Completed"), HaveField("Message", "completed with no errors.")))
		Expect(amMCA(ctx, c1, name).Status.ConfigReferences[0].LastAppliedConfig).To(Equal(amMCA(ctx, c1, name).Status.ConfigReferences[0].DesiredConfig))
		step(map[string]bool{c1: true, c2: true, c3: false})
		amDeploy(ctx, c2, name)
		step(map[string]bool{c1: true, c2: true, c3: true})
		Expect(amCMA(ctx, name).Status.InstallProgressions[0].Conditions).To(ContainElement(haveCondition(metav1.ConditionTrue, "Progressing")))
		amDeploy(ctx, c3, name)
		Eventually(func() []metav1.Condition { return amCMA(ctx, name).Status.InstallProgressions[0].Conditions }).Should(ContainElement(
			And(haveCondition(metav1.ConditionFalse, "Completed"), HaveField("Message", "selected clusters 3. configured addons 3/3 completed with no errors, 0 failed 0 timeout."))))
		ip := amCMA(ctx, name).Status.InstallProgressions[0]
		Expect(ip.ConfigReferences).To(ConsistOf(And(HaveField("DesiredConfig.SpecHash", h1), HaveField("LastAppliedConfig.SpecHash", h1), HaveField("LastKnownGoodConfig.SpecHash", h1))))

		By("rolling a config change out the same way, the works following")
		amSetADC(ctx, ns, "cfg", "2")
		h2 := amContractHash(ctx, ns, "cfg")
		hashes := func() map[string]string {
			out := map[string]string{}
			for _, c := range []string{c1, c2, c3} {
				out[c] = amMCA(ctx, c, name).Status.ConfigReferences[0].DesiredConfig.SpecHash
			}
			return out
		}
		Eventually(hashes).Should(Equal(map[string]string{c1: h2, c2: h1, c3: h1}))
		Consistently(hashes, time.Second).Should(Equal(map[string]string{c1: h2, c2: h1, c3: h1}))
		Expect(amCondition(ctx, c1, name, addon.ConditionProgressing)()).To(And(haveCondition(metav1.ConditionTrue, "Progressing"), HaveField("Message", "progressing... mca and work configs mismatch")))
		Expect(amMCA(ctx, c1, name).Status.ConfigReferences[0].LastAppliedConfig.SpecHash).To(Equal(h1), "lastAppliedConfig is the config the cluster still runs")
		amDeploy(ctx, c1, name)
		Eventually(hashes).Should(Equal(map[string]string{c1: h2, c2: h2, c3: h1}))
	})

	It("leaves an add-on whose lifecycle is not addon-manager alone", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "am-self")
		c1 := newClusterName("am-self")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "prod"})
		amCreateADC(ctx, ns, "cfg", "1")
		prodPlacement(ctx, ns, "prod")
		Eventually(chosen(ctx, ns, "prod")).Should(ConsistOf(c1))
		self, managed := newClusterName("am-self"), newClusterName("am-self")
		selfCMA := amPlacementsCMA(self, amDefaultADC(ns, "cfg"), amPlacement(ns, "prod", workv1alpha1.RolloutStrategy{}))
		selfCMA.Annotations = map[string]string{addon.LifecycleAnnotation: addon.LifecycleSelf}
		amCreateCMA(ctx, selfCMA)
		amCreateCMA(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: managed}, Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: amDefaultADC(ns, "cfg")}})
		for _, n := range []string{self, managed} {
			Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: n}})).To(Succeed())
		}

		By("acting on the managed add-on beside it")
		Eventually(amDesired(ctx, c1, managed)).ShouldNot(BeEmpty())
		Eventually(amCondition(ctx, c1, managed, addon.ConditionProgressing)).ShouldNot(BeNil())
		By("writing nothing on the other: no owner, no configs, no conditions, no status")
		Consistently(func() addonv1alpha1.ManagedClusterAddOn { return *amMCA(ctx, c1, self) }, 2*time.Second).Should(And(
			HaveField("OwnerReferences", BeEmpty()), HaveField("Status.ConfigReferences", BeEmpty()), HaveField("Status.Conditions", BeEmpty())))
		Expect(amCMA(ctx, self).Status).To(Equal(addonv1alpha1.ClusterManagementAddOnStatus{}))
	})

	It("labels each cluster with its add-ons' health, and copies an unknown cluster's Available into its add-ons", func(ctx SpecContext) {
		set, _ := newSetWithNamespace(ctx, "am-feat")
		c1 := newClusterName("am-feat")
		createPolicyMember(ctx, c1, set, nil)
		name := newClusterName("am-feat")
		amCreateCMA(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}})
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: name}})).To(Succeed())
		feature := func() string { return getCluster(ctx, c1).Labels[addon.FeatureLabel(name)] }
		Eventually(feature).Should(Equal("unreachable"))
		setAvailable := func(status metav1.ConditionStatus) {
			GinkgoHelper()
			Eventually(func() error {
				mca := amMCA(ctx, c1, name)
				meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addon.ConditionAvailable, Status: status, Reason: "ReportedByTest"})
				return hubCP.Client.Status().Update(ctx, mca)
			}).Should(Succeed())
		}
		setAvailable(metav1.ConditionTrue)
		Eventually(feature).Should(Equal("available"))
		setAvailable(metav1.ConditionFalse)
		Eventually(feature).Should(Equal("unhealthy"))

		By("copying the cluster's Unknown into the add-on's Available")
		Eventually(func() error {
			mc := getCluster(ctx, c1)
			meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionUnknown,
				Reason: "ManagedClusterLeaseUpdateStopped", Message: "Registration agent stopped updating its lease."})
			return hubCP.Client.Status().Update(ctx, mc)
		}).Should(Succeed())
		Eventually(amCondition(ctx, c1, name, addon.ConditionAvailable)).Should(And(haveCondition(metav1.ConditionUnknown, "ManagedClusterLeaseUpdateStopped"),
			HaveField("Message", "Registration agent stopped updating its lease.")))
		Eventually(feature).Should(Equal("unreachable"))

		By("removing the label with the add-on")
		Expect(hubCP.Client.Delete(ctx, amMCA(ctx, c1, name))).To(Succeed())
		Eventually(func() map[string]string { return getCluster(ctx, c1).Labels }).ShouldNot(HaveKey(addon.FeatureLabel(name)))
	})

	It("says AddOnManagerNotRunning on a managed add-on nothing deploys, and takes it back once the add-on's manager writes", func(ctx SpecContext) {
		set, _ := newSetWithNamespace(ctx, "am-nr")
		c1 := newClusterName("am-nr")
		createPolicyMember(ctx, c1, set, nil)
		name := newClusterName("am-nr")
		amCreateCMA(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}})
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: name}})).To(Succeed())
		Eventually(amCondition(ctx, c1, name, addon.ConditionManifestApplied)).Should(And(haveCondition(metav1.ConditionFalse, "AddOnManagerNotRunning"),
			HaveField("Message", ContainSubstring("no add-on manager has written anything"))))

		Eventually(func() error {
			mca := amMCA(ctx, c1, name)
			meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addon.ConditionRegistrationApplied, Status: metav1.ConditionTrue, Reason: "NilRegistration"})
			return hubCP.Client.Status().Update(ctx, mca)
		}).Should(Succeed())
		Eventually(amCondition(ctx, c1, name, addon.ConditionManifestApplied)).Should(BeNil())
		Consistently(amCondition(ctx, c1, name, addon.ConditionManifestApplied), time.Second).Should(BeNil())
	})

	It("deletes a deleted cluster's add-ons before its ManifestWorks", func(ctx SpecContext) {
		set, _ := newSetWithNamespace(ctx, "am-del")
		c1 := newClusterName("am-del")
		createPolicyMember(ctx, c1, set, nil)
		name := newClusterName("am-del")
		amCreateCMA(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}})
		const hold = "test.flotilla.io/hold"
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: name, Finalizers: []string{hold}}})).To(Succeed())
		Expect(hubCP.Client.Create(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: addon.DeployWorkName(name, 0)},
			Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap("default", name, nil)}}}})).To(Succeed())

		Expect(hubCP.Client.Delete(ctx, getCluster(ctx, c1))).To(Succeed())
		Eventually(func() bool { return !amMCA(ctx, c1, name).DeletionTimestamp.IsZero() }).Should(BeTrue())
		Consistently(workExists(ctx, c1, addon.DeployWorkName(name, 0)), time.Second).Should(BeTrue(), "the works wait for the add-ons")

		Eventually(func() error {
			mca := amMCA(ctx, c1, name)
			mca.Finalizers = nil
			return hubCP.Client.Update(ctx, mca)
		}).Should(Succeed())
		Eventually(workExists(ctx, c1, addon.DeployWorkName(name, 0))).Should(BeFalse())
	})
})

func amCMA(ctx context.Context, name string) *addonv1alpha1.ClusterManagementAddOn {
	GinkgoHelper()
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: name}, cma)).To(Succeed())
	return cma
}
