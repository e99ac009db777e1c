package console

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

func clusterManagementAddOn(name string, placements ...string) *addonv1alpha1.ClusterManagementAddOn {
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual}}}
	for _, p := range placements {
		ns, n, _ := strings.Cut(p, "/")
		cma.Spec.InstallStrategy.Type = addonv1alpha1.AddonInstallStrategyPlacements
		cma.Spec.InstallStrategy.Placements = append(cma.Spec.InstallStrategy.Placements, addonv1alpha1.PlacementStrategy{PlacementRef: addonv1alpha1.PlacementRef{Namespace: ns, Name: n}})
	}
	return cma
}

func managedClusterAddOn(cluster, name string, conds ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{Conditions: conds}}
}

func cond(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

// The cluster view shows each add-on with its state, its conditions with
// their reasons, its configs desired and applied, its registrations with
// the Secret its agent keeps on the cluster, and the works the add-on's
// manager wrote; an unhealthy add-on says why.
func TestClusterViewShowsAddOns(t *testing.T) {
	hello := managedClusterAddOn("c1", "hello",
		cond(addon.ConditionAvailable, metav1.ConditionTrue, "ProbeAvailable", "hello add-on is available."),
		cond(addon.ConditionProgressing, metav1.ConditionFalse, addon.ReasonCompleted, "completed with no errors."),
		cond(addon.ConditionClusterCertificateRotated, metav1.ConditionTrue, addon.ReasonClientCertificateUpdated, "client certificate rotated"))
	hello.Status.Namespace = "hello-agents"
	hello.Status.HealthCheck.Mode = "Customized"
	hello.Status.Registrations = []addonv1alpha1.RegistrationConfig{
		{SignerName: addon.KubeAPIServerClientSigner, Subject: addonv1alpha1.Subject{User: addon.AgentUser("c1", "hello", "hello-agent"), Groups: addon.AgentGroups("c1", "hello")}},
		{SignerName: "example.com/signer", Subject: addonv1alpha1.Subject{User: "hello-signed"}},
	}
	tmpl := addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: "hello-0.1.0"}, SpecHash: "0123456789abcdef"}
	adc := addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "c1", Name: "cfg"}, SpecHash: "ffffeeeeddddcccc"}
	oldADC := adc
	oldADC.SpecHash = "aaaabbbbccccdddd"
	hello.Status.ConfigReferences = []addonv1alpha1.ConfigReference{
		{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates}, DesiredConfig: &tmpl, LastAppliedConfig: &tmpl},
		{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceDeploymentConfigs}, DesiredConfig: &adc, LastAppliedConfig: &oldADC},
	}
	broken := managedClusterAddOn("c1", "broken",
		cond(addon.ConditionAvailable, metav1.ConditionFalse, "ProbeUnavailable", "Deployment agents/broken-agent is not available: ReadyReplicas is 0"),
		cond(addon.ConditionManifestApplied, metav1.ConditionTrue, "AddonManifestApplied", "manifests of addon are applied successfully"))
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: addon.DeployWorkName("hello", 0), Labels: map[string]string{addon.AddOnNameLabel: "hello"}},
		Status: workv1.ManifestWorkStatus{Conditions: []metav1.Condition{cond(workv1.WorkApplied, metav1.ConditionTrue, "Applied", ""), cond(workv1.WorkAvailable, metav1.ConditionTrue, "Available", "")}}}
	other := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "plain"}}
	s, session, _ := serverWith(t, nil, managedCluster("c1", true, true, nil), managedCluster("c2", true, true, nil),
		clusterManagementAddOn("hello"), clusterManagementAddOn("broken"), hello, broken, work, other,
		managedClusterAddOn("c2", "elsewhere"))

	w := do(s, "GET", "/clusters/c1", testHost, session, nil, "")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /clusters/c1: %d %s", w.Code, w.Body.String())
	}
	body := w.Body.String()
	hs, bs := addOnSection(body, "hello"), addOnSection(body, "broken")
	for _, want := range []string{
		`<h3 id="addon-hello"><a href="/addons/hello">hello</a> <span class="health"><span class="badge ok"><span aria-hidden="true">✔</span> Available</span></span></h3>`,
		"Agent namespace on the cluster <code>hello-agents</code> · health check Customized",
		`flotilla describe addon hello --clusters c1`,
		`<tr data-condition="Available"><th scope="row">Available</th><td><span class="badge ok"><span aria-hidden="true">✔</span> True</span></td><td>ProbeAvailable</td><td>hello add-on is available.</td>`,
		`<tr data-condition="Progressing"><th scope="row">Progressing</th><td><span class="badge ok"><span aria-hidden="true">✔</span> False</span></td><td>Completed</td>`,
		`<th scope="row">addontemplates</th><td>addontemplates/hello-0.1.0 (0123456789ab)</td><td>addontemplates/hello-0.1.0 (0123456789ab)</td>`,
		`<th scope="row">addondeploymentconfigs</th><td>addondeploymentconfigs/c1/cfg (ffffeeeedddd)</td><td>addondeploymentconfigs/c1/cfg (aaaabbbbcccc) <span class="badge wait"><span aria-hidden="true">◐</span> Pending</span>`,
		`<th scope="row">kubernetes.io/kube-apiserver-client</th><td><code>system:open-cluster-management:cluster:c1:addon:hello:agent:hello-agent</code></td><td>system:open-cluster-management:cluster:c1:addon:hello, system:open-cluster-management:addon:hello</td><td><code>hello-agents/hello-hub-kubeconfig</code></td>`,
		`<code>hello-agents/hello-example.com-signer-client-cert</code>`,
		`<th scope="row"><a href="#work-addon-hello-deploy-0">addon-hello-deploy-0</a></th><td><span class="badge ok"><span aria-hidden="true">✔</span> True</span></td>`,
	} {
		if !strings.Contains(hs, want) {
			t.Errorf("add-on hello on c1 lacks %q:\n%s", want, hs)
		}
	}
	if strings.Contains(hs, `class="why"`) {
		t.Errorf("healthy add-on hello says why it is unhealthy:\n%s", hs)
	}
	if strings.Contains(hs, "plain") {
		t.Error("a work of no add-on is listed as hello's")
	}
	if i, j := strings.Index(hs, `data-condition="Available"`), strings.Index(hs, `data-condition="ClusterCertificateRotated"`); i > j {
		t.Error("Available is not the first condition")
	}
	for _, want := range []string{
		`<span class="badge bad"><span aria-hidden="true">✖</span> Unavailable</span>`,
		`<p class="why">Available ProbeUnavailable: Deployment agents/broken-agent is not available: ReadyReplicas is 0</p>`,
		"Agent namespace on the cluster <code>open-cluster-management-agent-addon</code> · health check —",
		"No registration", "No ManifestWork.",
	} {
		if !strings.Contains(bs, want) {
			t.Errorf("add-on broken on c1 lacks %q:\n%s", want, bs)
		}
	}
	if strings.Contains(body, "elsewhere") {
		t.Error("the view of c1 shows an add-on of c2")
	}
	if i, j := strings.Index(body, `data-addon="broken"`), strings.Index(body, `data-addon="hello"`); i > j {
		t.Error("add-ons are not in name order")
	}

	w = do(s, "GET", "/clusters/c2", testHost, session, nil, "")
	if !strings.Contains(w.Body.String(), `data-addon="elsewhere"`) || strings.Contains(w.Body.String(), `data-addon="hello"`) {
		t.Errorf("the view of c2 does not show its add-on alone:\n%s", addOnSection(w.Body.String(), "elsewhere"))
	}
}

