package work

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// WebhookName names the ValidatingWebhookConfiguration and its one webhook,
// as OCM names its ManifestWork validator.
const WebhookName = "manifestworkvalidators.admission.work.open-cluster-management.io"

// webhookTimeoutSeconds bounds each admission call; validation takes
// microseconds, so a slow answer means the hub process is in trouble.
const webhookTimeoutSeconds = 10

// WebhookConfiguration is the ValidatingWebhookConfiguration that sends
// every CREATE of a ManifestWork, and every UPDATE that changes its spec, to the hub's webhook server at
// serverURL (https://host:port), trusted with caBundle. Requests fail while
// the server cannot be reached: a work that skipped the check could reach
// an agent that cannot apply it.
func WebhookConfiguration(serverURL string, caBundle []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: WebhookName,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL:      ptr.To(strings.TrimSuffix(serverURL, "/") + WebhookPath),
				CABundle: caBundle,
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{workv1.GroupName},
					APIVersions: []string{"*"},
					Resources:   []string{"manifestworks"},
					Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
			// An update that leaves the spec alone (the agent's finalizer,
			// labels) cannot change the verdict, which looks at the
			// manifests only: the API server decides that itself, without
			// a call to the hub.
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "spec-changed",
				Expression: "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec",
			}},
			// Every field the API server would default is set, so that an
			// unchanged configuration compares equal to the stored one.
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

// CheckServerURL rejects a webhook server URL that an API server would not
// call: it must be https, with a host, and nothing after the port.
func CheckServerURL(serverURL string) error {
	u, err := url.Parse(serverURL)
	if err != nil {
		return err
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "" {
		return fmt.Errorf("%q must be an https://host:port URL, with no path, query or user", serverURL)
	}
	return nil
}

// InstallWebhook creates the ValidatingWebhookConfiguration, or points the
// existing one at serverURL and caBundle. The hub calls it at every start,
// once its webhook server answers, so that the API server never calls an
// address where nothing listens yet.
func InstallWebhook(ctx context.Context, client kubernetes.Interface, serverURL string, caBundle []byte) error {
	return installWebhook(ctx, client, WebhookConfiguration(serverURL, caBundle))
}

// InstallWebhookService is InstallWebhook for a webhook server behind
// Service namespace/name (port 443), as the flotilla-hub chart runs it:
// the API server finds a Service without the cluster's DNS.
func InstallWebhookService(ctx context.Context, client kubernetes.Interface, namespace, name string, caBundle []byte) error {
	want := WebhookConfiguration("https://unused", caBundle)
	want.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{
		Service:  &admissionregistrationv1.ServiceReference{Namespace: namespace, Name: name, Path: ptr.To(WebhookPath), Port: ptr.To[int32](443)},
		CABundle: caBundle,
	}
	return installWebhook(ctx, client, want)
}

func installWebhook(ctx context.Context, client kubernetes.Interface, want *admissionregistrationv1.ValidatingWebhookConfiguration) error {
	api := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	// Hub processes that start together (the members of one etcd cluster)
	// may both find none and create it: the second one reads it again.
	conflict := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	err := retry.OnError(retry.DefaultRetry, conflict, func() error {
		got, err := api.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, want, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		// An unchanged hub writes nothing.
		if equality.Semantic.DeepEqual(got.Webhooks, want.Webhooks) {
			return nil
		}
		if len(got.Webhooks) == 1 && target(got.Webhooks[0].ClientConfig) != target(want.Webhooks[0].ClientConfig) {
			// Hub replicas that advertise different addresses take the
			// configuration from each other at every start.
			klog.FromContext(ctx).Info("Re-pointing the ManifestWork admission webhook: every hub replica must advertise the same address",
				"from", target(got.Webhooks[0].ClientConfig), "to", target(want.Webhooks[0].ClientConfig))
		}
		got.Webhooks = want.Webhooks
		_, err = api.Update(ctx, got, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("install ValidatingWebhookConfiguration %s: %w", want.Name, err)
	}
	klog.FromContext(ctx).V(1).Info("ManifestWork admission webhook installed", "clientConfig", want.Webhooks[0].ClientConfig.String())
	return nil
}

// target is where a client configuration sends calls: its URL or Service.
func target(c admissionregistrationv1.WebhookClientConfig) string {
	if c.Service != nil {
		return "service " + c.Service.Namespace + "/" + c.Service.Name
	}
	return ptr.Deref(c.URL, "")
}
