package handshake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
)

// Names of the bootstrap credential (contract, Registration step 1).
const (
	// BootstrapGroup is the extra group of join tokens; the bootstrap
	// ClusterRole is bound to it.
	BootstrapGroup = bootstraptoken.Group
	// bootstrapServiceAccount is the other bootstrap identity OCM hubs use
	// (clusteradm's cluster-bootstrap service account); the hub serves
	// OCM's newer one, bootstraptoken.ServiceAccountUser.
	bootstrapServiceAccount = "system:serviceaccount:open-cluster-management:cluster-bootstrap"
	// ManagedByLabel marks what flotilla created, so that init reuses only
	// its own tokens (and the hub's) and unjoin removes only its own objects.
	ManagedByLabel = bootstraptoken.ManagedByLabel
	ManagedByValue = bootstraptoken.ManagedByValue
	// maxReuseMargin: a token is handed out again only while it stays valid
	// at least this long (or half the requested TTL, if less).
	maxReuseMargin = time.Hour
)

// BootstrapToken is a join token, <id>.<secret>.
type BootstrapToken struct {
	ID      string
	Secret  string
	Expires time.Time
}

// String returns the bearer token.
func (t BootstrapToken) String() string { return bootstraputil.TokenFromIDAndSecret(t.ID, t.Secret) }

// ParseToken splits and checks a bearer token given on the command line.
func ParseToken(s string) (BootstrapToken, error) {
	if s == "" {
		return BootstrapToken{}, fmt.Errorf("--hub-token is required: get one by running `flotilla get token` on the hub")
	}
	if !bootstraputil.IsValidBootstrapToken(s) {
		return BootstrapToken{}, fmt.Errorf("--hub-token does not have the form of a join token (6 and 16 lowercase letters or digits, joined by a dot, e.g. abcdef.0123456789abcdef): copy it from `flotilla get token` on the hub")
	}
	id, secret, _ := strings.Cut(s, ".")
	return BootstrapToken{ID: id, Secret: secret}, nil
}

// tokenFromSecret reads a join token from a bootstrap token Secret; it
// fails for Secrets that are not valid flotilla join tokens.
func tokenFromSecret(s *corev1.Secret) (BootstrapToken, error) {
	if s.Type != bootstrapapi.SecretTypeBootstrapToken {
		return BootstrapToken{}, fmt.Errorf("type %q is not %q", s.Type, bootstrapapi.SecretTypeBootstrapToken)
	}
	get := func(key string) string { return string(s.Data[key]) }
	t := BootstrapToken{ID: get(bootstrapapi.BootstrapTokenIDKey), Secret: get(bootstrapapi.BootstrapTokenSecretKey)}
	if s.Name != bootstraputil.BootstrapTokenSecretName(t.ID) || !bootstraputil.IsValidBootstrapToken(t.String()) {
		return BootstrapToken{}, fmt.Errorf("malformed token id or secret")
	}
	if get(bootstrapapi.BootstrapTokenUsageAuthentication) != "true" {
		return BootstrapToken{}, fmt.Errorf("not usable for authentication")
	}
	if !slices.Contains(strings.Split(get(bootstrapapi.BootstrapTokenExtraGroupsKey), ","), BootstrapGroup) {
		return BootstrapToken{}, fmt.Errorf("not in group %s", BootstrapGroup)
	}
	exp, err := time.Parse(time.RFC3339, get(bootstrapapi.BootstrapTokenExpirationKey))
	if err != nil {
		return BootstrapToken{}, fmt.Errorf("no valid expiration: %w", err)
	}
	t.Expires = exp
	return t, nil
}

// reuseMargin is how long a token must stay valid to be handed out again.
func reuseMargin(ttl time.Duration) time.Duration {
	return min(ttl/2, maxReuseMargin)
}

// pickToken returns, among the given Secrets, the valid join token for
// any cluster that expires last, provided it stays valid at least margin
// past now.
func pickToken(secrets []corev1.Secret, now time.Time, margin time.Duration) (BootstrapToken, bool) {
	return pickTokenFor(secrets, now, margin, "")
}

