package admission

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/admissionconfig"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// WebhookName names the MutatingWebhookConfiguration and its one webhook
// (a Flotilla webhook: OCM has none that mutates replica sets).
const WebhookName = "manifestworkreplicasets.admission.work.flotilla.io"

// webhookTimeoutSeconds bounds each admission call, as for ManifestWorks:
// the handler takes microseconds (a compiled expression is cached).
const webhookTimeoutSeconds = 10

// matchCondition sends only the requests whose answer can differ from
// admitting them as they are: every CREATE, and UPDATEs that change the
// spec or the author annotation. The annotation of each object is a list
// of its value or nothing, so that an empty value differs from none.
var matchCondition = func() string {
	ann := func(o string) string {
		return fmt.Sprintf("(has(%[1]s.metadata.annotations) && '%[2]s' in %[1]s.metadata.annotations ? [%[1]s.metadata.annotations['%[2]s']] : [])",
			o, workv1alpha1.ChangedByAnnotation)
	}
	return "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec || " +
		ann("object") + " != " + ann("oldObject")
}()

// WebhookConfiguration is the MutatingWebhookConfiguration that sends
// CREATEs and UPDATEs of ManifestWorkReplicaSets to the hub's webhook
// server at serverURL (https://host:port), or at Service namespace/name
// (port 443) when service is "namespace/name", trusted with caBundle.
func WebhookConfiguration(serverURL, service string, caBundle []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	cc := admissionconfig.ClientConfig(serverURL, service, WebhookPath, caBundle)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         WebhookName,
			ClientConfig: cc,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{workv1alpha1.GroupName},
					APIVersions: []string{"*"},
					Resources:   []string{"manifestworkreplicasets"},
					Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "spec-or-author-changed", Expression: matchCondition}},
			// A webhook after this one that changed the object has this
			// one called again, so that it cannot set the author either.
			ReinvocationPolicy: ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			// Every other field the API server would default is set, so
			// that an unchanged configuration compares equal to the stored one.
			NamespaceSelector:       &metav1.LabelSelector{},
			ObjectSelector:          &metav1.LabelSelector{},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To[int32](webhookTimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// Install creates WebhookConfiguration, or points the existing one at the
// server. The hub calls it at every start, once its webhook server
// answers, so that the API server never calls an address where nothing
// listens yet.
func Install(ctx context.Context, client kubernetes.Interface, serverURL, service string, caBundle []byte) error {
	return kubeapply.Install(ctx, client.AdmissionregistrationV1().MutatingWebhookConfigurations(),
		WebhookConfiguration(serverURL, service, caBundle), "MutatingWebhookConfiguration",
		func(c *admissionregistrationv1.MutatingWebhookConfiguration) *[]admissionregistrationv1.MutatingWebhook {
			return &c.Webhooks
		})
}

// probeName names the replica set that WaitCalled creates with dryRun: it
// is never stored.
const probeName = "flotilla-webhook-probe"

// waitTimeout bounds WaitCalled.
const waitTimeout = 30 * time.Second

// WaitCalled waits until the API server calls the webhook: a dry-run
// create of a replica set in namespace comes back with its author. Until
// the API server has read the configuration Install wrote, replica sets
// would be stored without one.
func WaitCalled(ctx context.Context, c client.Client, namespace string) error {
	probe := &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: probeName},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: probeName}},
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{
				Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + probeName + `","namespace":"default"}}`),
			}}}}},
		},
	}
	started := time.Now()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		got := probe.DeepCopy()
		if last = c.Create(ctx, got, client.DryRunAll); last != nil {
			return false, nil
		}
		if _, ok := got.Annotations[workv1alpha1.ChangedByAnnotation]; !ok {
			last = errors.New("admitted without the author annotation: the API server does not call the webhook yet")
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		if last != nil && !errors.Is(err, ctx.Err()) {
			return fmt.Errorf("the API server did not call the ManifestWorkReplicaSet admission webhook within %s (a dry-run create of ManifestWorkReplicaSet %s/%s): %w",
				waitTimeout, namespace, probeName, last)
		}
		return err
	}
	klog.FromContext(ctx).V(1).Info("The API server calls the ManifestWorkReplicaSet admission webhook", "after", time.Since(started).Round(time.Millisecond))
	return nil
}
