package console

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// The hub's add-on objects: one ClusterManagementAddOn per add-on, one
// ManagedClusterAddOn in each cluster's namespace it is on.
var (
	kindCMAs = kind{"ClusterManagementAddOns", addon.Group, "clustermanagementaddons", false, &addonv1alpha1.ClusterManagementAddOn{}}
	kindMCAs = kind{"ManagedClusterAddOns", addon.Group, "managedclusteraddons", true, &addonv1alpha1.ManagedClusterAddOn{}}
)

// addOnRow is one add-on of the fleet: how it is installed and where.
type addOnRow struct {
	Name, DisplayName string
	// RunBy is "hub" (the hub's add-on manager) or "own manager".
	RunBy string
	// Install is Manual, or the Placements the add-on is installed by.
	Install string
	// Clusters have it; Available of them report Available=True.
	Clusters, Available int
	// Rollout is the Placements install's progress, "" for Manual.
	Rollout, RolloutMessage string
}

// addOnsData is the add-ons view's model.
type addOnsData struct {
	Rows []addOnRow
	// Visible: the caller may see the ClusterManagementAddOns;
	// ClustersVisible: and the ManagedClusterAddOns everywhere, so the
	// counts are the fleet's.
	Visible, ClustersVisible bool
}

// addOnData is one add-on: its declaration and its state on each cluster.
type addOnData struct {
	Row      addOnRow
	Defaults []string
	Clusters []clusterAddOnRow
	// ClustersVisible: the caller sees the ManagedClusterAddOns everywhere.
	ClustersVisible bool
}

// clusterAddOnRow is an add-on on one cluster, in the add-on's view.
type clusterAddOnRow struct {
	Cluster, Health                  string
	Available, Degraded, Progressing string
	// Why is the reason and message of the first condition that is not
	// as a healthy add-on's.
	Why     string
	Configs string
}

// clusterAddOn is one add-on on the cluster view.
type clusterAddOn struct {
	Name string
	// Health is the add-on's state in one word; Why says what keeps it
	// from Available, from its conditions.
	Health, Why            string
	Namespace, HealthCheck string
	// Conditions: Available, Degraded and Progressing first.
	Conditions    []conditionView
	Configs       []configRefView
	Registrations []registrationView
	// Works are the add-on's ManifestWorks in the cluster's namespace,
	// the deploy works and the pre-delete hook's.
	Works []workView
}

// conditionView is a condition of an add-on with its status as a badge
// that says whether that status is a healthy add-on's.
type conditionView struct {
	metav1.Condition
	State badge
}

// conditionBadge shows c's status, marked good or bad as it is for an
// add-on: Degraded and Progressing are good when False (Progressing only
// once Completed).
func conditionBadge(c metav1.Condition) badge {
	status := string(c.Status)
	b := stateOf(status)
	switch {
	case c.Type == addon.ConditionDegraded && c.Status == metav1.ConditionFalse,
		c.Type == addon.ConditionProgressing && c.Reason == addon.ReasonCompleted:
		b = stateOf("True")
	case c.Type == addon.ConditionDegraded && c.Status == metav1.ConditionTrue,
		c.Type == addon.ConditionProgressing && c.Reason == addon.ReasonFailed:
		b = stateOf("False")
	case c.Type == addon.ConditionProgressing:
		b = stateOf("Progressing")
	}
	b.Text = status
	return b
}

// configRefView is a config of an add-on on a cluster: desired and applied.
type configRefView struct {
	Resource, Desired, Applied string
	// Current: the applied config is the desired one.
	Current bool
}

// registrationView is a certificate the add-on's agent holds, and the
// Secret on the managed cluster the agent keeps it in.
type registrationView struct {
	Signer, User, Groups, Secret string
}

// clusterAddOns is the cluster view's add-ons section.
type clusterAddOns struct {
	Visible bool
	AddOns  []clusterAddOn
}