// The add-ons view lists every declared add-on: who runs it, how it is
// installed, on how many clusters and how many of them report Available;
// an add-on's view shows each cluster's state and why it is unhealthy.
func TestAddOnsViews(t *testing.T) {
	own := clusterManagementAddOn("own")
	own.Annotations = map[string]string{addon.LifecycleAnnotation: addon.LifecycleSelf}
	byPlacement := clusterManagementAddOn("placed", "apps/prod")
	byPlacement.Status.InstallProgressions = []addonv1alpha1.InstallProgression{{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "apps", Name: "prod"},
		Conditions: []metav1.Condition{cond(addon.ConditionProgressing, metav1.ConditionTrue, addon.ReasonProgressing, "selected clusters 3. configured addons 1/3 progressing...")}}}
	available := cond(addon.ConditionAvailable, metav1.ConditionTrue, "ProbeAvailable", "placed add-on is available.")
	notYet := managedClusterAddOn("c3", "placed", cond(addon.ConditionManifestApplied, metav1.ConditionFalse, "ManifestWorkApplyFailed", "nothing was applied: manifest 1 does not render"),
		cond(addon.ConditionProgressing, metav1.ConditionFalse, addon.ReasonWaitingManifest, "waiting for the manifests"))
	s, session, _ := serverWith(t, nil, clusterManagementAddOn("idle"), own, byPlacement,
		managedClusterAddOn("c1", "placed", available, cond(addon.ConditionProgressing, metav1.ConditionFalse, addon.ReasonCompleted, "completed with no errors.")),
		managedClusterAddOn("c2", "placed", available), notYet, managedClusterAddOn("c1", "own"))

	w := do(s, "GET", "/addons", testHost, session, nil, "")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /addons: %d %s", w.Code, w.Body.String())
	}
	body := w.Body.String()
	for _, want := range []string{
		`<a href="/addons" aria-current="page">Add-ons</a>`,
		`<tr data-addon="idle"><th scope="row"><a href="/addons/idle">idle</a></th>
<td>the hub's add-on manager</td><td class="install">Manual</td>
<td class="clusters">0</td><td class="available">0 of 0</td>`,
		`<tr data-addon="own"><th scope="row"><a href="/addons/own">own</a></th>
<td>its own manager</td><td class="install">Manual</td>
<td class="clusters">1</td><td class="available">0 of 1</td>`,
		`<td class="install">Placements apps/prod</td>
<td class="clusters">3</td><td class="available">2 of 3</td>
<td><span class="badge wait"><span aria-hidden="true">◐</span> Progressing</span><br><small>apps/prod: selected clusters 3. configured addons 1/3 progressing...</small></td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the add-ons view lacks %q:\n%s", want, body)
		}
	}
	if i, j := strings.Index(body, `data-addon="own"`), strings.Index(body, `data-addon="placed"`); i > j {
		t.Error("add-ons are not in name order")
	}

	w = do(s, "GET", "/addons/placed", testHost, session, nil, "")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /addons/placed: %d %s", w.Code, w.Body.String())
	}
	body = w.Body.String()
	for _, want := range []string{
		"<dt>Installed</dt><dd>on the clusters of Placements apps/prod</dd>",
		`<tr data-cluster="c1"><th scope="row"><a href="/clusters/c1#addon-placed">c1</a></th><td class="health"><span class="badge ok"><span aria-hidden="true">✔</span> Available</span></td>`,
		`<td class="why">ManifestApplied ManifestWorkApplyFailed: nothing was applied: manifest 1 does not render</td>`,
		`<span class="badge unknown"><span aria-hidden="true">?</span> WaitingForManifestApplied</span>`,
		`<span class="badge ok"><span aria-hidden="true">✔</span> Complete</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the view of add-on placed lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, `data-cluster="c1"><th scope="row"><a href="/clusters/c1#addon-own"`) {
		t.Error("the view of add-on placed lists add-on own")
	}

	w = do(s, "GET", "/addons/nope", testHost, session, nil, "")
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "add-on nope: no such ClusterManagementAddOn") || !strings.Contains(w.Body.String(), `<a href="/addons">`) {
		t.Errorf("GET /addons/nope: %d, want 404 with the console's page leading back to the add-ons:\n%s", w.Code, w.Body.String())
	}
}

