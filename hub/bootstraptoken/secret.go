package bootstraptoken

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// description is shown by `kubeadm token list` and the like.
const description = "Flotilla join token: lets managed clusters register with this hub (flotilla join)"

// Secret returns the Secret that makes <id>.<secret> a bootstrap token in
// Group until expires. It is allowed to sign cluster-info too, so that join
// can verify the hub's CA with the token alone.
func Secret(id, secret string, expires time.Time) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      bootstraputil.BootstrapTokenSecretName(id),
			Namespace: metav1.NamespaceSystem,
			Labels:    map[string]string{ManagedByLabel: ManagedByValue, AppLabel: AppValue},
		},
		Type: bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           secret,
			bootstrapapi.BootstrapTokenDescriptionKey:      description,
			bootstrapapi.BootstrapTokenExpirationKey:       expires.UTC().Format(time.RFC3339),
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      Group,
		},
	}
}

// Expiration returns when the token of a bootstrap token Secret expires,
// and false when it names no valid expiration.
func Expiration(s *corev1.Secret) (time.Time, bool) {
	raw, ok := s.Data[bootstrapapi.BootstrapTokenExpirationKey]
	if !ok {
		raw = []byte(s.StringData[bootstrapapi.BootstrapTokenExpirationKey])
	}
	t, err := time.Parse(time.RFC3339, string(raw))
	return t, err == nil
}
