// Package install registers every API group of this module with a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"

	aboutv1beta1 "github.com/flotilla-io/flotilla/api/about/v1beta1"
	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	addonv1beta1 "github.com/flotilla-io/flotilla/api/addon/v1beta1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla-io/flotilla/api/policy/v1beta1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var schemeBuilder = runtime.NewSchemeBuilder(
	aboutv1beta1.AddToScheme,
	addonv1alpha1.AddToScheme,
	addonv1beta1.AddToScheme,
	clusterv1.AddToScheme,
	clusterv1alpha1.AddToScheme,
	clusterv1beta1.AddToScheme,
	clusterv1beta2.AddToScheme,
	mcsv1alpha1.AddToScheme,
	searchv1alpha1.AddToScheme,
	multiclusterv1alpha1.AddToScheme,
	operatorv1.AddToScheme,
	policyv1.AddToScheme,
	policyv1beta1.AddToScheme,
	workv1.AddToScheme,
	workv1alpha1.AddToScheme,
)

// AddToScheme adds the cluster, work, policy, add-on and operator types,
// the SIG-Multicluster ones (multicluster, about) and the hub side of
// multi-cluster services (mcs) and the search index's config (search), to a
// scheme.
var AddToScheme = schemeBuilder.AddToScheme
