package services

import (
	"context"
	"fmt"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	mcscrd "sigs.k8s.io/mcs-api/config/crd"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// mcsCRDs returns the ServiceExport and ServiceImport CRDs of
// sigs.k8s.io/mcs-api, as its release ships them.
func mcsCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, data := range [][]byte{mcscrd.ServiceExportCRD, mcscrd.ServiceImportCRD} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("read the MCS CRDs embedded from sigs.k8s.io/mcs-api: %w", err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// schemaRevision is a CRD's multicluster.x-k8s.io/crd-schema-revision;
// -1 where it has none (mcs-api releases before the label) or it is no
// number.
func schemaRevision(crd *apiextensionsv1.CustomResourceDefinition) int {
	r, err := strconv.Atoi(crd.Labels[mcscrd.CustomResourceDefinitionSchemaRevisionLabel])
	if err != nil {
		return -1
	}
	return r
}

// installCRDs installs the MCS CRDs on the managed cluster where they are
// missing or of an older schema revision, and waits until they are
// served. A CRD of the same or a newer revision (installed by the cluster's
// owner or by another MCS implementation) is left as it is: never
// downgraded.
func installCRDs(ctx context.Context, cfg *rest.Config) error {
	crds, err := mcsCRDs()
	if err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	var install []*apiextensionsv1.CustomResourceDefinition
	for _, want := range crds {
		got, err := api.Get(ctx, want.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			install = append(install, want)
		case err != nil:
			return fmt.Errorf("read CRD %s on the managed cluster: %w", want.Name, err)
		case schemaRevision(got) < schemaRevision(want):
			install = append(install, want)
		default:
			klog.FromContext(ctx).V(1).Info("Leaving the managed cluster's MCS CRD as it is: same or newer schema revision",
				"crd", want.Name, "revision", got.Labels[mcscrd.CustomResourceDefinitionSchemaRevisionLabel],
				"ours", want.Labels[mcscrd.CustomResourceDefinitionSchemaRevisionLabel])
		}
	}
	if len(install) == 0 {
		return nil
	}
	if err := kubeapply.InstallCRDs(ctx, cfg, install); err != nil {
		return fmt.Errorf("install the MCS CRDs on the managed cluster: %w", err)
	}
	return nil
}
