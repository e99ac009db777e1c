package bootstraptoken

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// key is the one request of the rotation controller: it reconciles the
// hub's tokens as a whole.
var key = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kube-system", Name: "bootstrap-tokens"}}

// Reconciler keeps a valid bootstrap token that the hub rotates itself.
type Reconciler struct {
	// Reader lists the hub's token Secrets. It reads from the API server:
	// a cache could still miss the token just created, and one more would
	// be made.
	Reader client.Reader
	// Writer creates and deletes them.
	Writer client.Writer
	// Clock tells the time; tests give a fake one.
	Clock clock.PassiveClock
	// Rotation is the lifetime and overlap.
	Rotation Rotation
}

// Setup adds the rotation controller to mgr. It watches, through a cache of
// its own, the token Secrets the hub created (and no other Secret). A zero lifetime adds
// nothing.
func Setup(mgr manager.Manager, r Rotation) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Lifetime == 0 {
		return nil
	}
	secrets, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{key.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{RotationLabel: RotationValue})},
		},
	})
	if err != nil {
		return fmt.Errorf("bootstrap token cache: %w", err)
	}
	if err := mgr.Add(secrets); err != nil {
		return err
	}
	rec := &Reconciler{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Clock: clock.RealClock{}, Rotation: r}
	always := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{key}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("bootstraptoken").
		WatchesRawSource(source.Kind(secrets, client.Object(&corev1.Secret{}), always)).
		// Deleting the bootstrap ClusterRole closes the join path; init
		// puts it back.
		Watches(&rbacv1.ClusterRole{}, always, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == ClusterRoleName
		}))).
		// A hub without tokens has no Secret event to start from.
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(key)
			return nil
		})).
		Complete(rec)
}

// Reconcile creates a token when the newest has no more than the overlap
// left, deletes the hub's expired tokens, and wakes up at the next change.
// While the join path is closed it creates none: a token would hand out a
// join that fails.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	logger := klog.FromContext(ctx)
	open, err := JoinPathOpen(ctx, r.Reader)
	if err != nil {
		return ctrl.Result{}, err
	}
	list := &corev1.SecretList{}
	if err := r.Reader.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{RotationLabel: RotationValue}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list bootstrap tokens: %w", err)
	}
	var tokens []token
	for i := range list.Items {
		s := &list.Items[i]
		if s.DeletionTimestamp != nil {
			continue
		}
		exp, ok := Expiration(s)
		if !ok {
			// Not a token the hub could have written: expire it now.
			exp = r.Clock.Now()
		}
		tokens = append(tokens, token{name: s.Name, expires: exp})
	}
	now := r.Clock.Now()
	p := r.Rotation.decide(now, tokens)
	if !open {
		p = decideClosed(now, tokens)
		logger.Info("Creating no bootstrap token", "reason", ClosedMessage)
	}
	var errs []error
	for _, name := range p.remove {
		s := &corev1.Secret{}
		s.Namespace, s.Name = key.Namespace, name
		if err := r.Writer.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete expired bootstrap token %s: %w", name, err))
			continue
		}
		logger.Info("Deleted expired bootstrap token", "secret", klog.KObj(s))
	}
	if !p.create.IsZero() {
		s, err := r.create(ctx, p)
		if err != nil {
			errs = append(errs, err)
		} else {
			logger.Info("Created bootstrap token", "secret", klog.KObj(s), "expires", p.create.UTC())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: p.wake}, nil
}

func (r *Reconciler) create(ctx context.Context, p plan) (*corev1.Secret, error) {
	for {
		raw, err := bootstraputil.GenerateBootstrapToken()
		if err != nil {
			return nil, err
		}
		id, secret, _ := strings.Cut(raw, ".")
		s := Secret(id, secret, p.create.Truncate(time.Second))
		s.Labels[RotationLabel] = RotationValue
		err = r.Writer.Create(ctx, s)
		if apierrors.IsAlreadyExists(err) {
			continue // the id is taken: draw again
		}
		if err != nil {
			return nil, fmt.Errorf("create bootstrap token %s: %w", s.Name, err)
		}
		return s, nil
	}
}