func (s *server) addOns(r *http.Request) (*page, error) {
	d := &addOnsData{ClustersVisible: s.store.visibleIn(kindMCAs, "")}
	cmas := &addonv1alpha1.ClusterManagementAddOnList{}
	d.Visible = s.store.list(r.Context(), kindCMAs, cmas)
	mcas := s.managedAddOns(r.Context())
	for i := range cmas.Items {
		d.Rows = append(d.Rows, addOnRowOf(&cmas.Items[i], mcas))
	}
	slices.SortFunc(d.Rows, func(a, b addOnRow) int { return strings.Compare(a.Name, b.Name) })
	return &page{Title: "Add-ons", Section: "addons", Data: d}, nil
}

func (s *server) addOn(r *http.Request) (*page, error) {
	name := r.PathValue("name")
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if s.store.access[kindCMAs.resource].none() || s.store.cache.Get(r.Context(), client.ObjectKey{Name: name}, cma) != nil {
		return nil, fmt.Errorf("add-on %s: no such ClusterManagementAddOn, or your hub RBAC does not let you see it", name)
	}
	mcas := s.managedAddOns(r.Context())
	d := &addOnData{Row: addOnRowOf(cma, mcas), ClustersVisible: s.store.visibleIn(kindMCAs, "")}
	for _, sc := range cma.Spec.SupportedConfigs {
		if sc.DefaultConfig != nil {
			d.Defaults = append(d.Defaults, configName(sc.Resource, sc.DefaultConfig.Namespace, sc.DefaultConfig.Name))
		}
	}
	for i := range mcas {
		m := &mcas[i]
		if m.Name != name {
			continue
		}
		row := clusterAddOnRow{
			Cluster: m.Namespace, Health: addOnHealth(m), Available: condition(m.Status.Conditions, addon.ConditionAvailable),
			Degraded: condition(m.Status.Conditions, addon.ConditionDegraded), Progressing: progressing(m.Status.Conditions),
			Why: whyUnhealthy(m.Status.Conditions),
		}
		var cfgs []string
		for _, c := range viewConfigRefs(m.Status.ConfigReferences) {
			cfgs = append(cfgs, c.Desired)
		}
		row.Configs = strings.Join(cfgs, ", ")
		d.Clusters = append(d.Clusters, row)
	}
	slices.SortFunc(d.Clusters, func(a, b clusterAddOnRow) int { return strings.Compare(a.Cluster, b.Cluster) })
	return &page{Title: "Add-on " + name, Section: "addons", Data: d}, nil
}

// managedAddOns lists the ManagedClusterAddOns the caller sees.
func (s *server) managedAddOns(ctx context.Context) []addonv1alpha1.ManagedClusterAddOn {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	s.store.list(ctx, kindMCAs, list)
	return list.Items
}

func addOnRowOf(cma *addonv1alpha1.ClusterManagementAddOn, mcas []addonv1alpha1.ManagedClusterAddOn) addOnRow {
	row := addOnRow{Name: cma.Name, DisplayName: cma.Spec.AddOnMeta.DisplayName, RunBy: "hub", Install: addonv1alpha1.AddonInstallStrategyManual}
	if l := cma.Annotations[addon.LifecycleAnnotation]; l != "" && l != addon.LifecycleAddOnManager {
		row.RunBy = "own manager"
	}
	if cma.Spec.InstallStrategy.Type == addonv1alpha1.AddonInstallStrategyPlacements {
		var ps []string
		for _, p := range cma.Spec.InstallStrategy.Placements {
			ps = append(ps, p.Namespace+"/"+p.Name)
		}
		row.Install = "Placements " + strings.Join(ps, ", ")
		row.Rollout = "Pending"
		for _, ip := range cma.Status.InstallProgressions {
			c := meta.FindStatusCondition(ip.Conditions, addon.ConditionProgressing)
			if c == nil {
				continue
			}
			row.RolloutMessage = strings.TrimSpace(row.RolloutMessage + " " + ip.Namespace + "/" + ip.Name + ": " + c.Message)
			switch {
			case c.Status == metav1.ConditionTrue:
				row.Rollout = "Progressing"
			case c.Reason == addon.ReasonCompleted && row.Rollout != "Progressing":
				row.Rollout = "Complete"
			}
		}
	}
	for _, m := range mcas {
		if m.Name != cma.Name {
			continue
		}
		row.Clusters++
		if meta.IsStatusConditionTrue(m.Status.Conditions, addon.ConditionAvailable) {
			row.Available++
		}
	}
	return row
}

