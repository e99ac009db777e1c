package policy

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/admissionconfig"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// WebhookName names the ValidatingWebhookConfiguration and its one
// webhook, as OCM names its propagator's Policy webhook.
const WebhookName = "policy.open-cluster-management.io.webhook"

// WebhookConfiguration is the ValidatingWebhookConfiguration that sends
// every CREATE and UPDATE of a root Policy to the hub's webhook server at
// serverURL (https://host:port), or at Service namespace/name (port 443)
// when service is "namespace/name", trusted with caBundle. Requests fail
// while the server cannot be reached, as for ManifestWorks: a Policy that
// skipped the check could keep a field no one reads. The hub's copies
// (labelled with their root) are not sent: it writes them itself, from
// roots that passed.
func WebhookConfiguration(serverURL, service string, caBundle []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	cc := admissionconfig.ClientConfig(serverURL, service, WebhookPath, caBundle)
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         WebhookName,
			ClientConfig: cc,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{policyv1.GroupName},
					APIVersions: []string{"*"},
					Resources:   []string{"policies"},
					Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: policyv1.RootPolicyLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
			}},
			// Every other field the API server would default is set, so
			// that an unchanged configuration compares equal to the stored one.
			NamespaceSelector:       &metav1.LabelSelector{},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// InstallWebhook creates WebhookConfiguration, or points the existing one
// at the server. The hub calls it at every start, once its webhook server
// answers.
func InstallWebhook(ctx context.Context, client kubernetes.Interface, serverURL, service string, caBundle []byte) error {
	return kubeapply.Install(ctx, client.AdmissionregistrationV1().ValidatingWebhookConfigurations(),
		WebhookConfiguration(serverURL, service, caBundle), "ValidatingWebhookConfiguration",
		func(c *admissionregistrationv1.ValidatingWebhookConfiguration) *[]admissionregistrationv1.ValidatingWebhook {
			return &c.Webhooks
		})
}
