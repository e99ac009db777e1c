package addon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
)

// SpecHash is the spec hash of a config as OCM computes it, so that hub
// managers built on OCM's framework and ours agree: the object as served
// (unstructured content), less apiVersion, kind, metadata and status,
// marshalled by encoding/json (sorted keys, HTML escaping on), SHA-256,
// lower-case hex.
func SpecHash(obj map[string]any) (string, error) {
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		rest[k] = v
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return "", fmt.Errorf("spec hash: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// ConfigHashes is what ConfigSpecHashAnnotation holds for an add-on's
// config references: each desired config's ConfigKey and its spec hash.
// References without a desired config are left out.
func ConfigHashes(refs []addonv1alpha1.ConfigReference) map[string]string {
	m := map[string]string{}
	for _, r := range refs {
		if r.DesiredConfig != nil {
			m[ConfigKey(r.Group, r.Resource, r.DesiredConfig.Namespace, r.DesiredConfig.Name)] = r.DesiredConfig.SpecHash
		}
	}
	return m
}