// clusterAddOnsOf reads the add-ons of cluster c and their works.
func (s *server) clusterAddOnsOf(ctx context.Context, c string) clusterAddOns {
	if !s.store.visibleIn(kindMCAs, c) {
		return clusterAddOns{}
	}
	d := clusterAddOns{Visible: true}
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	s.store.list(ctx, kindMCAs, list, client.InNamespace(c))
	works := &workv1.ManifestWorkList{}
	if s.store.visibleIn(kindWorks, c) {
		s.store.list(ctx, kindWorks, works, client.InNamespace(c), client.HasLabels{addon.AddOnNameLabel})
	}
	for i := range list.Items {
		a := viewClusterAddOn(&list.Items[i])
		for j := range works.Items {
			if works.Items[j].Labels[addon.AddOnNameLabel] == a.Name {
				a.Works = append(a.Works, viewWork(&works.Items[j]))
			}
		}
		slices.SortFunc(a.Works, func(x, y workView) int { return strings.Compare(x.Name, y.Name) })
		d.AddOns = append(d.AddOns, a)
	}
	slices.SortFunc(d.AddOns, func(a, b clusterAddOn) int { return strings.Compare(a.Name, b.Name) })
	return d
}

func viewClusterAddOn(m *addonv1alpha1.ManagedClusterAddOn) clusterAddOn {
	a := clusterAddOn{
		Name:        m.Name,
		Health:      addOnHealth(m),
		Why:         whyUnhealthy(m.Status.Conditions),
		Namespace:   installNamespace(m),
		HealthCheck: m.Status.HealthCheck.Mode,
		Configs:     viewConfigRefs(m.Status.ConfigReferences),
	}
	for _, c := range m.Status.Conditions {
		a.Conditions = append(a.Conditions, conditionView{Condition: c, State: conditionBadge(c)})
	}
	first := map[string]int{addon.ConditionAvailable: 1, addon.ConditionDegraded: 2, addon.ConditionProgressing: 3}
	slices.SortFunc(a.Conditions, func(x, y conditionView) int {
		return cmp.Or(cmp.Compare(cmp.Or(first[x.Type], 4), cmp.Or(first[y.Type], 4)), strings.Compare(x.Type, y.Type))
	})
	for _, r := range m.Status.Registrations {
		secret := addon.CustomSignerSecretName(m.Name, r.SignerName)
		if r.SignerName == addon.KubeAPIServerClientSigner {
			secret = addon.KubeconfigSecretName(m.Name)
		}
		a.Registrations = append(a.Registrations, registrationView{
			Signer: r.SignerName, User: r.Subject.User, Groups: strings.Join(r.Subject.Groups, ", "),
			Secret: a.Namespace + "/" + secret,
		})
	}
	return a
}

// addOnHealth is an add-on's state on a cluster in one word.
func addOnHealth(m *addonv1alpha1.ManagedClusterAddOn) string {
	conds := m.Status.Conditions
	switch {
	case m.DeletionTimestamp != nil:
		return "Deleting"
	case meta.IsStatusConditionTrue(conds, addon.ConditionDegraded):
		return "Degraded"
	case meta.IsStatusConditionTrue(conds, addon.ConditionAvailable):
		return "Available"
	case meta.IsStatusConditionFalse(conds, addon.ConditionAvailable):
		return "Unavailable"
	case meta.IsStatusConditionTrue(conds, addon.ConditionProgressing):
		return "Progressing"
	}
	return "Unknown"
}

