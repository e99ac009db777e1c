package kubeapply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/internal/parallel"
)

// crdEstablishTimeout bounds the wait for new CRDs to be served.
const crdEstablishTimeout = time.Minute

// InstallCRDs creates the given CRDs, or updates them to the given
// definitions, and waits until every one is established. Where a CRD is
// already as given and served, as on every start but the first, it reads
// it once and neither writes nor waits.
func InstallCRDs(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	served := make([]bool, len(crds))
	jobs := make([]func(context.Context) error, len(crds))
	for i, want := range crds {
		want = withDefaults(want)
		jobs[i] = func(ctx context.Context) error {
			err := CreateOrUpdate(ctx, api, want.DeepCopy(), func(got *apiextensionsv1.CustomResourceDefinition) bool {
				changed := mutateCRD(got, want)
				served[i] = !changed && established(got)
				return !changed
			})
			if err != nil {
				return fmt.Errorf("install CRD %s: %w", want.Name, err)
			}
			return nil
		}
	}
	if err := errors.Join(parallel.Run(ctx, crdWorkers, jobs)...); err != nil {
		return err
	}
	waited := 0
	for i, want := range crds {
		if served[i] {
			continue
		}
		waited++
		if err := waitEstablished(ctx, api, want.Name); err != nil {
			return err
		}
	}
	klog.FromContext(ctx).V(1).Info("CRDs installed", "count", len(crds), "writtenOrNotYetServed", waited)
	return nil
}

// crdWorkers bound the CRDs installed at once: a first start creates
// them all, each validated by the API server and written to etcd.
const crdWorkers = 4

// withDefaults returns a copy of crd with the defaults the API server
// gives every CRD it stores (the conversion strategy among them), so
// that one read back compares equal to it.
func withDefaults(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	crd = crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	return crd
}

// mutateCRD brings got's spec, and the labels and annotations want has,
// in line with want, and reports whether that changed anything.
//
// A conversion webhook that got has and want does not (want's strategy is
// None) is kept: the hub sets it once its webhook server answers
// (hub/addon/conversion), and installing the CRDs again at the next start
// must not take it away in between.
func mutateCRD(got, want *apiextensionsv1.CustomResourceDefinition) (changed bool) {
	spec := want.Spec
	if c := got.Spec.Conversion; c != nil && c.Strategy == apiextensionsv1.WebhookConverter &&
		(spec.Conversion == nil || spec.Conversion.Strategy == apiextensionsv1.NoneConverter) {
		spec.Conversion = c
	}
	changed = !equality.Semantic.DeepEqual(got.Spec, spec)
	got.Spec = spec
	for k, v := range want.Labels {
		changed = changed || got.Labels[k] != v
		metav1.SetMetaDataLabel(&got.ObjectMeta, k, v)
	}
	for k, v := range want.Annotations {
		changed = changed || got.Annotations[k] != v
		metav1.SetMetaDataAnnotation(&got.ObjectMeta, k, v)
	}
	return changed
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
}

func waitEstablished(ctx context.Context, api TypedAPI[*apiextensionsv1.CustomResourceDefinition], name string) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, crdEstablishTimeout, true, func(ctx context.Context) (bool, error) {
		crd, err := api.Get(ctx, name, metav1.GetOptions{})
		return err == nil && established(crd), nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s was not established within %s: %w", name, crdEstablishTimeout, err)
	}
	return nil
}
