package addon

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// ConfigReader reads an add-on's configs, of any type, from the hub's
// cache, and watches each type the first time it reads one: a config's
// change then reconciles the add-ons.
type ConfigReader struct {
	Reader client.Reader
	Mapper meta.RESTMapper
	// Watch starts watching objects of a kind; called once per kind.
	Watch   func(obj client.Object) error
	watched sync.Map
}

// configRead is a config as read: its spec hash and generation, or why
// it could not be read.
type configRead struct {
	hash       string
	generation int64
	problem    string
}

// configCache reads each config once per reconcile.
type configCache struct {
	r    *ConfigReader
	seen map[string]configRead
}

func (r *ConfigReader) forReconcile() *configCache {
	return &configCache{r: r, seen: map[string]configRead{}}
}

// readTimeout bounds the wait for a new kind's cache to fill: a kind the
// hub may not list would otherwise hold the reconcile forever.
const readTimeout = 10 * time.Second

// read returns a config's spec hash; only a failure of the hub itself
// is an error, a config that cannot be read is a problem to report.
func (c *configCache) read(ctx context.Context, gr addonv1alpha1.ConfigGroupResource, ref addonv1alpha1.ConfigReferent) (configRead, error) {
	key := addon.ConfigKey(gr.Group, gr.Resource, ref.Namespace, ref.Name)
	if got, ok := c.seen[key]; ok {
		return got, nil
	}
	got, err := c.r.read(ctx, gr, ref)
	if err != nil {
		return got, err
	}
	c.seen[key] = got
	return got, nil
}

func (r *ConfigReader) read(ctx context.Context, gr addonv1alpha1.ConfigGroupResource, ref addonv1alpha1.ConfigReferent) (configRead, error) {
	what := fmt.Sprintf("config %s %s", schema.GroupResource{Group: gr.Group, Resource: gr.Resource}, objectName(ref))
	gvk, err := r.Mapper.KindFor(schema.GroupVersionResource{Group: gr.Group, Resource: gr.Resource})
	if err != nil {
		if meta.IsNoMatchError(err) {
			return configRead{problem: fmt.Sprintf("%s: the hub serves no resource %s; install its CRD or fix the reference", what, schema.GroupResource{Group: gr.Group, Resource: gr.Resource})}, nil
		}
		return configRead{}, fmt.Errorf("map %s: %w", what, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if _, done := r.watched.LoadOrStore(gvk, true); !done && r.Watch != nil {
		w := &unstructured.Unstructured{}
		w.SetGroupVersionKind(gvk)
		if err := r.Watch(w); err != nil {
			r.watched.Delete(gvk)
			return configRead{}, fmt.Errorf("watch %s: %w", gvk.Kind, err)
		}
	}
	readCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	switch err := r.Reader.Get(readCtx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); {
	case apierrors.IsNotFound(err):
		return configRead{problem: fmt.Sprintf("%s (%s) does not exist; create it, or change the reference", what, gvk.Kind)}, nil
	case err != nil:
		return configRead{problem: fmt.Sprintf("%s (%s) cannot be read by the hub: %v", what, gvk.Kind, err)}, nil
	}
	hash, err := addon.SpecHash(u.Object)
	if err != nil {
		return configRead{problem: fmt.Sprintf("%s: %v", what, err)}, nil
	}
	return configRead{hash: hash, generation: u.GetGeneration()}, nil
}

func objectName(ref addonv1alpha1.ConfigReferent) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

// resolveConfigs computes the desired configs, with spec hashes, at each
// level: the add-on's defaults, each placement's configs over them, and
// each ManagedClusterAddOn's spec.configs over those of the placement that
// chose its cluster (or the defaults). A level replaces the configs of
// every group and resource it names.
func (r *Reconciler) resolveConfigs(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.managed {
		return ctrl.Result{}, nil
	}
	var defaults []addonv1alpha1.AddOnConfig
	for _, sc := range s.cma.Spec.SupportedConfigs {
		if sc.DefaultConfig != nil {
			defaults = append(defaults, addonv1alpha1.AddOnConfig{ConfigGroupResource: sc.ConfigGroupResource, ConfigReferent: *sc.DefaultConfig})
		}
	}
	var err error
	if s.defaults, err = s.over(ctx, nil, defaults); err != nil {
		return ctrl.Result{}, err
	}
	for _, node := range s.placements {
		if node.desired, err = s.over(ctx, s.defaults, node.ref.Configs); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, mca := range s.live() {
		base := s.defaults
		if node := s.nodeOf[mca.Namespace]; node != nil {
			base = node.desired
		}
		desired, err := s.over(ctx, base, mca.Spec.Configs)
		if err != nil {
			return ctrl.Result{}, err
		}
		s.desired[mca.Namespace] = desired
		for _, d := range desired {
			if p := s.configs.seen[configKey(d)].problem; p != "" {
				s.problems[mca.Namespace] = append(s.problems[mca.Namespace], p)
			}
		}
		for _, c := range mca.Spec.Configs {
			if !slices.Contains(mca.Status.SupportedConfigs, c.ConfigGroupResource) {
				s.unsupported[mca.Namespace] = c.ConfigGroupResource
				break
			}
		}
	}
	refs := make([]addonv1alpha1.DefaultConfigReference, 0, len(s.defaults))
	for _, d := range s.defaults {
		refs = append(refs, addonv1alpha1.DefaultConfigReference{ConfigGroupResource: d.ConfigGroupResource, DesiredConfig: d.DesiredConfig.DeepCopy()})
	}
	s.cma.Status.DefaultConfigReferences = refs
	return ctrl.Result{}, nil
}

// over is base with configs in place of base's configs of the groups and
// resources that configs name, each with its spec hash and generation.
func (s *scope) over(ctx context.Context, base []addonv1alpha1.ConfigReference, configs []addonv1alpha1.AddOnConfig) ([]addonv1alpha1.ConfigReference, error) {
	if len(configs) == 0 {
		return base, nil
	}
	named := map[addonv1alpha1.ConfigGroupResource]bool{}
	for _, c := range configs {
		named[c.ConfigGroupResource] = true
	}
	var out []addonv1alpha1.ConfigReference
	for _, b := range base {
		if !named[b.ConfigGroupResource] {
			out = append(out, b)
		}
	}
	for _, c := range configs {
		got, err := s.configs.read(ctx, c.ConfigGroupResource, c.ConfigReferent)
		if err != nil {
			return nil, err
		}
		out = append(out, addonv1alpha1.ConfigReference{
			ConfigGroupResource: c.ConfigGroupResource, ConfigReferent: c.ConfigReferent,
			DesiredConfig:          &addonv1alpha1.ConfigSpecHash{ConfigReferent: c.ConfigReferent, SpecHash: got.hash},
			LastObservedGeneration: got.generation,
		})
	}
	return out, nil
}

func configKey(c addonv1alpha1.ConfigReference) string {
	return addon.ConfigKey(c.Group, c.Resource, c.DesiredConfig.Namespace, c.DesiredConfig.Name)
}