// What the caller's RBAC hides of the add-ons is said where it would be shown.
func TestAddOnsHiddenByRBAC(t *testing.T) {
	s, session, _ := serverWith(t, nil, managedCluster("c1", true, true, nil), clusterManagementAddOn("hello"),
		managedClusterAddOn("c1", "hello", cond(addon.ConditionAvailable, metav1.ConditionTrue, "ProbeAvailable", "")))
	s.store.access[kindMCAs.resource] = access{namespaces: []string{"c2"}}
	body := do(s, "GET", "/clusters/c1", testHost, session, nil, "").Body.String()
	if want := "Your hub RBAC does not let you see the ManagedClusterAddOns in namespace c1."; !strings.Contains(body, want) || strings.Contains(body, `data-addon="hello"`) {
		t.Errorf("the view of c1 lacks %q, or shows the add-on", want)
	}
	body = do(s, "GET", "/addons", testHost, session, nil, "").Body.String()
	if want := "Your hub RBAC does not let you see the ManagedClusterAddOns of every cluster"; !strings.Contains(body, want) {
		t.Errorf("the add-ons view lacks %q", want)
	}
	s.store.access[kindCMAs.resource] = access{}
	body = do(s, "GET", "/addons", testHost, session, nil, "").Body.String()
	if want := "Your hub RBAC does not let you list ClusterManagementAddOns."; !strings.Contains(body, want) {
		t.Errorf("the add-ons view lacks %q", want)
	}
}