// progressing says where the hub's rollout to the add-on is: Progressing,
// Complete, "—" before the hub said, else the reason it stands still
// (Failed, WaitingForManifestApplied, ConfigurationUnsupported...).
func progressing(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, addon.ConditionProgressing)
	switch {
	case c == nil:
		return "—"
	case c.Status == metav1.ConditionTrue:
		return "Progressing"
	case c.Reason == addon.ReasonCompleted:
		return "Complete"
	}
	return c.Reason
}

// installNamespace is where the add-on's agent runs, as the agent reads
// it: status.namespace, else the namespace asked for, else the default.
func installNamespace(m *addonv1alpha1.ManagedClusterAddOn) string {
	switch {
	case m.Status.Namespace != "":
		return m.Status.Namespace
	case m.Spec.InstallNamespace != "":
		return m.Spec.InstallNamespace
	case m.Annotations[addon.InstallNamespaceAnnotation] != "":
		return m.Annotations[addon.InstallNamespaceAnnotation]
	}
	return addon.DefaultInstallNamespace
}

func viewConfigRefs(refs []addonv1alpha1.ConfigReference) []configRefView {
	var out []configRefView
	for _, r := range refs {
		v := configRefView{Resource: r.Resource, Desired: "—", Applied: "—"}
		if c := r.DesiredConfig; c != nil {
			v.Desired = configName(r.Resource, c.Namespace, c.Name) + " " + shortHash(c.SpecHash)
		}
		if c := r.LastAppliedConfig; c != nil {
			v.Applied = configName(r.Resource, c.Namespace, c.Name) + " " + shortHash(c.SpecHash)
		}
		v.Current = r.DesiredConfig != nil && r.LastAppliedConfig != nil && *r.DesiredConfig == *r.LastAppliedConfig
		out = append(out, v)
	}
	return out
}

// healthy is, for each condition type that says why an add-on is not
// healthy, the status it has on a healthy add-on, in order of importance.
var healthy = []struct {
	typ    string
	status metav1.ConditionStatus
}{
	{addon.ConditionAvailable, metav1.ConditionTrue},
	{addon.ConditionDegraded, metav1.ConditionFalse},
	{addon.ConditionManifestApplied, metav1.ConditionTrue},
	{addon.ConditionRegistrationApplied, metav1.ConditionTrue},
	{addon.ConditionConfigured, metav1.ConditionTrue},
	{addon.ConditionClusterCertificateRotated, metav1.ConditionTrue},
	{addon.ConditionHookManifestCompleted, metav1.ConditionTrue},
}

// whyUnhealthy is "Type Reason: message" of the most important condition
// that is not as on a healthy add-on, then of a Progressing that has not
// completed; "" when there is none.
func whyUnhealthy(conds []metav1.Condition) string {
	for _, h := range healthy {
		if c := meta.FindStatusCondition(conds, h.typ); c != nil && c.Status != h.status {
			return conditionWhy(c)
		}
	}
	if c := meta.FindStatusCondition(conds, addon.ConditionProgressing); c != nil && c.Reason != addon.ReasonCompleted {
		return conditionWhy(c)
	}
	return ""
}

func conditionWhy(c *metav1.Condition) string {
	return strings.TrimSuffix(c.Type+" "+c.Reason+": "+c.Message, ": ")
}

// configName is RESOURCE/[NAMESPACE/]NAME.
func configName(resource, namespace, name string) string {
	if namespace == "" {
		return resource + "/" + name
	}
	return resource + "/" + namespace + "/" + name
}

// shortHash is the start of a spec hash, in brackets.
func shortHash(h string) string {
	if h == "" {
		return "(no hash)"
	}
	return "(" + h[:min(len(h), 12)] + ")"
}
