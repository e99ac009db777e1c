package template

import (
	"context"
	"errors"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// registration writes the registrations the template asks for, the
// agent's namespace and health mode, and grants the template's hub
// permissions to the subject already in status (PermissionConfigPending
// until the status shows one, which is the next pass).
func (r *Reconciler) registration(ctx context.Context, s *state) (bool, error) {
	if s.mca.DeletionTimestamp != nil {
		return false, nil
	}
	s.mca.Status.Namespace = s.namespace
	s.mca.Status.HealthCheck.Mode = addon.HealthCheckModeCustomized
	if s.tmpl == nil {
		return false, nil
	}
	s.mca.Status.Registrations = desiredRegistrations(s.observed, s.tmpl)
	set := func(status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&s.mca.Status.Conditions, metav1.Condition{
			Type: addon.ConditionRegistrationApplied, Status: status, Reason: reason, Message: msg, ObservedGeneration: s.mca.Generation,
		})
	}
	if len(s.mca.Status.Registrations) == 0 {
		set(metav1.ConditionTrue, ReasonNilRegistration, "the add-on's agent needs no registration")
		return false, nil
	}
	perms := hubPermissions(s.tmpl)
	if len(perms) == 0 {
		set(metav1.ConditionTrue, ReasonSetPermissionApplied, "the add-on's template grants no hub permission")
		return false, nil
	}
	subject := kubeClientSubject(s.observed)
	if subject == nil {
		set(metav1.ConditionFalse, ReasonPermissionConfigPending, "waiting for the kubeClient registration's subject in status.registrations")
		return false, nil
	}
	var errs []error
	for _, p := range perms {
		if err := r.applyBinding(ctx, binding(s.mca, p, *subject)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		set(metav1.ConditionFalse, ReasonSetPermissionFailed, err.Error())
		return false, err
	}
	set(metav1.ConditionTrue, ReasonSetPermissionApplied, "the hub permissions of the add-on's template are granted to its agent")
	return false, nil
}

// desiredRegistrations are the registrations of tmpl on observed's cluster,
// with the default subjects (agent name <addon>-agent); a kubeClient
// registration keeps the subject its agent wrote when it uses tokens.
func desiredRegistrations(observed *addonv1alpha1.ManagedClusterAddOn, tmpl *addonv1alpha1.AddOnTemplate) []addonv1alpha1.RegistrationConfig {
	c, a := observed.Namespace, observed.Name
	def := addonv1alpha1.Subject{User: addon.AgentUser(c, a, a+agentSuffix), Groups: addon.AgentGroups(c, a)}
	var regs []addonv1alpha1.RegistrationConfig
	for _, reg := range tmpl.Spec.Registration {
		switch {
		case reg.Type == "KubeClient":
			subject := def
			if observed.Status.KubeClientDriver == "token" {
				if have := kubeClientSubject(observed); have != nil {
					subject = *have
				}
			}
			regs = append(regs, addonv1alpha1.RegistrationConfig{SignerName: addon.KubeAPIServerClientSigner, Subject: subject})
		case reg.Type == "CustomSigner" && reg.CustomSigner != nil:
			subject := def
			if reg.CustomSigner.Subject != nil {
				subject = *reg.CustomSigner.Subject
			}
			regs = append(regs, addonv1alpha1.RegistrationConfig{SignerName: reg.CustomSigner.SignerName, Subject: subject})
		}
	}
	return regs
}

// kubeClientSubject is the subject of mca's kubeClient registration in
// status, nil when there is none with a user.
func kubeClientSubject(mca *addonv1alpha1.ManagedClusterAddOn) *addonv1alpha1.Subject {
	for _, reg := range mca.Status.Registrations {
		if reg.SignerName == addon.KubeAPIServerClientSigner && reg.Subject.User != "" {
			return &reg.Subject
		}
	}
	return nil
}

func hubPermissions(tmpl *addonv1alpha1.AddOnTemplate) []addonv1alpha1.HubPermissionConfig {
	var out []addonv1alpha1.HubPermissionConfig
	for _, reg := range tmpl.Spec.Registration {
		if reg.Type == "KubeClient" && reg.KubeClient != nil {
			out = append(out, reg.KubeClient.HubPermissions...)
		}
	}
	return out
}

// BindingName is the name of the RoleBinding of add-on a's agents to a
// role of kind (Role or ClusterRole).
func BindingName(a, kind string) string {
	return "open-cluster-management:" + a + ":" + strings.ToLower(kind) + ":agent"
}

// binding is the RoleBinding that grants permission p to the agent of mca.
// CurrentCluster binds the agent's user and its group in this cluster
// only, stricter than OCM, whose binding also names the add-on's group of
// every cluster: the agents of other clusters stay out of this cluster's
// namespace. SingleNamespace is one binding in a namespace shared by the
// add-on's agents of every cluster, so it binds the add-on's group.
func binding(mca *addonv1alpha1.ManagedClusterAddOn, p addonv1alpha1.HubPermissionConfig, subject addonv1alpha1.Subject) *rbacv1.RoleBinding {
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{
		Labels: map[string]string{addon.AddOnNameLabel: mca.Name, addon.TemplateNameLabel: ""},
	}}
	switch {
	case p.Type == "CurrentCluster" && p.CurrentCluster != nil:
		rb.Namespace = mca.Namespace
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: p.CurrentCluster.ClusterRoleName}
		rb.OwnerReferences = []metav1.OwnerReference{{APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "ManagedClusterAddOn", Name: mca.Name, UID: mca.UID}}
		rb.Subjects = []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: subject.User}}
		for _, g := range subject.Groups {
			if g == addon.ClusterAddOnGroup(mca.Namespace, mca.Name) {
				rb.Subjects = append(rb.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: g})
			}
		}
	case p.Type == "SingleNamespace" && p.SingleNamespace != nil:
		ref := p.SingleNamespace.RoleRef
		rb.Namespace = p.SingleNamespace.Namespace
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: ref.Kind, Name: ref.Name}
		rb.Subjects = []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: addon.AddOnGroup(mca.Name)}}
	default:
		return nil
	}
	rb.Name = BindingName(mca.Name, rb.RoleRef.Kind)
	return rb
}

// applyBinding creates rb, or updates it to rb (again, when its role
// changed, which a RoleBinding cannot).
func (r *Reconciler) applyBinding(ctx context.Context, rb *rbacv1.RoleBinding) error {
	if rb == nil {
		return nil
	}
	have := &rbacv1.RoleBinding{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(rb), have)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, rb); err != nil {
			return fmt.Errorf("create RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
		}
		return nil
	case err != nil:
		return err
	case have.RoleRef != rb.RoleRef:
		if err := r.Client.Delete(ctx, have, client.Preconditions{UID: &have.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("replace RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
		}
		return r.Client.Create(ctx, rb)
	}
	labels := have.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	changed := !equality.Semantic.DeepEqual(have.Subjects, rb.Subjects)
	for k, v := range rb.Labels {
		if l, ok := labels[k]; !ok || l != v {
			labels[k], changed = v, true
		}
	}
	if len(rb.OwnerReferences) > 0 && !equality.Semantic.DeepEqual(have.OwnerReferences, rb.OwnerReferences) {
		have.OwnerReferences, changed = rb.OwnerReferences, true
	}
	if !changed {
		return nil
	}
	have.Labels, have.Subjects = labels, rb.Subjects
	if err := r.Client.Update(ctx, have); err != nil {
		return fmt.Errorf("update RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
	}
	return nil
}
