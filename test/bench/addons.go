package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/test/framework"
)

var addonsClusters = flag.Int("addon-clusters", 1000, "addons: hollow clusters the template add-on is enabled on through one Placement")

// The add-on the benchmark enables, and the Placement that chooses every cluster.
const (
	benchAddOn          = "hello"
	addonsNamespace     = "bench-addons"
	addonsPlacement     = "everywhere"
	addonsCSRExpiration = 24 * time.Hour
)

// benchAddons enables one template add-on (a Deployment and a kubeClient
// registration granted a ClusterRole in the cluster's namespace) on every
// hollow cluster through a Placement, with `flotilla addon enable
// --placement`, and times it until every ManagedClusterAddOn is Available;
// it prints the hub's requests, ManifestWorks and CSR approvals per
// cluster, and the add-on manager's reconciles (see docs/benchmarks.md,
// "Add-ons").
func benchAddons(ctx context.Context, e *env) error {
	quietKlog()
	var cl cleanups
	defer cl.run()
	n := *addonsClusters
	f, err := startAddOnFleet(ctx, e, n, &cl)
	if err != nil {
		return err
	}
	if err := f.placeEverywhere(ctx, addonsNamespace, addonsPlacement); err != nil {
		return err
	}
	if err := declareBenchAddOn(ctx, f.c); err != nil {
		return err
	}
	counted, err := f.withAcceptedAgent(ctx)
	if err != nil {
		return err
	}
	track, err := trackAddOns(ctx, f, counted, &cl)
	if err != nil {
		return err
	}
	reqBefore := f.requests(ctx)
	ctlBefore, err := f.reconciles(ctx)
	if err != nil {
		return err
	}
	cpuBefore, _, err := f.hub.cpu()
	if err != nil {
		return err
	}
	stopProfiles := f.profileDuring(ctx, "addons", time.Minute)
	defer stopProfiles()
	started := time.Now()
	if _, err := flotilla(ctx, "addon", "enable", "--kubeconfig", f.hub.Kubeconfig, "--names", benchAddOn, "--placement", addonsNamespace+"/"+addonsPlacement); err != nil {
		return err
	}
	if err := track.wait(ctx, 15*time.Minute); err != nil {
		return fmt.Errorf("%w\n%s", err, saveOutput(f.hub, nil))
	}
	took := time.Since(started)
	cpuAfter, _, err := f.hub.cpu()
	if err != nil {
		return err
	}
	track.print(started)
	row(fmt.Sprintf("%d clusters: enable → every ManagedClusterAddOn Available", len(counted)), seconds(took), "< 120 s for 1,000")
	row("hub CPU while enabling", cores(cpuAfter-cpuBefore, took), "")
	if ctlAfter, err := f.reconciles(ctx); err == nil {
		for _, name := range []string{"addon-manager", "addon-template", "addon-csr"} {
			d := ctlAfter[name].minus(ctlBefore[name])
			row(fmt.Sprintf("controller %s: reconciles, per cluster / time in them", name),
				fmt.Sprintf("%.0f, %.2f / %.1f s", d.count, d.count/float64(n), d.seconds), "")
		}
	}
	if reqBefore != nil {
		if after := f.requests(ctx); after != nil {
			printRequests("enable", reqBefore, after, float64(n)/10, n)
			approvals := after["PUT certificatesigningrequests/approval"] - reqBefore["PUT certificatesigningrequests/approval"]
			row("CSR approvals per cluster", fmt.Sprintf("%.2f", approvals/float64(n)), "≤ 1")
			workWrites := 0.0
			for _, verb := range []string{"POST", "PUT", "PATCH"} {
				workWrites += after[verb+" manifestworks"] - reqBefore[verb+" manifestworks"]
			}
			row("ManifestWork writes per cluster (create, update, patch; the agents' finalizer patch included)", fmt.Sprintf("%.2f", workWrites/float64(n)), "")
		}
	}
	return printAddOnObjects(ctx, f.c, n)
}

