package template

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// workSizeLimit is how much manifest data one deploy work holds: 80 % of
// the 500 KiB a ManifestWork may be, as OCM packs them.
const workSizeLimit = 400 * 1024

// RenderedHashAnnotation on a work is the hash of the spec, labels and
// config-spec-hash this controller wrote, so that a work is rewritten only
// when what it would write changed (the API server defaults fields of a
// work's spec, which a comparison with the stored work would see as changes).
const RenderedHashAnnotation = "addon.flotilla.io/rendered-hash"

// identifier is the resource identifier of a manifest in a work.
func identifier(u *unstructured.Unstructured) workv1.ResourceIdentifier {
	gvk := u.GroupVersionKind()
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return workv1.ResourceIdentifier{Group: gvk.Group, Resource: plural.Resource, Name: u.GetName(), Namespace: u.GetNamespace()}
}

// configSpecHash is the config-spec-hash annotation of mca's works: each
// desired config's key and spec hash, "" when the MCA has no configs.
func configSpecHash(mca *addonv1alpha1.ManagedClusterAddOn) string {
	m := addon.ConfigHashes(mca.Status.ConfigReferences)
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// buildWorks packs the deploy objects into works of at most workSizeLimit,
// and the hooks into the pre-delete work (nil without hooks).
func buildWorks(mca *addonv1alpha1.ManagedClusterAddOn, tmpl *addonv1alpha1.AddOnTemplate, objs []object) (deploy []*workv1.ManifestWork, hook *workv1.ManifestWork, err error) {
	hashes := configSpecHash(mca)
	var (
		cur  *workv1.ManifestWork
		size int
	)
	for _, o := range objs {
		if o.hook {
			continue
		}
		ms, err := manifestsOf([]object{o})
		if err != nil {
			return nil, nil, err
		}
		if cur == nil || size > 0 && size+len(ms[0].Raw) > workSizeLimit {
			cur = newWork(mca, addon.DeployWorkName(mca.Name, len(deploy)), hashes)
			deploy, size = append(deploy, cur), 0
		}
		size += len(ms[0].Raw)
		cur.Spec.Workload.Manifests = append(cur.Spec.Workload.Manifests, ms[0])
		id := identifier(o.obj)
		if _, ok := workload(o.obj); ok {
			cur.Spec.ManifestConfigs = append(cur.Spec.ManifestConfigs, wellKnown(id))
		}
		if _, orphan := o.obj.GetAnnotations()[addon.DeletionOrphanAnnotation]; orphan {
			if cur.Spec.DeleteOption == nil {
				cur.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan, SelectivelyOrphan: &workv1.SelectivelyOrphan{}}
			}
			cur.Spec.DeleteOption.SelectivelyOrphan.OrphaningRules = append(cur.Spec.DeleteOption.SelectivelyOrphan.OrphaningRules, workv1.OrphaningRule(id))
		}
	}
	mergeTemplateConfigs(deploy, tmpl.Spec.AgentSpec.ManifestConfigs)
	for _, o := range objs {
		if !o.hook {
			continue
		}
		if hook == nil {
			hook = newWork(mca, addon.PreDeleteWorkName(mca.Name), "")
		}
		ms, err := manifestsOf([]object{o})
		if err != nil {
			return nil, nil, err
		}
		hook.Spec.Workload.Manifests = append(hook.Spec.Workload.Manifests, ms[0])
		hook.Spec.ManifestConfigs = append(hook.Spec.ManifestConfigs, wellKnown(identifier(o.obj)))
	}
	for _, w := range append(append([]*workv1.ManifestWork(nil), deploy...), hook) {
		if w != nil {
			stampRenderedHash(w)
		}
	}
	return deploy, hook, nil
}

func newWork(mca *addonv1alpha1.ManagedClusterAddOn, name, hashes string) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{
		Namespace: mca.Namespace, Name: name,
		Labels: map[string]string{addon.AddOnNameLabel: mca.Name},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "ManagedClusterAddOn",
			Name: mca.Name, UID: mca.UID, Controller: ptr.To(true),
		}},
	}}
	if hashes != "" {
		w.Annotations = map[string]string{addon.ConfigSpecHashAnnotation: hashes}
	}
	return w
}

func wellKnown(id workv1.ResourceIdentifier) workv1.ManifestConfigOption {
	return workv1.ManifestConfigOption{
		ResourceIdentifier: id,
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
		FeedbackScrapeType: "Poll",
	}
}

// mergeTemplateConfigs adds the template's own manifestConfigs to the work
// holding the manifest each names (the first work when none does), merged
// with the well-known feedback the work asks for that manifest.
func mergeTemplateConfigs(works []*workv1.ManifestWork, configs []workv1.ManifestConfigOption) {
	if len(works) == 0 {
		return
	}
next:
	for _, c := range configs {
		for _, w := range works {
			for i := range w.Spec.ManifestConfigs {
				have := &w.Spec.ManifestConfigs[i]
				if have.ResourceIdentifier != c.ResourceIdentifier {
					continue
				}
				rules := have.FeedbackRules
				for _, r := range c.FeedbackRules {
					if r.Type != workv1.WellKnownStatusType {
						rules = append(rules, r)
					}
				}
				merged := *c.DeepCopy()
				merged.FeedbackRules = rules
				if merged.FeedbackScrapeType == "" {
					merged.FeedbackScrapeType = have.FeedbackScrapeType
				}
				*have = merged
				continue next
			}
		}
		works[0].Spec.ManifestConfigs = append(works[0].Spec.ManifestConfigs, *c.DeepCopy())
	}
}

// stampRenderedHash records the hash of what w says in its annotation.
func stampRenderedHash(w *workv1.ManifestWork) {
	b, _ := json.Marshal(struct {
		Spec        workv1.ManifestWorkSpec
		Labels      map[string]string
		Annotations map[string]string
		Owners      []metav1.OwnerReference
	}{w.Spec, w.Labels, w.Annotations, w.OwnerReferences})
	sum := sha256.Sum256(b)
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[RenderedHashAnnotation] = hex.EncodeToString(sum[:])
}