// pickTokenFor is pickToken for the tokens of one cluster, unused, or
// those for any cluster when cluster is "".
func pickTokenFor(secrets []corev1.Secret, now time.Time, margin time.Duration, cluster string) (BootstrapToken, bool) {
	var best BootstrapToken
	found := false
	for i := range secrets {
		if secrets[i].DeletionTimestamp != nil || secrets[i].Labels[bootstraptoken.ClusterLabel] != cluster ||
			secrets[i].Annotations[bootstraptoken.UsedByAnnotation] != "" {
			continue
		}
		t, err := tokenFromSecret(&secrets[i])
		if err != nil || t.Expires.Before(now.Add(margin)) {
			continue
		}
		if !found || t.Expires.After(best.Expires) {
			best, found = t, true
		}
	}
	return best, found
}

// newTokenSecret returns the Secret that makes t a join token, labelled
// as the hub labels its own (app=cluster-manager, which clusteradm reads).
func newTokenSecret(t BootstrapToken) *corev1.Secret {
	return bootstraptoken.Secret(t.ID, t.Secret, t.Expires)
}

// newClusterTokenSecret returns the Secret that makes t a join token for
// cluster alone, once.
func newClusterTokenSecret(t BootstrapToken, cluster string) *corev1.Secret {
	if cluster == "" {
		return newTokenSecret(t)
	}
	return bootstraptoken.ClusterSecret(t.ID, t.Secret, t.Expires, cluster)
}

// EnsureToken returns a join token valid for a while yet, creating one that
// lives ttl when there is none or when fresh is set.
func EnsureToken(ctx context.Context, c *cmdutil.Clients, ttl time.Duration, fresh bool) (t BootstrapToken, created bool, err error) {
	return EnsureTokenFor(ctx, c, ttl, fresh, "")
}

// EnsureTokenFor is EnsureToken for a token that joins cluster alone, once
// (any cluster, any number of times, when cluster is "").
func EnsureTokenFor(ctx context.Context, c *cmdutil.Clients, ttl time.Duration, fresh bool, cluster string) (t BootstrapToken, created bool, err error) {
	now := time.Now()
	if !fresh {
		list, err := c.Kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
			LabelSelector: labels.Set{ManagedByLabel: ManagedByValue}.String(),
		})
		if err != nil {
			return t, false, cmdutil.Explain(err, c.Where, "list the join tokens in namespace kube-system")
		}
		if t, ok := pickTokenFor(list.Items, now, reuseMargin(ttl), cluster); ok {
			return t, false, nil
		}
	}
	t, err = createToken(ctx, c.Kube, now.Add(ttl), cluster)
	if err != nil {
		return t, false, cmdutil.Explain(err, c.Where, "create a join token in namespace kube-system")
	}
	if err := waitTokenAccepted(ctx, c, t); err != nil {
		return t, false, err
	}
	return t, true, nil
}

// tokenPropagation bounds the wait for the API server to learn a new token.
const tokenPropagation = 30 * time.Second

// waitTokenAccepted waits until the hub authenticates a new token: its
// authenticator reads token Secrets from a cache, and a join that runs
// right after init must not be told the token is wrong.
func waitTokenAccepted(ctx context.Context, c *cmdutil.Clients, t BootstrapToken) error {
	cfg := rest.AnonymousClientConfig(c.Config)
	cfg.BearerToken = t.String()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, tokenPropagation, true, func(ctx context.Context) (bool, error) {
		_, last = kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not accept the new join token %s within %s (last answer: %v): is bootstrap-token authentication on (--enable-bootstrap-token-auth)?", c.Where, t.ID, tokenPropagation, last)
	}
	return nil
}

func createToken(ctx context.Context, kube kubernetes.Interface, expires time.Time, cluster string) (BootstrapToken, error) {
	for {
		s, err := bootstraputil.GenerateBootstrapToken()
		if err != nil {
			return BootstrapToken{}, err
		}
		t, _ := ParseToken(s)
		t.Expires = expires.Truncate(time.Second)
		_, err = kube.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, newClusterTokenSecret(t, cluster), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue // the id is taken: draw again
		}
		return t, err
	}
}
