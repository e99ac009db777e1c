package addon

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{DeployWorkName("hello", 0), "addon-hello-deploy-0"},
		{DeployWorkName("hello", 12), "addon-hello-deploy-12"},
		{PreDeleteWorkName("hello"), "addon-hello-pre-delete"},
		{AgentUser("c1", "hello", "hello-agent"), "system:open-cluster-management:cluster:c1:addon:hello:agent:hello-agent"},
		{CustomSignerSecretName("hello", "example.com/signer"), "hello-example.com-signer-client-cert"},
		{ConfigKey(Group, ConfigResourceDeploymentConfigs, "ns", "cfg"), "addondeploymentconfigs.addon.open-cluster-management.io/ns/cfg"},
		{ConfigKey("", "configmaps", "", "x"), "configmaps//x"},
		{FeatureLabel("hello"), "feature.open-cluster-management.io/addon-hello"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if g := AgentGroups("c1", "hello"); len(g) != 2 || g[0] != "system:open-cluster-management:cluster:c1:addon:hello" || g[1] != "system:open-cluster-management:addon:hello" {
		t.Errorf("AgentGroups = %v", g)
	}
}

func TestSpecHashDropsObjectFieldsAndSortsKeys(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "AddOnDeploymentConfig",
		"metadata": map[string]any{"name": "x", "generation": int64(3)}, "status": map[string]any{"a": "b"},
		"spec": map[string]any{"zeta": "<1>", "alpha": []any{"x"}},
	}
	got, err := SpecHash(obj)
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json escapes < and > in HTML mode, as OCM's hash does.
	sum := sha256.Sum256([]byte(`{"spec":{"alpha":["x"],"zeta":"\u003c1\u003e"}}`))
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("SpecHash = %s, want %s", got, want)
	}
	obj["metadata"] = map[string]any{"name": "other"}
	if again, _ := SpecHash(obj); again != got {
		t.Error("the hash depends on metadata")
	}
}
