package work

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// checkExecutor asks the spoke, with a SubjectAccessReview for each verb
// the update strategy needs on each object, whether the work's executor
// may apply it. The agent applies with its own identity; the executor
// only limits what a work may do. A work with any refusal is not applied
// at all.
func (r *reconciler) checkExecutor(ctx context.Context, s *scope) error {
	ex := s.work.Spec.Executor
	if ex == nil {
		return nil
	}
	sa := ex.Subject.ServiceAccount
	if ex.Subject.Type != workv1.ExecutorSubjectTypeServiceAccount || sa == nil {
		s.refused = fmt.Sprintf("executor subject type %q is not supported: use ServiceAccount with a serviceAccount", ex.Subject.Type)
		return nil
	}
	user := "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
	var refused []string
	for _, m := range s.manifests {
		if m.invalid != nil {
			continue
		}
		for _, verb := range strategyVerbs[m.strategy] {
			attrs := authorizationv1.ResourceAttributes{
				Verb: verb, Group: m.key.Group, Version: m.key.Version, Resource: m.key.Resource,
				Namespace: m.key.Namespace, Name: m.key.Name,
			}
			allowed, err := r.sar.allowed(ctx, r.spoke.kube, user, sa.Namespace, attrs)
			if err != nil {
				return fmt.Errorf("check the executor's access on the managed cluster: %w", err)
			}
			if !allowed {
				refused = append(refused, fmt.Sprintf("%s %s", verb, describe(m.key)))
			}
		}
	}
	if len(refused) > 0 {
		s.refused = fmt.Sprintf("executor %s is not allowed to %s", user, strings.Join(refused, ", "))
	}
	return nil
}

// strategyVerbs are the verbs each update strategy uses.
var strategyVerbs = map[workv1.UpdateStrategyType][]string{
	workv1.UpdateStrategyTypeUpdate:          {"get", "create", "update"},
	workv1.UpdateStrategyTypeServerSideApply: {"get", "create", "patch"},
	workv1.UpdateStrategyTypeCreateOnly:      {"get", "create"},
	workv1.UpdateStrategyTypeReadOnly:        {"get"},
}

// describe names an object for messages: deployments.apps "web" in namespace "prod".
func describe(k objectKey) string {
	gr := k.GroupResource().String()
	if k.Namespace == "" {
		return fmt.Sprintf("%s %q", gr, k.Name)
	}
	return fmt.Sprintf("%s %q in namespace %q", gr, k.Name, k.Namespace)
}

// accessCache remembers SubjectAccessReview answers: an allowance for five
// minutes, a refusal for one resync interval, so that a refused work
// notices a new RoleBinding soon and an allowed one costs few reviews.
type accessCache struct {
	refusedFor time.Duration
	mu         sync.Mutex
	answers    map[accessKey]accessAnswer
}

type accessKey struct {
	user  string
	attrs authorizationv1.ResourceAttributes
}

type accessAnswer struct {
	allowed bool
	until   time.Time
}

// allowedFor is how long an allowance is remembered.
const allowedFor = 5 * time.Minute

func newAccessCache(refusedFor time.Duration) *accessCache {
	return &accessCache{refusedFor: refusedFor, answers: map[accessKey]accessAnswer{}}
}

// allowed asks whether service account user of namespace ns may do attrs.
func (c *accessCache) allowed(ctx context.Context, kube kubernetes.Interface, user, ns string, attrs authorizationv1.ResourceAttributes) (bool, error) {
	key := accessKey{user: user, attrs: attrs}
	now := time.Now()
	c.mu.Lock()
	a, ok := c.answers[key]
	c.mu.Unlock()
	if ok && now.Before(a.until) {
		return a.allowed, nil
	}
	review, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &attrs,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	a = accessAnswer{allowed: review.Status.Allowed, until: now.Add(c.refusedFor)}
	if a.allowed {
		a.until = now.Add(allowedFor)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answers) > 10000 {
		clear(c.answers)
	}
	c.answers[key] = a
	return a.allowed, nil
}
