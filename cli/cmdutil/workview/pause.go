package workview

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Paused says whether a replica set's rollout is paused (annotation
// work.flotilla.io/paused=true, which the hub honours).
func Paused(rs *workv1alpha1.ManifestWorkReplicaSet) bool {
	return rs.Annotations[workv1alpha1.PausedAnnotation] == "true"
}

// SetPaused pauses or resumes the rollout of replica set key: a merge
// patch of the paused annotation alone (set to "true", or removed), so it
// never races another writer of the replica set.
func SetPaused(ctx context.Context, c client.Writer, key client.ObjectKey, paused bool) error {
	value := `"true"`
	if !paused {
		value = "null"
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, workv1alpha1.PausedAnnotation, value)
	obj := &workv1alpha1.ManifestWorkReplicaSet{}
	obj.Namespace, obj.Name = key.Namespace, key.Name
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
}
