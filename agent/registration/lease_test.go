package registration

import (
	"context"
	"slices"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// TestRenewLeaseOnce checks the requests a renewal sends the hub: a read
// and a write the first time, one write from then on, and a read again
// when the write finds the lease changed or gone. What is checked is the
// agent's sequence of requests, not the API server's handling of them.
func TestRenewLeaseOnce(t *testing.T) {
	existing := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: clusterv1.ManagedClusterLeaseName}}
	for _, tc := range []struct {
		name string
		// hub holds the lease before the first renewal, if any.
		hub *coordinationv1.Lease
		// failSecond is the error of the second renewal's first write.
		failSecond error
		first      []string
		second     []string
	}{
		{"the hub made the lease", existing, nil, []string{"get", "update"}, []string{"update"}},
		{"no lease yet", nil, nil, []string{"get", "create"}, []string{"update"}},
		{"changed since the last write", existing, apierrors.NewConflict(coordinationv1.Resource("leases"), "managed-cluster-lease", nil),
			[]string{"get", "update"}, []string{"update", "get", "update"}},
		{"deleted since the last write", existing, apierrors.NewNotFound(coordinationv1.Resource("leases"), "managed-cluster-lease"),
			[]string{"get", "update"}, []string{"update", "get", "update"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objects []runtime.Object
			if tc.hub != nil {
				objects = append(objects, tc.hub.DeepCopy())
			}
			kube := fake.NewClientset(objects...)
			s := &session{kube: kube}
			r := &Registration{cfg: Config{ClusterName: "c1"}}
			ctx := context.Background()

			last, err := r.renewLeaseOnce(ctx, s, nil)
			if err != nil || last == nil || last.Spec.RenewTime == nil {
				t.Fatalf("first renewal: lease %v, error %v", last, err)
			}
			if got := verbs(kube.Actions()); !slices.Equal(got, tc.first) {
				t.Fatalf("first renewal sent %v, want %v", got, tc.first)
			}
			kube.ClearActions()
			if tc.failSecond != nil {
				failed := false
				kube.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
					if failed {
						return false, nil, nil
					}
					failed = true
					return true, nil, tc.failSecond
				})
			}
			if renewed, err := r.renewLeaseOnce(ctx, s, last); err != nil || renewed == nil {
				t.Fatalf("second renewal: lease %v, error %v", renewed, err)
			}
			if got := verbs(kube.Actions()); !slices.Equal(got, tc.second) {
				t.Fatalf("second renewal sent %v, want %v", got, tc.second)
			}
		})
	}

	t.Run("another failure is returned without a lease", func(t *testing.T) {
		kube := fake.NewClientset(existing.DeepCopy())
		kube.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(coordinationv1.Resource("leases"), "managed-cluster-lease", nil)
		})
		r := &Registration{cfg: Config{ClusterName: "c1"}}
		lease, err := r.renewLeaseOnce(context.Background(), &session{kube: kube}, existing)
		if !apierrors.IsForbidden(err) || lease != nil {
			t.Fatalf("got lease %v, error %v; want no lease and the hub's refusal", lease, err)
		}
		if got := verbs(kube.Actions()); !slices.Equal(got, []string{"update"}) {
			t.Fatalf("sent %v, want a single update", got)
		}
	})
}

func verbs(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a.GetVerb())
	}
	return out
}
