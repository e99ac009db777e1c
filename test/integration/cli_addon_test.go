package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/test/framework"
)

// flotilla addon enable|disable, get addons and describe addon, on a hub
// of their own without the hub controllers: what the commands write is
// exactly what the spec reads back, and what they show is what it wrote.
var _ = Describe("cli addon", Ordered, func() {
	var (
		cp  *framework.ControlPlane
		c   client.Client
		run func(ctx context.Context, args ...string) cliResult
	)
	mca := func(ctx context.Context, cluster, name string) *addonv1alpha1.ManagedClusterAddOn {
		m := &addonv1alpha1.ManagedClusterAddOn{}
		err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, m)
		if apierrors.IsNotFound(err) {
			return nil
		}
		Expect(err).NotTo(HaveOccurred())
		return m
	}
	cma := func(ctx context.Context, name string) *addonv1alpha1.ClusterManagementAddOn {
		m := &addonv1alpha1.ClusterManagementAddOn{}
		Expect(c.Get(ctx, client.ObjectKey{Name: name}, m)).To(Succeed())
		return m
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		cp, err = framework.Start(suiteCtx, framework.HubAPI)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cp.Stop)
		c = cp.Client
		run = func(ctx context.Context, args ...string) cliResult {
			return flotilla(ctx, append(args, "--kubeconfig", cp.AdminKubeconfig)...)
		}
		for _, name := range []string{"addon-c1", "addon-c2", "addon-c3"} {
			Expect(c.Create(ctx, newManagedCluster(name))).To(Succeed())
			Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
		}
		for _, name := range []string{"hello", "metrics", "idle"} {
			Expect(c.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
		}
		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "addon-apps"}})).To(Succeed())
		Expect(c.Create(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "addon-apps", Name: "prod"}})).To(Succeed())
	})

	It("enables add-ons on named clusters, with an install namespace and configs, and updates them when run again", func(ctx SpecContext) {
		res := run(ctx, "addon", "enable", "--names", "hello,metrics", "--clusters", "addon-c1,addon-c2", "--namespace", "hello-agent",
			"--config", "addondeploymentconfigs/addon-apps/hello-config", "--config", "addontemplates/hello-0.1.0")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Add-on hello enabled on cluster addon-c1 (ManagedClusterAddOn addon-c1/hello created)."))
		for _, cluster := range []string{"addon-c1", "addon-c2"} {
			for _, name := range []string{"hello", "metrics"} {
				m := mca(ctx, cluster, name)
				Expect(m).NotTo(BeNil(), "%s/%s", cluster, name)
				Expect(m.Spec.InstallNamespace).To(Equal("hello-agent"))
				Expect(m.Spec.Configs).To(ConsistOf(
					addonv1alpha1.AddOnConfig{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: "addondeploymentconfigs"}, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "addon-apps", Name: "hello-config"}},
					addonv1alpha1.AddOnConfig{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: "addontemplates"}, ConfigReferent: addonv1alpha1.ConfigReferent{Name: "hello-0.1.0"}},
				))
			}
		}
		Expect(mca(ctx, "addon-c3", "hello")).To(BeNil())

		By("run again with another namespace only: updated, configs kept")
		res = run(ctx, "addon", "enable", "--names", "hello", "--cluster", "addon-c1", "-n", "other")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("(ManagedClusterAddOn addon-c1/hello updated)"))
		m := mca(ctx, "addon-c1", "hello")
		Expect(m.Spec.InstallNamespace).To(Equal("other"))
		Expect(m.Spec.Configs).To(HaveLen(2))

		By("without --namespace, the CRD's default")
		Expect(run(ctx, "addon", "enable", "--names", "hello", "--clusters", "addon-c3").Code).To(Equal(0))
		Expect(mca(ctx, "addon-c3", "hello").Spec.InstallNamespace).To(Equal(addon.DefaultInstallNamespace))
	})

	It("refuses bad input, naming what is wrong, and writes nothing", func(ctx SpecContext) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"addon", "enable", "--clusters", "addon-c1"}, "say which add-ons: flotilla addon enable --names NAME"},
			{[]string{"addon", "enable", "--names", "hello"}, "say where: flotilla addon enable --names hello with --clusters"},
			{[]string{"addon", "enable", "--names", "hello", "--clusters", "addon-c1", "--placement", "addon-apps/prod"}, "not several"},
			{[]string{"addon", "enable", "--names", "nope", "--clusters", "addon-c1"}, `add-on "nope" is not declared on the hub`},
			{[]string{"addon", "enable", "--names", "hello", "--clusters", "addon-c9"}, `cluster "addon-c9" is not a managed cluster of the hub`},
			{[]string{"addon", "enable", "--names", "hello", "--placement", "prod"}, "give the Placement as NAMESPACE/NAME"},
			{[]string{"addon", "enable", "--names", "hello", "--placement", "addon-apps/none"}, "there is no Placement addon-apps/none"},
			{[]string{"addon", "enable", "--names", "hello", "--clusters", "addon-c1", "--config", "addontemplates"}, "give a config as RESOURCE[.GROUP]/[NAMESPACE/]NAME"},
			{[]string{"addon", "enable", "--names", "hello", "--clusters", "addon-c1", "-n", "Not_A_Namespace"}, "is not a namespace name"},
			{[]string{"addon", "disable", "--names", "hello"}, "or --all-clusters"},
			{[]string{"get", "addons", "nope"}, `add-on "nope" is not declared on the hub`},
			{[]string{"describe", "addon", "nope"}, `add-on "nope" is not declared on the hub`},
		} {
			res := run(ctx, tc.args...)
			Expect(res.Code).NotTo(Equal(0), "%v", tc.args)
			Expect(res.Stderr).To(ContainSubstring(tc.want), "%v", tc.args)
		}
		Expect(mca(ctx, "addon-c2", "nope")).To(BeNil())
		Expect(cma(ctx, "hello").Spec.InstallStrategy.Type).NotTo(Equal(addonv1alpha1.AddonInstallStrategyPlacements))
	})

	It("shows each cluster's add-ons, their conditions and configs, and the add-ons on no cluster", func(ctx SpecContext) {
		m := mca(ctx, "addon-c1", "hello")
		m.Status.Conditions = []metav1.Condition{
			{Type: addon.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated", Message: "hello add-on is available.", LastTransitionTime: metav1.Now()},
			{Type: addon.ConditionProgressing, Status: metav1.ConditionFalse, Reason: "Completed", Message: "completed with no errors.", LastTransitionTime: metav1.Now()},
		}
		m.Status.Namespace = "other"
		m.Status.ConfigReferences = []addonv1alpha1.ConfigReference{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: "addontemplates"},
			ConfigReferent:      addonv1alpha1.ConfigReferent{Name: "hello-0.1.0"},
			DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: "hello-0.1.0"}, SpecHash: "abcdef0123456789"},
		}}
		Expect(c.Status().Update(ctx, m)).To(Succeed())

		res := run(ctx, "get", "addons", "hello")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`ADDON\s+CLUSTER\s+AVAILABLE\s+DEGRADED\s+PROGRESSING\s+CONFIGS`))
		Expect(res.Stdout).To(MatchRegexp(`hello\s+addon-c1\s+True\s+-\s+False\s+addontemplates/hello-0.1.0\*`))
		Expect(res.Stdout).To(MatchRegexp(`hello\s+addon-c2\s+-\s+-\s+-\s+-`))
		Expect(res.Stdout).NotTo(ContainSubstring("metrics"))

		res = run(ctx, "get", "addons", "--clusters", "addon-c2")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`metrics\s+addon-c2`))
		Expect(res.Stdout).NotTo(ContainSubstring("addon-c1"))

		res = run(ctx, "get", "addons")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("Declared, on no cluster: idle"))

		res = run(ctx, "get", "addons", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		var list addonv1alpha1.ManagedClusterAddOnList
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Kind).To(Equal("ManagedClusterAddOnList"))
		Expect(list.Items).To(HaveLen(5)) // hello on c1, c2, c3; metrics on c1, c2

		res = run(ctx, "describe", "addon", "hello", "--clusters", "addon-c1")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(And(
			ContainSubstring("Run by:       the hub's add-on manager"),
			ContainSubstring("Installed:    by hand (Manual)"),
			ContainSubstring("Cluster addon-c1:"),
			ContainSubstring("Namespace:    other"),
			MatchRegexp(`addontemplates/hello-0.1.0 \(abcdef012345\)\s+-`),
			MatchRegexp(`Available\s+True\s+ManagedClusterAddOnLeaseUpdated\s+hello add-on is available.`),
		))
		Expect(res.Stdout).NotTo(ContainSubstring("Cluster addon-c2:"))
	})

	It("puts an add-on on a Placement's clusters, refusing to drop hand-made installs unless forced, and takes it off again", func(ctx SpecContext) {
		res := run(ctx, "addon", "enable", "--names", "hello", "--placement", "addon-apps/prod")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("add-on hello is installed by hand on 3 clusters (addon-c1, addon-c2, addon-c3)"))
		Expect(cma(ctx, "hello").Spec.InstallStrategy.Placements).To(BeEmpty())

		res = run(ctx, "addon", "enable", "--names", "hello", "--placement", "addon-apps/prod", "--force")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Add-on hello is installed on the clusters of Placement addon-apps/prod."))
		s := cma(ctx, "hello").Spec.InstallStrategy
		Expect(s.Type).To(Equal(addonv1alpha1.AddonInstallStrategyPlacements))
		Expect(s.Placements).To(ConsistOf(HaveField("PlacementRef", addonv1alpha1.PlacementRef{Namespace: "addon-apps", Name: "prod"})))

		By("again: nothing added twice")
		res = run(ctx, "addon", "enable", "--names", "hello", "--placement", "addon-apps/prod")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("was installed on the clusters of Placement addon-apps/prod already"))
		Expect(cma(ctx, "hello").Spec.InstallStrategy.Placements).To(HaveLen(1))

		By("by Placements, an add-on is neither enabled nor disabled on single clusters")
		res = run(ctx, "addon", "enable", "--names", "hello", "--clusters", "addon-c1")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("add-on hello is installed by Placements (addon-apps/prod)"))
		res = run(ctx, "addon", "disable", "--names", "hello", "--clusters", "addon-c1")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("the hub would install it again"))
		Expect(mca(ctx, "addon-c1", "hello")).NotTo(BeNil())

		res = run(ctx, "describe", "addon", "hello")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Installed:    on the clusters of Placements addon-apps/prod"))

		res = run(ctx, "addon", "disable", "--names", "hello", "--placement", "addon-apps/prod")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("by no Placement now: the hub removes it from every cluster"))
		Expect(cma(ctx, "hello").Spec.InstallStrategy.Placements).To(BeEmpty())
		res = run(ctx, "addon", "disable", "--names", "hello", "--placement", "addon-apps/prod")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("is not installed by Placement addon-apps/prod"))

		By("installed by no Placement, an add-on is enabled by hand again, and its strategy becomes Manual")
		res = run(ctx, "addon", "enable", "--names", "hello", "--clusters", "addon-c1")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("Add-on hello was installed by no Placement: its install strategy is Manual now."))
		Expect(cma(ctx, "hello").Spec.InstallStrategy.Type).To(Equal(addonv1alpha1.AddonInstallStrategyManual))
		Consistently(func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: "addon-c1", Name: "hello"}, &addonv1alpha1.ManagedClusterAddOn{})
		}, "2s").Should(Succeed(), "the hub removed the add-on enabled by hand")
		res = run(ctx, "addon", "disable", "--names", "hello", "--clusters", "addon-c1")
		Expect(res.Code).To(Equal(0), res.Stderr)
	})

	It("disables add-ons on named clusters, or on every cluster, reporting clusters without them", func(ctx SpecContext) {
		res := run(ctx, "addon", "disable", "--names", "metrics", "--clusters", "addon-c1,addon-c3")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(And(
			ContainSubstring("Add-on metrics disabled on cluster addon-c1 (ManagedClusterAddOn addon-c1/metrics deleted)."),
			ContainSubstring("Add-on metrics is not on cluster addon-c3."),
		))
		Expect(mca(ctx, "addon-c1", "metrics")).To(BeNil())
		Expect(mca(ctx, "addon-c2", "metrics")).NotTo(BeNil())

		res = run(ctx, "addon", "disable", "--names", "metrics,idle", "--all-clusters")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(And(ContainSubstring("disabled on cluster addon-c2"), ContainSubstring("Add-on idle is on no cluster.")))
		Expect(mca(ctx, "addon-c2", "metrics")).To(BeNil())
	})
})