// addOnSection is add-on a's section of a cluster page, for messages.
func addOnSection(body, a string) string {
	return regexp.MustCompile(`(?s)<section class="addon" data-addon="` + regexp.QuoteMeta(a) + `".*?</section>`).FindString(body)
}

// An add-on's state, the reason it gives for not being healthy, and where
// its rollout stands, from its conditions.
func TestAddOnStateFromConditions(t *testing.T) {
	deleting := metav1.Now()
	for _, tc := range []struct {
		name                     string
		conds                    []metav1.Condition
		deleting                 bool
		health, why, progressing string
	}{
		{name: "nothing reported", health: "Unknown", progressing: "—"},
		{name: "healthy", conds: []metav1.Condition{cond(addon.ConditionAvailable, "True", "ProbeAvailable", "ok"), cond(addon.ConditionProgressing, "False", addon.ReasonCompleted, "done")},
			health: "Available", progressing: "Complete"},
		{name: "degraded though available", conds: []metav1.Condition{cond(addon.ConditionAvailable, "True", "ProbeAvailable", ""), cond(addon.ConditionDegraded, "True", "Slow", "half the pods")},
			health: "Degraded", why: "Degraded Slow: half the pods", progressing: "—"},
		{name: "unavailable, and the manifests failed: availability first", conds: []metav1.Condition{cond(addon.ConditionManifestApplied, "False", "ManifestWorkApplyFailed", "bad"), cond(addon.ConditionAvailable, "False", "WorkNotApplied", "not applied")},
			health: "Unavailable", why: "Available WorkNotApplied: not applied", progressing: "—"},
		{name: "rolling out", conds: []metav1.Condition{cond(addon.ConditionProgressing, "True", addon.ReasonProgressing, "progressing... work is not ready")},
			health: "Progressing", why: "Progressing Progressing: progressing... work is not ready", progressing: "Progressing"},
		{name: "waiting for its manager", conds: []metav1.Condition{cond(addon.ConditionProgressing, "False", addon.ReasonWaitingManifest, "")},
			health: "Unknown", why: "Progressing WaitingForManifestApplied", progressing: "WaitingForManifestApplied"},
		{name: "being removed", conds: []metav1.Condition{cond(addon.ConditionAvailable, "True", "ProbeAvailable", ""), cond(addon.ConditionHookManifestCompleted, "False", "HookManifestIsNotCompleted", "hook running")},
			deleting: true, health: "Deleting", why: "HookManifestCompleted HookManifestIsNotCompleted: hook running", progressing: "—"},
	} {
		m := managedClusterAddOn("c1", "a", tc.conds...)
		if tc.deleting {
			m.DeletionTimestamp = &deleting
		}
		if got := addOnHealth(m); got != tc.health {
			t.Errorf("%s: health %q, want %q", tc.name, got, tc.health)
		}
		if got := whyUnhealthy(tc.conds); got != tc.why {
			t.Errorf("%s: why %q, want %q", tc.name, got, tc.why)
		}
		if got := progressing(tc.conds); got != tc.progressing {
			t.Errorf("%s: progressing %q, want %q", tc.name, got, tc.progressing)
		}
	}
}
