package handshake

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
)

// tokenSecret is the Secret newTokenSecret makes, as the API server returns it.
func tokenSecret(id string, expires time.Time) corev1.Secret {
	s := newTokenSecret(BootstrapToken{ID: id, Secret: "0123456789abcdef", Expires: expires})
	s.Data = map[string][]byte{}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	return *s
}

func TestPickToken(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	margin := time.Hour
	withData := func(s corev1.Secret, key, value string) corev1.Secret {
		s.Data[key] = []byte(value)
		return s
	}
	deleting := tokenSecret("dddddd", now.Add(48*time.Hour))
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	tests := []struct {
		name    string
		secrets []corev1.Secret
		wantID  string // empty: none
	}{
		{name: "none"},
		{name: "a valid token", secrets: []corev1.Secret{tokenSecret("aaaaaa", now.Add(24*time.Hour))}, wantID: "aaaaaa"},
		{name: "the one that lives longest", secrets: []corev1.Secret{
			tokenSecret("aaaaaa", now.Add(2*time.Hour)), tokenSecret("bbbbbb", now.Add(20*time.Hour)), tokenSecret("cccccc", now.Add(3*time.Hour)),
		}, wantID: "bbbbbb"},
		{name: "expired", secrets: []corev1.Secret{tokenSecret("aaaaaa", now.Add(-time.Minute))}},
		{name: "expiring within the margin", secrets: []corev1.Secret{tokenSecret("aaaaaa", now.Add(margin-time.Second))}},
		{name: "being deleted", secrets: []corev1.Secret{deleting}},
		{name: "not for authentication", secrets: []corev1.Secret{withData(tokenSecret("aaaaaa", now.Add(24*time.Hour)), bootstrapapi.BootstrapTokenUsageAuthentication, "false")}},
		{name: "another group", secrets: []corev1.Secret{withData(tokenSecret("aaaaaa", now.Add(24*time.Hour)), bootstrapapi.BootstrapTokenExtraGroupsKey, "system:bootstrappers:kubeadm:default-node-token")}},
		{name: "among several groups", secrets: []corev1.Secret{withData(tokenSecret("aaaaaa", now.Add(24*time.Hour)), bootstrapapi.BootstrapTokenExtraGroupsKey, "system:bootstrappers:x,"+BootstrapGroup)}, wantID: "aaaaaa"},
		{name: "no expiration", secrets: []corev1.Secret{withData(tokenSecret("aaaaaa", now.Add(24*time.Hour)), bootstrapapi.BootstrapTokenExpirationKey, "")}},
		{name: "a name that does not match the id", secrets: []corev1.Secret{withData(tokenSecret("aaaaaa", now.Add(24*time.Hour)), bootstrapapi.BootstrapTokenIDKey, "bbbbbb")}},
		{name: "a malformed secret", secrets: []corev1.Secret{withData(tokenSecret("aaaaaa", now.Add(24*time.Hour)), bootstrapapi.BootstrapTokenSecretKey, "short")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pickToken(tt.secrets, now, margin)
			if tt.wantID == "" {
				if ok {
					t.Fatalf("picked %s, want none", got.ID)
				}
				return
			}
			if !ok || got.ID != tt.wantID {
				t.Fatalf("picked %q (found %t), want %s", got.ID, ok, tt.wantID)
			}
		})
	}
}

func TestReuseMargin(t *testing.T) {
	for ttl, want := range map[time.Duration]time.Duration{
		24 * time.Hour:   time.Hour,
		time.Hour:        30 * time.Minute,
		10 * time.Minute: 5 * time.Minute,
	} {
		if got := reuseMargin(ttl); got != want {
			t.Errorf("reuseMargin(%s) = %s, want %s", ttl, got, want)
		}
	}
}

func TestNewTokenSecret(t *testing.T) {
	expires := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := newTokenSecret(BootstrapToken{ID: "abcdef", Secret: "0123456789abcdef", Expires: expires})
	if s.Name != "bootstrap-token-abcdef" || s.Namespace != "kube-system" || s.Type != bootstrapapi.SecretTypeBootstrapToken {
		t.Fatalf("secret %s/%s of type %s", s.Namespace, s.Name, s.Type)
	}
	// clusteradm get token --use-bootstrap-token finds tokens by this label.
	if s.Labels["app"] != "cluster-manager" || s.Labels["app.kubernetes.io/managed-by"] != "flotilla" {
		t.Errorf("labels %v, want app=cluster-manager and app.kubernetes.io/managed-by=flotilla", s.Labels)
	}
	for key, want := range map[string]string{
		"token-id":                       "abcdef",
		"token-secret":                   "0123456789abcdef",
		"usage-bootstrap-authentication": "true",
		"usage-bootstrap-signing":        "true",
		"auth-extra-groups":              "system:bootstrappers:managedcluster",
		"expiration":                     "2030-01-02T03:04:05Z",
	} {
		if got := s.StringData[key]; got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
}

func TestParseToken(t *testing.T) {
	tests := []struct {
		token string
		ok    bool
	}{
		{"abcdef.0123456789abcdef", true},
		{"", false},
		{"abcdef", false},
		{"ABCDEF.0123456789abcdef", false},
		{"abcdef.0123456789abcde", false},
		{"abcdef:0123456789abcdef", false},
		{"eyJhbGciOiJSUzI1NiJ9.e30.sig", false},
	}
	for _, tt := range tests {
		tok, err := ParseToken(tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("parseToken(%q): err = %v, want ok=%t", tt.token, err, tt.ok)
		}
		if tt.ok && tok.String() != tt.token {
			t.Errorf("parseToken(%q).String() = %q", tt.token, tok.String())
		}
	}
}