// startAddOnFleet starts the hub (serving its controllers' metrics), joins
// n hollow clusters that do the add-on agent's side, accepts them and
// waits until they are Available and in the default ClusterSet.
func startAddOnFleet(ctx context.Context, e *env, n int, cl *cleanups) (*addOnFleet, error) {
	f := &addOnFleet{fleet: &fleet{names: clusterNames("hollow", n)}}
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	metricsAddr := "127.0.0.1:" + strconv.Itoa(port)
	// The release hub, or with -fleet-hub pprof the pprof hub (for
	// -pprof-dir's profiles of the enable).
	binDir, dataDir, args := e.binDir, filepath.Join(e.workDir, "addons-hub"), append(hubArgs(), "--metrics-bind-address", metricsAddr)
	var pprofDirs []string
	switch *fleetHubMode {
	case "release":
	case "pprof":
		bin, err := buildPprofHub(ctx, e)
		if err != nil {
			return nil, err
		}
		binDir, args, pprofDirs = filepath.Dir(bin), append(args, "--mode", "all"), []string{dataDir}
	default:
		return nil, fmt.Errorf("-fleet-hub %q: the addons benchmark runs release or pprof", *fleetHubMode)
	}
	p, err := framework.StartHubProcess(ctx, binDir, dataDir, 2*time.Minute, args...)
	if err != nil {
		return nil, err
	}
	f.hub = &hubUnderTest{HubProcess: p, pprofDirs: pprofDirs}
	cl.add(f.hub.Stop)
	f.metrics = "http://" + metricsAddr + "/metrics"
	join, err := initHub(ctx, f.hub.HubProcess)
	if err != nil {
		return nil, err
	}
	bootstrap, err := bootstrapKubeconfig(f.hub.Kubeconfig, join.URL, join.Token, filepath.Join(e.workDir, "addons-bootstrap.kubeconfig"))
	if err != nil {
		return nil, err
	}
	if f.cfg, err = clientcmd.BuildConfigFromFlags("", f.hub.Kubeconfig); err != nil {
		return nil, err
	}
	f.cfg.QPS, f.cfg.Burst = 500, 1000
	if f.c, err = client.New(f.cfg, client.Options{Scheme: hub.Scheme()}); err != nil {
		return nil, err
	}
	started := time.Now()
	addOns := &hollowAddOns{expiration: addonsCSRExpiration}
	stop, err := startHollowAgentsWith(ctx, f.names, bootstrap, f.cfg, addOns.hooks())
	if err != nil {
		return nil, err
	}
	cl.add(stop)
	if _, err := acceptAll(ctx, f.hub.HubProcess, f.c, f.names); err != nil {
		return nil, err
	}
	inSet := func(mc *clusterv1.ManagedCluster) bool {
		return mc.Labels[clusterv1beta2.ClusterSetLabel] == clusterv1beta2.DefaultManagedClusterSetName
	}
	if err := waitAllClusters(ctx, f.c, f.names, "in the default set", 30*time.Minute, inSet); err != nil {
		return nil, err
	}
	row(fmt.Sprintf("%d hollow clusters joined, accepted, Available", n), seconds(time.Since(started)), "")
	return f, nil
}

// withAcceptedAgent waits up to two minutes for the hub to record every
// cluster's accepted agent (its join CSR approver may still be working
// through a fleet's approvals when the clusters are Available), returns
// the clusters whose agent it recorded, the ones whose add-on CSRs it
// approves, and prints how many have none (0 since the hub records an
// agent that reported Joined before the hub looked at its join CSR,
// hub/registration/csr_record.go; before, about half of 1,000 clusters
// accepted at once). Those are left out of the add-on's figures.
func (f *addOnFleet) withAcceptedAgent(ctx context.Context) (map[string]bool, error) {
	started := time.Now()
	if err := waitAllClusters(ctx, f.c, f.names, "with an accepted agent recorded", 2*time.Minute, func(mc *clusterv1.ManagedCluster) bool {
		return mc.Annotations[identity.AcceptedAgentAnnotation] != ""
	}); err == nil {
		row("every cluster's accepted agent recorded, after all Available", seconds(time.Since(started)), "")
	}
	list := &clusterv1.ManagedClusterList{}
	if err := f.c.List(ctx, list); err != nil {
		return nil, err
	}
	counted := map[string]bool{}
	for _, mc := range list.Items {
		if mc.Annotations[identity.AcceptedAgentAnnotation] != "" {
			counted[mc.Name] = true
		}
	}
	row("clusters without an accepted agent recorded (left out)", fmt.Sprint(len(f.names)-len(counted)), "0")
	return counted, nil
}

