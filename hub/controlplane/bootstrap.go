package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
	"k8s.io/klog/v2"
	schedulingv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	rbacrest "k8s.io/kubernetes/pkg/registry/rbac/rest"
	schedulingrest "k8s.io/kubernetes/pkg/registry/scheduling/rest"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	"github.com/flotilla-io/flotilla/internal/parallel"
)

// The API server's own hooks that make the default RBAC roles and the
// system priority classes wait a second before their first attempt, and
// its /readyz waits for both: every start of a control plane, warm or
// cold, paid that second. The control plane runs them as bootstrapHooks
// instead, which start at once and try again every bootstrapRetry.
//
// What the RBAC hook also does and these do not: copy the roles and
// bindings of clusters made before Kubernetes 1.9 and 1.14 to the names
// those releases introduced. A control plane's data began at 1.36.
var replacedHooks = []string{rbacrest.PostStartHookName, schedulingrest.PostStartHookName}

// bootstrapRetry is how often a bootstrap hook tries again, for at most
// bootstrapTimeout, after which the API server stops (as it does when
// its own hooks fail).
const (
	bootstrapRetry   = 100 * time.Millisecond
	bootstrapTimeout = 30 * time.Second
)

// bootstrapWorkers bound the RBAC objects written at once: a first start
// creates about 120, each an etcd write.
const bootstrapWorkers = 8

// replaceBootstrapHooks keeps the API server of config from running the
// hooks that bootstrapHooks replace.
func replaceBootstrapHooks(config *genericapiserver.Config) {
	config.DisabledPostStartHooks.Insert(replacedHooks...)
}

// addBootstrapHooks adds the hooks that replace the API server's own to
// s, whose /readyz then waits for them.
func addBootstrapHooks(s *genericapiserver.GenericAPIServer) error {
	for name, step := range map[string]func(context.Context, kubernetes.Interface) error{
		"flotilla/bootstrap-roles":                   bootstrapRBAC,
		"flotilla/bootstrap-system-priority-classes": bootstrapPriorityClasses,
	} {
		if err := s.AddPostStartHook(name, untilDone(name, step)); err != nil {
			return err
		}
	}
	return nil
}

// untilDone runs step with the server's loopback client at once, and
// again after each failure, until it succeeds or bootstrapTimeout passes.
func untilDone(name string, step func(context.Context, kubernetes.Interface) error) genericapiserver.PostStartHookFunc {
	return func(hook genericapiserver.PostStartHookContext) error {
		client, err := kubernetes.NewForConfig(hook.LoopbackClientConfig)
		if err != nil {
			return err
		}
		var last error
		err = wait.PollUntilContextTimeout(hook, bootstrapRetry, bootstrapTimeout, true, func(ctx context.Context) (bool, error) {
			if last = step(ctx, client); last != nil {
				klog.FromContext(ctx).V(2).Info("Bootstrap step not done yet, trying again", "step", name, "err", last)
			}
			return last == nil, nil
		})
		if err != nil && last != nil {
			return fmt.Errorf("%s: %w (last attempt: %w)", name, err, last)
		}
		return err
	}
}

// bootstrapRBAC creates the API server's default roles and bindings
// (cluster-admin, the system: roles, the controllers' roles), or adds what
// they lack, as the API server's own hook does.
func bootstrapRBAC(ctx context.Context, c kubernetes.Interface) error {
	rbac, namespaces := c.RbacV1(), c.CoreV1().Namespaces()
	var jobs []func(context.Context) error
	for _, role := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		jobs = append(jobs, reconcileRole(reconciliation.ClusterRoleRuleOwner{ClusterRole: &role},
			reconciliation.ClusterRoleModifier{Client: rbac.ClusterRoles()}))
	}
	for _, binding := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		jobs = append(jobs, reconcileBinding(reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &binding},
			reconciliation.ClusterRoleBindingClientAdapter{Client: rbac.ClusterRoleBindings()}))
	}
	for _, roles := range bootstrappolicy.NamespaceRoles() {
		for _, role := range roles {
			jobs = append(jobs, reconcileRole(reconciliation.RoleRuleOwner{Role: &role},
				reconciliation.RoleModifier{Client: rbac, NamespaceClient: namespaces}))
		}
	}
	for _, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, binding := range bindings {
			jobs = append(jobs, reconcileBinding(reconciliation.RoleBindingAdapter{RoleBinding: &binding},
				reconciliation.RoleBindingClientAdapter{Client: rbac, NamespaceClient: namespaces}))
		}
	}
	return errors.Join(parallel.Run(ctx, bootstrapWorkers, jobs)...)
}

// reconcileRole makes role exist with at least its rules.
func reconcileRole(role reconciliation.RuleOwner, client reconciliation.RuleOwnerModifier) func(context.Context) error {
	return reconcileJob("role", role, func() (reconciliation.ReconcileOperation, bool, error) {
		result, err := (&reconciliation.ReconcileRoleOptions{Role: role, Client: client, Confirm: true}).Run()
		if err != nil {
			return "", false, err
		}
		return result.Operation, result.Protected, nil
	})
}

// reconcileBinding makes binding exist with at least its subjects.
func reconcileBinding(binding reconciliation.RoleBinding, client reconciliation.RoleBindingModifier) func(context.Context) error {
	return reconcileJob("role binding", binding, func() (reconciliation.ReconcileOperation, bool, error) {
		result, err := (&reconciliation.ReconcileRoleBindingOptions{RoleBinding: binding, Client: client, Confirm: true}).Run()
		if err != nil {
			return "", false, err
		}
		return result.Operation, result.Protected, nil
	})
}

// reconcileJob runs one reconciliation of the kind of object obj is and
// logs what it did: nothing, a write, or nothing because an admin
// protected the object (rbac.authorization.kubernetes.io/autoupdate=false)
// though it lacks what the API server's defaults give it.
func reconcileJob(kind string, obj named, run func() (reconciliation.ReconcileOperation, bool, error)) func(context.Context) error {
	return func(ctx context.Context) error {
		name := klog.KRef(obj.GetNamespace(), obj.GetName())
		op, protected, err := run()
		switch {
		case err != nil:
			return fmt.Errorf("reconcile %s %s: %w", kind, name, err)
		case op == reconciliation.ReconcileNone:
		case protected:
			klog.FromContext(ctx).Info("Left a protected bootstrap "+kind+" as it is, though it lacks what the API server's defaults give it", "name", name)
		default:
			klog.FromContext(ctx).V(2).Info("Bootstrapped "+kind, "name", name, "operation", op)
		}
		return nil
	}
}

// named is a role or binding of the reconciliation package.
type named interface {
	GetNamespace() string
	GetName() string
}

// bootstrapPriorityClasses creates the system priority classes
// (system-cluster-critical, system-node-critical) that are missing.
func bootstrapPriorityClasses(ctx context.Context, c kubernetes.Interface) error {
	api := c.SchedulingV1().PriorityClasses()
	for _, pc := range schedulingv1.SystemPriorityClasses() {
		_, err := api.Get(ctx, pc.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, pc, metav1.CreateOptions{})
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("priority class %s: %w", pc.Name, err)
		}
	}
	return nil
}
