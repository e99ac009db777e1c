package addon

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// progress sets Progressing on every ManagedClusterAddOn from its deploy
// ManifestWorks (whoever deploys the add-on: the hub for template add-ons,
// an addon-framework manager otherwise) and, once they all carry the
// desired configs' hashes and are Applied and Available, records the
// desired configs as lastAppliedConfig.
func (r *Reconciler) progress(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.managed {
		return ctrl.Result{}, nil
	}
	for _, mca := range s.live() {
		c := metav1.Condition{Type: addon.ConditionProgressing, ObservedGeneration: mca.Generation}
		if gr, bad := s.unsupported[mca.Namespace]; bad {
			c.Status, c.Reason = metav1.ConditionFalse, addon.ReasonUnsupported
			c.Message = fmt.Sprintf("Configuration with gvr %s/%s is not supported for this addon", gr.Group, gr.Resource)
			meta.SetStatusCondition(&mca.Status.Conditions, c)
			continue
		}
		reason, message, err := r.progressOf(ctx, mca)
		switch {
		case err != nil:
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, addon.ReasonFailed, err.Error()
		case reason == addon.ReasonProgressing:
			c.Status, c.Reason, c.Message = metav1.ConditionTrue, reason, "progressing... "+message
		case reason == addon.ReasonCompleted:
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, reason, addon.MessageCompleted
			for i := range mca.Status.ConfigReferences {
				mca.Status.ConfigReferences[i].LastAppliedConfig = mca.Status.ConfigReferences[i].DesiredConfig.DeepCopy()
			}
		default:
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, reason, message
		}
		meta.SetStatusCondition(&mca.Status.Conditions, c)
	}
	return ctrl.Result{}, nil
}

// progressOf says where mca's deployment stands: a Progressing reason
// and what it waits for.
func (r *Reconciler) progressOf(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) (reason, message string, err error) {
	if !deployerWrote(mca, addon.ConditionManifestApplied) {
		return addon.ReasonWaitingManifest, addon.MessageWaitingManifest, nil
	}
	hosting := mca.Annotations[addon.HostingClusterAnnotation]
	if hosting != "" && !deployerWrote(mca, addon.ConditionHostingManifestApplied) {
		return addon.ReasonWaitingHosting, addon.MessageWaitingHosting, nil
	}
	works := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, works, client.InNamespace(mca.Namespace), client.MatchingLabels{addon.AddOnNameLabel: mca.Name}); err != nil {
		return "", "", fmt.Errorf("list the ManifestWorks of the add-on: %w", err)
	}
	var deploy []workv1.ManifestWork
	for _, w := range works.Items {
		if _, other := w.Labels[addon.AddOnNamespaceLabel]; !other {
			deploy = append(deploy, w)
		}
	}
	if hosting != "" {
		hosted := &workv1.ManifestWorkList{}
		if err := r.Client.List(ctx, hosted, client.InNamespace(hosting), client.MatchingLabels{addon.AddOnNameLabel: mca.Name, addon.AddOnNamespaceLabel: mca.Namespace}); err != nil {
			return "", "", fmt.Errorf("list the ManifestWorks of the add-on on hosting cluster %s: %w", hosting, err)
		}
		deploy = append(deploy, hosted.Items...)
	}
	if len(deploy) == 0 {
		return addon.ReasonProgressing, "no addon works", nil
	}
	want := hashMap(mca.Status.ConfigReferences)
	for i := range deploy {
		w := &deploy[i]
		if strings.HasPrefix(w.Name, addon.PreDeleteWorkName(mca.Name)) {
			continue
		}
		if !workCarries(w, want, len(mca.Status.ConfigReferences)) {
			return addon.ReasonProgressing, "mca and work configs mismatch", nil
		}
		if !workReady(w) {
			return addon.ReasonProgressing, "work is not ready", nil
		}
	}
	return addon.ReasonCompleted, "", nil
}

// deployerWrote says whether the add-on's deploying manager wrote
// condition t (the hub's own AddOnManagerNotRunning does not count).
func deployerWrote(mca *addonv1alpha1.ManagedClusterAddOn, t string) bool {
	c := meta.FindStatusCondition(mca.Status.Conditions, t)
	return c != nil && !ours(c.Reason)
}

// hashMap is the config-spec-hash annotation a deploy work carries for
// refs: config key → desired spec hash; nil when a hash is missing.
func hashMap(refs []addonv1alpha1.ConfigReference) map[string]string {
	for _, r := range refs {
		if r.DesiredConfig == nil || r.DesiredConfig.SpecHash == "" {
			return nil
		}
	}
	return addon.ConfigHashes(refs)
}

// workCarries says whether w was built from the desired configs: its
// config-spec-hash annotation equals want (a work without the annotation
// matches only an add-on without configs).
func workCarries(w *workv1.ManifestWork, want map[string]string, refs int) bool {
	raw, ok := w.Annotations[addon.ConfigSpecHashAnnotation]
	if !ok {
		return refs == 0
	}
	if want == nil {
		return false
	}
	got := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		return false
	}
	for _, v := range got {
		if v == "" {
			return false
		}
	}
	return maps.Equal(got, want)
}

// workReady: Applied and Available, both for the work's generation.
func workReady(w *workv1.ManifestWork) bool {
	for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		c := meta.FindStatusCondition(w.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
			return false
		}
	}
	return true
}