// addOnFleet is the add-on benchmark's hub and hollow clusters.
type addOnFleet struct {
	*fleet
	// metrics is the URL of the hub controllers' metrics.
	metrics string
}

// reconciled is a controller's reconciles so far and the seconds they took.
type reconciled struct{ count, seconds float64 }

func (r reconciled) minus(o reconciled) reconciled {
	return reconciled{r.count - o.count, r.seconds - o.seconds}
}

// reconciles reads, from the hub's controller metrics, each controller's
// reconciles and the time spent in them.
func (f *addOnFleet) reconciles(ctx context.Context) (map[string]reconciled, error) {
	body, err := get(ctx, f.metrics)
	if err != nil {
		return nil, fmt.Errorf("read the hub controllers' metrics: %w", err)
	}
	defer body.Close()
	text, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	out := map[string]reconciled{}
	for l, v := range samples(string(text), "controller_runtime_reconcile_total") {
		r := out[l["controller"]]
		r.count += v
		out[l["controller"]] = r
	}
	for l, v := range samples(string(text), "controller_runtime_reconcile_time_seconds_sum") {
		r := out[l["controller"]]
		r.seconds += v
		out[l["controller"]] = r
	}
	return out, nil
}

// declareBenchAddOn declares the benchmark's template add-on, installed by
// hand until `flotilla addon enable --placement` points it at the Placement.
func declareBenchAddOn(ctx context.Context, c client.Client) error {
	a, ns := benchAddOn, addon.DefaultInstallNamespace
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: a + "-hub"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
	}}
	labels := map[string]string{"app": a}
	deployment := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: a + "-agent"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "agent", Image: "quay.io/example/hello:v1",
					Args: []string{"--cluster-name={{CLUSTER_NAME}}", "--hub-kubeconfig={{HUB_KUBECONFIG}}"},
				}}},
			},
		},
	}
	namespace := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: ns}}
	template := &addonv1alpha1.AddOnTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: a + "-0.1.0"},
		Spec: addonv1alpha1.AddOnTemplateSpec{
			AddonName: a,
			AgentSpec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Object: namespace}},
				{RawExtension: runtime.RawExtension{Object: deployment}},
			}}},
			Registration: []addonv1alpha1.RegistrationSpec{{Type: "KubeClient", KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{
				HubPermissions: []addonv1alpha1.HubPermissionConfig{{Type: "CurrentCluster", CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role.Name}}},
			}}},
		},
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: a},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []addonv1alpha1.ConfigMeta{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates},
				DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: template.Name},
			}},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
		},
	}
	for _, obj := range []client.Object{role, template, cma} {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("declare add-on %s: create %T %s: %w", a, obj, obj.GetName(), err)
		}
	}
	return nil
}

// addOnTracker watches the benchmark add-on's ManagedClusterAddOns through
// one informer and remembers when the count of those that exist, are
// registered (ClusterCertificateRotated), applied (ManifestApplied) and
// Available first reached each milestone.
type addOnTracker struct {
	mu    sync.Mutex
	state map[string][4]bool
	count [4]int
	// at[i] is when count[i] first reached want.
	at [4]time.Time
	// counted are the clusters counted; want is how many.
	counted map[string]bool
	want    int
}

var addOnMilestones = [4]string{"exists", "registered (ClusterCertificateRotated)", "ManifestApplied", "Available"}

