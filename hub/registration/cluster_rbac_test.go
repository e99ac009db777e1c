package registration

import (
	"context"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// TestEnsureAccessBindsTheClusterLast checks that the ClusterRoleBinding,
// which lets the agent read its ManagedCluster and so tells it that it was
// accepted, is created after the RoleBindings of the cluster's namespace.
func TestEnsureAccessBindsTheClusterLast(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	var created []string
	c := fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch obj.(type) {
			case *rbacv1.RoleBinding:
				created = append(created, "RoleBinding "+obj.GetName())
			case *rbacv1.ClusterRoleBinding:
				created = append(created, "ClusterRoleBinding")
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	r := &ClusterReconciler{Client: c, Scheme: s}
	cluster := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: "uid-c1"}}
	if err := r.ensureAccess(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	bindings := len(roleBindings(cluster.Name, ""))
	if len(created) != bindings+1 || !slices.Equal(created[bindings:], []string{"ClusterRoleBinding"}) {
		t.Errorf("created %v; want the %d RoleBindings, then the ClusterRoleBinding", created, bindings)
	}
}
