package handshake

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
)

// BootstrapRoleName names the ClusterRole, and its ClusterRoleBinding, that
// join tokens get (contract, Registration step 1).
const BootstrapRoleName = bootstraptoken.ClusterRoleName

// bootstrapClusterRole allows exactly what an agent needs before it is
// accepted; the hub installs the same at start.
func bootstrapClusterRole() *rbacv1.ClusterRole { return bootstraptoken.ClusterRole() }

// bootstrapClusterRoleBinding grants the bootstrap ClusterRole to every join token.
func bootstrapClusterRoleBinding() *rbacv1.ClusterRoleBinding { return bootstraptoken.GroupBinding() }

// EnsureBootstrapRBAC creates the bootstrap ClusterRole and binding, or
// puts back their rules and subjects. It returns what it changed.
func EnsureBootstrapRBAC(ctx context.Context, c *cmdutil.Clients) ([]string, error) {
	var changed []string
	roles := c.Kube.RbacV1().ClusterRoles()
	want := bootstrapClusterRole()
	got, err := roles.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := roles.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return changed, cmdutil.Explain(err, c.Where, "create ClusterRole "+want.Name)
		}
		changed = append(changed, "created ClusterRole "+want.Name)
	case err != nil:
		return changed, cmdutil.Explain(err, c.Where, "read ClusterRole "+want.Name)
	case !equality.Semantic.DeepEqual(got.Rules, want.Rules):
		got.Rules = want.Rules
		if _, err := roles.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			return changed, cmdutil.Explain(err, c.Where, "update ClusterRole "+want.Name)
		}
		changed = append(changed, "reset the rules of ClusterRole "+want.Name)
	}

	bindings := c.Kube.RbacV1().ClusterRoleBindings()
	wantB := bootstrapClusterRoleBinding()
	gotB, err := bindings.Get(ctx, wantB.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return changed, cmdutil.Explain(err, c.Where, "read ClusterRoleBinding "+wantB.Name)
	case gotB.RoleRef != wantB.RoleRef:
		// The role reference cannot change: replace the binding.
		if err := bindings.Delete(ctx, wantB.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return changed, cmdutil.Explain(err, c.Where, "replace ClusterRoleBinding "+wantB.Name)
		}
	case !equality.Semantic.DeepEqual(gotB.Subjects, wantB.Subjects):
		gotB.Subjects = wantB.Subjects
		if _, err := bindings.Update(ctx, gotB, metav1.UpdateOptions{}); err != nil {
			return changed, cmdutil.Explain(err, c.Where, "update ClusterRoleBinding "+wantB.Name)
		}
		return append(changed, "reset the subjects of ClusterRoleBinding "+wantB.Name), nil
	default:
		return changed, nil
	}
	if _, err := bindings.Create(ctx, wantB, metav1.CreateOptions{}); err != nil {
		return changed, cmdutil.Explain(err, c.Where, "create ClusterRoleBinding "+wantB.Name)
	}
	return append(changed, fmt.Sprintf("created ClusterRoleBinding %s (group %s)", wantB.Name, BootstrapGroup)), nil
}
