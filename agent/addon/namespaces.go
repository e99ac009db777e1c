package addon

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// RecordConfigMapName names the ConfigMap in Config.Namespace that holds,
// one key each, the namespaces the agent wrote add-on Secrets in.
const RecordConfigMapName = "flotilla-agent-addon-namespaces"

// namespaces are where the agent's add-on Secrets may be: the install
// namespaces given, else the default install namespace, those of the
// cluster's ManagedClusterAddOns and those recorded. The agent lists
// Secrets in these alone, never cluster-wide, as OCM's registration agent
// watches each add-on's install namespace.
func (r *runner) namespaces(ctx context.Context) []string {
	if len(r.cfg.InstallNamespaces) > 0 {
		return r.cfg.InstallNamespaces
	}
	set := map[string]bool{addon.DefaultInstallNamespace: true}
	mcas := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.hub.List(ctx, mcas, client.InNamespace(r.cfg.ClusterName)); err == nil {
		for i := range mcas.Items {
			set[installNamespace(&mcas.Items[i])] = true
		}
	}
	r.mu.Lock()
	maps.Copy(set, r.recorded)
	r.mu.Unlock()
	return slices.Sorted(maps.Keys(set))
}

// listSecrets lists the Secrets that sel selects in r.namespaces. A
// namespace the agent may not read holds none it wrote, and is skipped.
// empty are the namespaces listed that hold none.
func (r *runner) listSecrets(ctx context.Context, sel labels.Selector) (out []corev1.Secret, empty []string, err error) {
	for _, ns := range r.namespaces(ctx) {
		list, err := r.spoke.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		switch {
		case apierrors.IsForbidden(err):
			klog.FromContext(ctx).V(2).Info("Not looking for add-on Secrets in a namespace the agent may not read", "namespace", ns)
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("list Secrets in namespace %s: %w", ns, err)
		}
		if len(list.Items) == 0 {
			empty = append(empty, ns)
		}
		out = append(out, list.Items...)
	}
	return out, empty, nil
}

// loadRecord reads the recorded namespaces, when there is a record.
func (r *runner) loadRecord(ctx context.Context) error {
	if !r.recording() {
		return nil
	}
	cm, err := r.spoke.CoreV1().ConfigMaps(r.cfg.Namespace).Get(ctx, RecordConfigMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read ConfigMap %s/%s, the namespaces of the add-ons' Secrets: %w", r.cfg.Namespace, RecordConfigMapName, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for ns := range cm.Data {
		r.recorded[ns] = true
	}
	return nil
}

// recording says whether the agent records the namespaces it writes
// Secrets in: only when any namespace may be an add-on's.
func (r *runner) recording() bool {
	return len(r.cfg.InstallNamespaces) == 0 && r.cfg.Namespace != ""
}

// record notes ns before an add-on Secret is first written there, so that
// a restarted agent looks there for the Secrets of add-ons that went.
func (r *runner) record(ctx context.Context, ns string) error {
	r.mu.Lock()
	known := r.recorded[ns] || ns == addon.DefaultInstallNamespace
	r.mu.Unlock()
	if known || !r.recording() {
		return nil
	}
	if err := r.updateRecord(ctx, func(data map[string]string) { data[ns] = "" }); err != nil {
		if !apierrors.IsForbidden(err) {
			return err
		}
		// The Secret matters more than finding it after a restart.
		klog.FromContext(ctx).Error(err, "Cannot record the namespace of an add-on's Secret; it is deleted with the add-on only while the agent runs", "namespace", ns)
		return nil
	}
	r.mu.Lock()
	r.recorded[ns] = true
	r.mu.Unlock()
	return nil
}

// forgetNamespaces drops from the record the namespaces given, which hold
// no add-on Secret of the cluster and are no add-on's install namespace.
func (r *runner) forgetNamespaces(ctx context.Context, empty []string) error {
	if !r.recording() {
		return nil
	}
	inUse := map[string]bool{addon.DefaultInstallNamespace: true}
	mcas := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.hub.List(ctx, mcas, client.InNamespace(r.cfg.ClusterName)); err != nil {
		return err
	}
	for i := range mcas.Items {
		inUse[installNamespace(&mcas.Items[i])] = true
	}
	r.mu.Lock()
	var gone []string
	for _, ns := range empty {
		if r.recorded[ns] && !inUse[ns] {
			gone = append(gone, ns)
		}
	}
	r.mu.Unlock()
	if len(gone) == 0 {
		return nil
	}
	if err := r.updateRecord(ctx, func(data map[string]string) {
		for _, ns := range gone {
			delete(data, ns)
		}
	}); err != nil {
		return err
	}
	r.mu.Lock()
	for _, ns := range gone {
		delete(r.recorded, ns)
	}
	r.mu.Unlock()
	return nil
}

// updateRecord applies change to the record's data, creating it if need be.
func (r *runner) updateRecord(ctx context.Context, change func(map[string]string)) error {
	cms := r.spoke.CoreV1().ConfigMaps(r.cfg.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, RecordConfigMapName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: RecordConfigMapName, Namespace: r.cfg.Namespace, Labels: map[string]string{addon.ClusterNameLabel: r.cfg.ClusterName}},
				Data:       map[string]string{},
			}
			change(cm.Data)
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		change(cm.Data)
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("write ConfigMap %s/%s, the namespaces of the add-ons' Secrets: %w", r.cfg.Namespace, RecordConfigMapName, err)
	}
	return nil
}
