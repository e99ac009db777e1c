package addon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// Reconciler is the generic add-on manager: one reconcile per add-on name
// handles its ClusterManagementAddOn and every ManagedClusterAddOn of that
// name, so that a rollout sees all of its clusters at once.
type Reconciler struct {
	Client  client.Client
	Configs *ConfigReader
	// Now is the clock (time.Now unless a test sets it).
	Now func() time.Time
}

// scope is what the phases of one reconcile share.
type scope struct {
	name string
	// cma is nil when no ClusterManagementAddOn declares the add-on;
	// cmaBefore is it as read.
	cma, cmaBefore *addonv1alpha1.ClusterManagementAddOn
	// managed: the hub's generic manager acts on the add-on (lifecycle
	// annotation absent or addon-manager).
	managed bool
	// mcas are the add-on's ManagedClusterAddOns by cluster namespace,
	// being edited; before holds them as read.
	mcas   map[string]*addonv1alpha1.ManagedClusterAddOn
	before map[string]*addonv1alpha1.ManagedClusterAddOn
	// placements are the install strategy's placements, in order;
	// nodeOf is the placement that configures each chosen cluster (the
	// last one that chose it).
	placements []*placementNode
	nodeOf     map[string]*placementNode
	// defaults are the CMA's default configs with their spec hashes;
	// desired the effective configs of each ManagedClusterAddOn.
	defaults []addonv1alpha1.ConfigReference
	desired  map[string][]addonv1alpha1.ConfigReference
	// problems say, per cluster namespace, why its configs cannot be read.
	problems map[string][]string
	// unsupported is, per cluster namespace, the first config type of the
	// MCA's spec.configs that the add-on does not list as supported.
	unsupported map[string]addonv1alpha1.ConfigGroupResource
	configs     *configCache
	now         time.Time
}

type phase func(ctx context.Context, s *scope) (ctrl.Result, error)

// Reconcile brings one add-on's ManagedClusterAddOns and the status of its
// ClusterManagementAddOn in line, writing each object at most once.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	s, err := r.load(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	result := ctrl.Result{}
	for _, p := range []phase{r.install, r.own, r.resolveConfigs, r.configure, r.progress, r.hubConditions} {
		res, err := p(ctx, s)
		if err != nil {
			errs = append(errs, err)
			break
		}
		result = lowest(result, res)
	}
	errs = append(errs, r.write(ctx, s)...)
	return result, kerrors.NewAggregate(errs)
}

// load reads the add-on's ClusterManagementAddOn and ManagedClusterAddOns.
func (r *Reconciler) load(ctx context.Context, name string) (*scope, error) {
	s := &scope{name: name, mcas: map[string]*addonv1alpha1.ManagedClusterAddOn{}, before: map[string]*addonv1alpha1.ManagedClusterAddOn{},
		nodeOf: map[string]*placementNode{}, desired: map[string][]addonv1alpha1.ConfigReference{},
		problems: map[string][]string{}, unsupported: map[string]addonv1alpha1.ConfigGroupResource{}, now: r.now()}
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: name}, cma); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("get ClusterManagementAddOn %s: %w", name, err)
	default:
		s.cma, s.cmaBefore = cma, cma.DeepCopy()
		lifecycle := cma.Annotations[addon.LifecycleAnnotation]
		s.managed = cma.DeletionTimestamp.IsZero() && (lifecycle == "" || lifecycle == addon.LifecycleAddOnManager)
	}
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{nameIndex: name}); err != nil {
		return nil, fmt.Errorf("list the ManagedClusterAddOns of add-on %s: %w", name, err)
	}
	for i := range list.Items {
		mca := &list.Items[i]
		s.mcas[mca.Namespace], s.before[mca.Namespace] = mca, mca.DeepCopy()
	}
	s.configs = r.Configs.forReconcile()
	return s, nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// clusters are the namespaces of s's ManagedClusterAddOns, sorted.
func (s *scope) clusters() []string {
	out := make([]string, 0, len(s.mcas))
	for ns := range s.mcas {
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}

// live are s's ManagedClusterAddOns that are not being deleted, by
// cluster namespace in order.
func (s *scope) live() []*addonv1alpha1.ManagedClusterAddOn {
	var out []*addonv1alpha1.ManagedClusterAddOn
	for _, ns := range s.clusters() {
		if mca := s.mcas[ns]; mca.DeletionTimestamp.IsZero() {
			out = append(out, mca)
		}
	}
	return out
}

func lowest(a, b ctrl.Result) ctrl.Result {
	if b.RequeueAfter > 0 && (a.RequeueAfter == 0 || b.RequeueAfter < a.RequeueAfter) {
		a.RequeueAfter = b.RequeueAfter
	}
	return a
}

// isTemplate says whether configs make the add-on a template add-on,
// which the hub deploys itself.
func isTemplate(configs []addonv1alpha1.ConfigReference) bool {
	return slices.ContainsFunc(configs, func(c addonv1alpha1.ConfigReference) bool {
		return c.Group == addon.Group && c.Resource == addon.ConfigResourceTemplates
	})
}

// joinProblems lists what is wrong with a cluster's configs.
func joinProblems(p []string) string { return strings.Join(p, "; ") }
