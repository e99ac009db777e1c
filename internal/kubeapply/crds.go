package kubeapply

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
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

func applyCRD(ctx context.Context, api TypedAPI[*apiextensionsv1.CustomResourceDefinition], want *apiextensionsv1.CustomResourceDefinition) error {
	return CreateOrUpdate(ctx, api, want.DeepCopy(), func(got *apiextensionsv1.CustomResourceDefinition) bool {
		same := equality.Semantic.DeepEqual(got.Spec, want.Spec)
		got.Spec = want.Spec
		for k, v := range want.Labels {
			same = same && got.Labels[k] == v
			metav1.SetMetaDataLabel(&got.ObjectMeta, k, v)
		}
		for k, v := range want.Annotations {
			same = same && got.Annotations[k] == v
			metav1.SetMetaDataAnnotation(&got.ObjectMeta, k, v)
		}
		return same
	})
}

func waitEstablished(ctx context.Context, api TypedAPI[*apiextensionsv1.CustomResourceDefinition], name string) error {
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
