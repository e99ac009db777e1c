package policy

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// The resources of the policy templates the agent keeps on the spoke.
var (
	configurationPoliciesGVR = policyv1.GroupVersion.WithResource("configurationpolicies")
	certificatePoliciesGVR   = policyv1.GroupVersion.WithResource("certificatepolicies")
)

// templateSource watches the ConfigurationPolicies (or CertificatePolicies) the agent created on
// the spoke (metadata only) and asks for a reconcile of their policy when
// one appears, is changed by someone else (its generation moves) or is
// deleted. At start it lists them all, so that the templates of policies
// removed from the hub while the agent was away are pruned.
type templateSource struct {
	client    metadata.Interface
	namespace string
	cluster   string
	resource  schema.GroupVersionResource
}

// Start runs the watch until ctx ends.
func (s *templateSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	inf := metadatainformer.NewFilteredMetadataInformer(s.client, s.resource, s.namespace, 0, toolscache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = policyv1.PolicyLabel }).Informer()
	enqueue := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok && m.Labels[policyv1.PolicyLabel] != "" {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.cluster, Name: m.Labels[policyv1.PolicyLabel]}})
		}
	}
	_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*metav1.PartialObjectMetadata)
			n, ok2 := obj.(*metav1.PartialObjectMetadata)
			// The agent's own status writes leave the generation alone.
			if ok1 && ok2 && o.Generation == n.Generation && n.DeletionTimestamp == nil {
				return
			}
			enqueue(obj)
		},
		DeleteFunc: enqueue,
	})
	if err != nil {
		return err
	}
	go inf.RunWithContext(ctx)
	return nil
}