func trackAddOns(ctx context.Context, f *addOnFleet, counted map[string]bool, cl *cleanups) (*addOnTracker, error) {
	t := &addOnTracker{state: map[string][4]bool{}, counted: counted, want: len(counted)}
	c, err := cache.New(f.cfg, cache.Options{Scheme: hub.Scheme(), DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, err
	}
	inf, err := c.GetInformer(ctx, &addonv1alpha1.ManagedClusterAddOn{})
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(addOnEvents{t}); err != nil {
		return nil, err
	}
	cacheCtx, stop := context.WithCancel(ctx)
	cl.add(stop)
	go func() { _ = c.Start(cacheCtx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the add-on tracker's cache did not sync")
	}
	return t, nil
}

func (t *addOnTracker) observe(mca *addonv1alpha1.ManagedClusterAddOn, gone bool) {
	if mca.Name != benchAddOn || !t.counted[mca.Namespace] {
		return
	}
	var now [4]bool
	if !gone {
		now = [4]bool{true,
			meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionClusterCertificateRotated),
			meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionManifestApplied),
			meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionAvailable)}
	}
	at := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.state[mca.Namespace]
	t.state[mca.Namespace] = now
	for i := range now {
		switch {
		case now[i] && !was[i]:
			t.count[i]++
			if t.count[i] == t.want && t.at[i].IsZero() {
				t.at[i] = at
			}
		case !now[i] && was[i]:
			t.count[i]--
		}
	}
}

// wait waits until every cluster's add-on is Available.
func (t *addOnTracker) wait(ctx context.Context, timeout time.Duration) error {
	return waitUntil(ctx, timeout, func() (bool, string) {
		t.mu.Lock()
		defer t.mu.Unlock()
		state := ""
		for i, m := range addOnMilestones {
			state += fmt.Sprintf("%s %d/%d; ", m, t.count[i], t.want)
		}
		return !t.at[3].IsZero(), state
	})
}

func (t *addOnTracker) print(started time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, m := range addOnMilestones {
		took := fmt.Sprintf("not reached (%d)", t.count[i])
		if !t.at[i].IsZero() {
			took = seconds(t.at[i].Sub(started))
		}
		row(fmt.Sprintf("%d clusters: enable → every ManagedClusterAddOn %s", t.want, m), took, "")
	}
}

type addOnEvents struct{ t *addOnTracker }

func (h addOnEvents) OnAdd(obj any, _ bool) {
	if mca, ok := obj.(*addonv1alpha1.ManagedClusterAddOn); ok {
		h.t.observe(mca, false)
	}
}

func (h addOnEvents) OnUpdate(_, obj any) { h.OnAdd(obj, false) }

func (h addOnEvents) OnDelete(obj any) {
	if mca, ok := obj.(*addonv1alpha1.ManagedClusterAddOn); ok {
		h.t.observe(mca, true)
	}
}

// printAddOnObjects prints what the hub holds for the add-on per cluster:
// its ManifestWorks, its CSRs and how many of them were approved.
func printAddOnObjects(ctx context.Context, c client.Client, n int) error {
	works := &workv1.ManifestWorkList{}
	if err := c.List(ctx, works, client.MatchingLabels{addon.AddOnNameLabel: benchAddOn}); err != nil {
		return err
	}
	csrs := &certificatesv1.CertificateSigningRequestList{}
	if err := c.List(ctx, csrs, client.MatchingLabels{addon.AddOnNameLabel: benchAddOn}); err != nil {
		return err
	}
	approved := 0
	for _, csr := range csrs.Items {
		for _, cond := range csr.Status.Conditions {
			if cond.Type == certificatesv1.CertificateApproved {
				approved++
			}
		}
	}
	per := func(k int) string { return fmt.Sprintf("%d (%.2f per cluster)", k, float64(k)/float64(n)) }
	row("ManifestWorks of the add-on", per(len(works.Items)), "≤ 1 per cluster")
	row("CSRs of the add-on / approved", per(len(csrs.Items))+" / "+per(approved), "≤ 1 approval per cluster")
	return nil
}
