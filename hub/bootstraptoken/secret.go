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

// ClusterSecret returns the Secret that makes <id>.<secret> a join token
// for cluster c alone, until expires or its first accepted join: it is in
// Group, as every join token, and in ClusterGroup(c), which the hub's
// admission and flotilla accept hold to c.
func ClusterSecret(id, secret string, expires time.Time, c string) *corev1.Secret {
	s := Secret(id, secret, expires)
	s.Labels[ClusterLabel] = c
	s.StringData[bootstrapapi.BootstrapTokenDescriptionKey] = "Flotilla join token for cluster " + c + " alone, once (flotilla join --cluster-name " + c + ")"
	s.StringData[bootstrapapi.BootstrapTokenExtraGroupsKey] = Group + "," + ClusterGroup(c)
	return s
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
