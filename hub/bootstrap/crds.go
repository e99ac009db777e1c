package bootstrap

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// crdEstablishTimeout bounds the wait for new CRDs to be served.
const crdEstablishTimeout = time.Minute

// InstallCRDs creates the given CRDs, or updates them to the given
// definitions, and waits until every one is established.
func InstallCRDs(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, want := range crds {
		if err := applyCRD(ctx, api, want); err != nil {
			return fmt.Errorf("install CRD %s: %w", want.Name, err)
		}
	}
	for _, want := range crds {
		if err := waitEstablished(ctx, api, want.Name); err != nil {
			return err
		}
	}
	klog.FromContext(ctx).V(1).Info("CRDs installed", "count", len(crds))
	return nil
}

type crdClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Create(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts metav1.CreateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Update(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts metav1.UpdateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}

func applyCRD(ctx context.Context, api crdClient, want *apiextensionsv1.CustomResourceDefinition) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := api.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, want.DeepCopy(), metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		updated := got.DeepCopy()
		updated.Spec = want.Spec
		for k, v := range want.Labels {
			if updated.Labels == nil {
				updated.Labels = map[string]string{}
			}
			updated.Labels[k] = v
		}
		for k, v := range want.Annotations {
			if updated.Annotations == nil {
				updated.Annotations = map[string]string{}
			}
			updated.Annotations[k] = v
		}
		_, err = api.Update(ctx, updated, metav1.UpdateOptions{})
		return err
	})
}

func waitEstablished(ctx context.Context, api crdClient, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, crdEstablishTimeout, true, func(ctx context.Context) (bool, error) {
		crd, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s was not established within %s: %w", name, crdEstablishTimeout, err)
	}
	return nil
}
